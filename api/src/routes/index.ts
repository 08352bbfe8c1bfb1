/**
 * Every route plugin under /api, in one list. The analytics routes (series, energy, heatmaps, readings,
 * comparisons, exports, notifications, tariff stats) join this list as their own plugins.
 */
import type { FastifyPluginAsync } from 'fastify';
import accountRoutes from './account.ts';
import analyticsRoutes from './analytics.ts';
import apiKeyRoutes from './api-keys.ts';
import comparisonRoutes from './comparisons.ts';
import deviceRoutes from './devices.ts';
import energyRoutes from './energy.ts';
import exportRoutes from './exports.ts';
import flowRoutes from './flows.ts';
import healthRoutes from './health.ts';
import heatmapRoutes from './heatmap.ts';
import importRoutes from './imports.ts';
import locationRoutes from './locations.ts';
import notificationRoutes from './notifications.ts';
import type { RouteOptions } from './options.ts';
import priceRoutes from './prices.ts';
import readingsRoutes from './readings.ts';
import seriesRoutes from './series.ts';
import settlementRoutes from './settlement.ts';
import tariffStatsRoutes from './tariff-stats.ts';
import voltageQualityRoutes from './voltage-quality.ts';

export const apiRoutes: readonly FastifyPluginAsync<RouteOptions>[] = [
  healthRoutes,
  accountRoutes,
  apiKeyRoutes,
  deviceRoutes,
  locationRoutes,
  flowRoutes,
  priceRoutes,
  settlementRoutes,
  seriesRoutes,
  energyRoutes,
  heatmapRoutes,
  readingsRoutes,
  voltageQualityRoutes,
  analyticsRoutes,
  comparisonRoutes,
  tariffStatsRoutes,
  notificationRoutes,
  exportRoutes,
  importRoutes,
];
