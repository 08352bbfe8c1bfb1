/** Energy per bucket and the energy summary of a device (docs/api.md §Telemetry, docs/domain.md §Energy, §Balance). */
import { EnergyQuerySchema, EnergySeriesSchema, EnergySummarySchema, IdParamsSchema } from '@kilowatch/core';
import { deviceContext, parseRange } from '../analytics/context.ts';
import { energySeries, energySummary } from '../analytics/energy.ts';
import { tidyAnswers } from '../analytics/tidy.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['telemetry'];
const security = [{ bearer: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };

const energyRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  tidyAnswers(app);

  app.get(
    '/devices/:id/energy/summary',
    {
      schema: {
        summary: 'Energy today, this month, this year, this billing period, and the meter totals',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 200: response(EnergySummarySchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const ctx = await deviceContext(app, req.session.userId, id);
      const offsets = await app.devices.meterOffsets(ctx.device.id);
      const summary = await energySummary(app.store, ctx, offsets, app.clock.now());
      return app.historyLoading(ctx.deviceKey) ? { ...summary, historyLoading: true } : summary;
    },
  );

  app.get(
    '/devices/:id/energy',
    {
      schema: {
        summary: 'Import, export and hourly-netted balance per bucket',
        tags,
        security,
        params: request(IdParamsSchema),
        querystring: request(EnergyQuerySchema),
        response: { 200: response(EnergySeriesSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const q = req.query;
      const ctx = await deviceContext(app, req.session.userId, id);
      const answer = await energySeries(app.store, ctx, parseRange(q.from, q.to), q.interval, q.source);
      return { ...answer, unit: 'kWh' as const };
    },
  );
};

export default energyRoutes;
