/**
 * Every route plugin under /api, in one list. The analytics routes (series, energy, heatmaps, readings,
 * comparisons, exports, notifications, tariff stats) join this list as their own plugins.
 */
import type { FastifyPluginAsync } from 'fastify';
import accountRoutes from './account.ts';
import deviceRoutes from './devices.ts';
import healthRoutes from './health.ts';
import locationRoutes from './locations.ts';
import type { RouteOptions } from './options.ts';

export const apiRoutes: readonly FastifyPluginAsync<RouteOptions>[] = [
  healthRoutes,
  accountRoutes,
  deviceRoutes,
  locationRoutes,
];
