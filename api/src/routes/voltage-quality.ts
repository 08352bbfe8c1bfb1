/** Voltage quality per phase against the user's bands and EN 50160 (docs/api.md §Telemetry). */
import { DEFAULT_LIMITS, IdParamsSchema, RangeQuerySchema, VoltageQualitySchema } from '@kilowatch/core';
import { deviceContext, parseRange } from '../analytics/context.ts';
import { voltageQuality } from '../analytics/quality.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const voltageQualityRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/devices/:id/voltage-quality',
    {
      schema: {
        summary: 'Share of 10-minute mean voltages inside the warning, critical and EN 50160 bands',
        tags: ['telemetry'],
        security: [{ bearer: [] }],
        params: request(IdParamsSchema),
        querystring: request(RangeQuerySchema),
        response: {
          200: response(VoltageQualitySchema),
          400: errorResponse,
          401: errorResponse,
          404: errorResponse,
        },
      },
    },
    async (req) => {
      const { id } = req.params;
      const q = req.query;
      const ctx = await deviceContext(app, req.session.userId, id);
      const limits = (await app.devices.limits(req.session.userId, id)) ?? DEFAULT_LIMITS;
      return voltageQuality(app.store, ctx, parseRange(q.from, q.to), limits);
    },
  );
};

export default voltageQualityRoutes;
