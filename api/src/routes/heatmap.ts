/** Heatmaps of energy or gauge parameters (docs/api.md §Telemetry). */
import { HeatmapQuerySchema, HeatmapSchema, IdParamsSchema } from '@kilowatch/core';
import { deviceContext, parseRange } from '../analytics/context.ts';
import { heatmapFor } from '../analytics/heatmap.ts';
import { tidyAnswers } from '../analytics/tidy.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const heatmapRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  tidyAnswers(app);

  app.get(
    '/devices/:id/heatmap',
    {
      schema: {
        summary: 'Daily, weekly, monthly or yearly heatmap rows (the shape @nivo/heatmap takes)',
        tags: ['telemetry'],
        security: [{ bearer: [] }],
        params: request(IdParamsSchema),
        querystring: request(HeatmapQuerySchema),
        response: {
          200: response(HeatmapSchema),
          400: errorResponse,
          401: errorResponse,
          404: errorResponse,
        },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const q = req.query;
      const ctx = await deviceContext(app, req.session.userId, id);
      // Written by JSON.stringify: the schema's serializer tells a cell's string `x` from a number one
      // with a validator per cell, compiled at the first answer (~0.1 s of the event loop for a yearly
      // calendar of eleven years). The answer is built here, in the schema's shape.
      reply.serializer((answer: unknown) => JSON.stringify(answer));
      return heatmapFor(app.store, ctx, q.param, q.kind, parseRange(q.from, q.to), q.source);
    },
  );
};

export default heatmapRoutes;
