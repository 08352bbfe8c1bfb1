/** The data log: raw readings paged by cursor, timestamps as UTC `YYYY-MM-DD HH:mm:ss` (docs/api.md §Telemetry). */
import {
  formatUtcTimestamp,
  IdParamsSchema,
  isStoredParam,
  MESSAGES,
  ReadingsPageSchema,
  ReadingsQuerySchema,
} from '@kilowatch/core';
import { StoreError } from '@kilowatch/tsdb';
import { deviceContext, parseRange } from '../analytics/context.ts';
import { ValidationError } from '../errors.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const readingsRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/devices/:id/readings',
    {
      schema: {
        summary: 'Data log: raw readings in time order, paged by cursor',
        tags: ['telemetry'],
        security: [{ bearer: [] }],
        params: request(IdParamsSchema),
        querystring: request(ReadingsQuerySchema),
        response: {
          200: response(ReadingsPageSchema),
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
      const range = parseRange(q.from, q.to);
      if (q.params && !q.params.every(isStoredParam)) {
        throw new ValidationError({ params: [MESSAGES.selectParameter] }, MESSAGES.selectParameter);
      }
      try {
        const page = await app.store.readRaw({
          deviceKey: ctx.deviceKey,
          ...range,
          ...(q.params ? { params: q.params } : {}),
          cursor: q.cursor ?? null,
          limit: q.limit,
        });
        return {
          items: page.items.map((r) => ({ ts: formatUtcTimestamp(r.ts), values: r.values })),
          nextCursor: page.nextCursor,
        };
      } catch (err) {
        // A cursor the store cannot read is the client's mistake, not a server failure.
        if (err instanceof StoreError && err.kind === 'rejected') {
          throw new ValidationError({ cursor: [MESSAGES.malformed] }, MESSAGES.malformed);
        }
        throw err;
      }
    },
  );
};

export default readingsRoutes;
