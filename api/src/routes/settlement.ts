/** A location's prosumer settlement per billing period (docs/api.md §Prosumer settlement). */
import { IdParamsSchema, MESSAGES, SettlementQuerySchema, SettlementSchema } from '@kilowatch/core';
import { parseRange } from '../analytics/context.ts';
import { locationSettlement } from '../analytics/settlement.ts';
import { tidyAnswers } from '../analytics/tidy.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const settlementRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  tidyAnswers(app);

  app.get(
    '/locations/:id/settlement',
    {
      schema: {
        summary: "A location's prosumer settlement per billing period: credit earned, drawn, left, lapsing",
        tags: ['locations'],
        security: [{ bearer: [] }],
        params: request(IdParamsSchema),
        querystring: request(SettlementQuerySchema),
        response: {
          200: response(SettlementSchema),
          400: errorResponse,
          401: errorResponse,
          404: errorResponse,
          409: errorResponse,
        },
      },
    },
    async (req) => {
      const userId = req.session.userId;
      const location = await app.locations.get(userId, req.params.id);
      if (!location) throw new NotFoundError();
      const range = parseRange(req.query.from, req.query.to);
      const { scheme, since } = location.settlement;
      if (scheme === 'none' || since === null) throw new ConflictError(MESSAGES.noSettlement);
      const grid = (await app.devices.list(userId)).find(
        (d) => d.location?.id === location.id && d.role === 'grid',
      );
      if (!grid) throw new ConflictError(MESSAGES.settlementNeedsGrid);
      const tariff =
        location.tariffId === null ? null : await app.locations.getTariff(userId, location.tariffId);
      const sinceTs = Date.parse(`${since}T00:00:00Z`) - 86_400_000;
      const prices =
        scheme === 'net-billing'
          ? await app.prices.list(location.id, sinceTs, range.to + 800 * 86_400_000)
          : [];
      return locationSettlement({
        store: app.store,
        location,
        grid,
        tariff,
        prices,
        range,
        rules: app.config.settlement,
      });
    },
  );
};

export default settlementRoutes;
