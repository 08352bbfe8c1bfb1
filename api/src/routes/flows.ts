/** A location's energy flows (docs/api.md §Energy flows). */
import { FlowsQuerySchema, FlowsSchema, IdParamsSchema } from '@kilowatch/core';
import { parseRange } from '../analytics/context.ts';
import { locationFlows } from '../analytics/flows.ts';
import { tidyAnswers } from '../analytics/tidy.ts';
import { NotFoundError } from '../errors.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const flowRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  tidyAnswers(app);

  app.get(
    '/locations/:id/flows',
    {
      schema: {
        summary: "Where a location's energy came from and went, per interval, with its import cost",
        tags: ['locations'],
        security: [{ bearer: [] }],
        params: request(IdParamsSchema),
        querystring: request(FlowsQuerySchema),
        response: { 200: response(FlowsSchema), 400: errorResponse, 401: errorResponse, 404: errorResponse },
      },
    },
    async (req) => {
      const userId = req.session.userId;
      const { id } = req.params;
      const location = await app.locations.get(userId, id);
      if (!location) throw new NotFoundError();
      const range = parseRange(req.query.from, req.query.to);
      const devices = (await app.devices.list(userId)).filter((d) => d.location?.id === location.id);
      const tariff =
        location.tariffId === null ? null : await app.locations.getTariff(userId, location.tariffId);
      // From an hour before: an hourly price covers the range's first quarters.
      const prices = await app.prices.list(location.id, range.from - 3_600_000, range.to + 3_600_000);
      return locationFlows({
        store: app.store,
        locationId: location.id,
        tz: location.timezone,
        devices,
        range,
        interval: req.query.interval,
        tariff,
        prices,
      });
    },
  );
};

export default flowRoutes;
