/** Chart series and the newest values of a device (docs/api.md §Telemetry). */
import { IdParamsSchema, LatestSchema, SeriesBlockSchema, SeriesQuerySchema } from '@kilowatch/core';
import { deviceContext, parseRange } from '../analytics/context.ts';
import { seriesFor } from '../analytics/series.ts';
import {
  errorResponse,
  longAnswersInTurns,
  numericColumnsSerializer,
  request,
  response,
  type TypedRoutes,
} from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['telemetry'];
const security = [{ bearer: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };

const seriesRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/devices/:id/series',
    {
      schema: {
        summary: 'Chart series: per-phase or summed parameters, min/avg/max, null for gaps',
        tags,
        security,
        params: request(IdParamsSchema),
        querystring: request(SeriesQuerySchema),
        response: { 200: response(SeriesBlockSchema), ...errors },
      },
      serializerCompiler: numericColumnsSerializer,
      preSerialization: longAnswersInTurns(null),
    },
    async (req) => {
      const { id } = req.params;
      const q = req.query;
      const ctx = await deviceContext(app, req.session.userId, id);
      const range = parseRange(q.from, q.to);
      return seriesFor(
        app.store,
        ctx,
        {
          ...range,
          params: q.params,
          ...(q.interval ? { interval: q.interval } : {}),
          ...(q.stats ? { stats: q.stats } : {}),
          ...(q.points !== undefined ? { points: q.points } : {}),
        },
        q.source,
      );
    },
  );

  app.get(
    '/devices/:id/latest',
    {
      schema: {
        summary: 'Newest value of every parameter the device reported',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 200: response(LatestSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const ctx = await deviceContext(app, req.session.userId, id);
      const latest = await app.store.latest(ctx.deviceKey);
      return latest ?? { ts: null, values: {} };
    },
  );
};

export default seriesRoutes;
