/** A location's price series (docs/api.md §Price series). */
import {
  duplicatePriceStarts,
  IdParamsSchema,
  MAX_LOCATION_PRICES,
  MAX_PRICE_ROWS,
  MESSAGES,
  type PriceRow,
  PricesQuerySchema,
  PricesRequestSchema,
  PricesSchema,
  parsePriceCsv,
} from '@kilowatch/core';
import * as v from 'valibot';
import { parseRange, rangeTooLong } from '../analytics/context.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { errorResponse, fieldErrors, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['locations'];
const security = [{ bearer: [] }];
const params = request(IdParamsSchema);
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };
/** An upload's largest body: two years of quarter hours as JSON with room to spare. */
const PRICES_BODY_LIMIT = 8 * 1024 * 1024;
const QUARTER_MS = 15 * 60_000;

/** The rows of a JSON or CSV body, or a 400 naming every bad row. */
function rowsOf(body: unknown): PriceRow[] {
  if (typeof body === 'string') {
    const parsed = parsePriceCsv(body);
    if ('errors' in parsed) throw new ValidationError(parsed.errors);
    return parsed.rows;
  }
  const parsed = v.safeParse(PricesRequestSchema, body);
  if (!parsed.success) throw new ValidationError(fieldErrors(parsed.issues, PricesRequestSchema));
  return parsed.output.prices;
}

const priceRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  app.addContentTypeParser(
    'text/csv',
    { parseAs: 'string', bodyLimit: PRICES_BODY_LIMIT },
    (_req, body, done) => done(null, body),
  );

  async function ownLocation(userId: number, id: number) {
    const location = await app.locations.get(userId, id);
    if (!location) throw new NotFoundError();
    return location;
  }

  app.put(
    '/locations/:id/prices',
    {
      bodyLimit: PRICES_BODY_LIMIT,
      schema: {
        summary: 'Store prices per interval start (JSON `{prices:[{start, price}]}` or CSV `start,price`)',
        tags,
        security,
        params,
        response: {
          200: response(v.object({ stored: v.number(), held: v.number() })),
          409: errorResponse,
          ...errors,
        },
      },
    },
    async (req) => {
      const location = await ownLocation(req.session.userId, req.params.id);
      const rows = rowsOf(req.body);
      const twice = duplicatePriceStarts(rows);
      if (Object.keys(twice).length > 0) throw new ValidationError(twice);
      // Bounded per location: a new start counts, a replaced one does not.
      const held = await app.prices.count(location.id);
      if (held + rows.length > MAX_LOCATION_PRICES) {
        const first = rows.reduce((m, r) => Math.min(m, r.start), Number.POSITIVE_INFINITY);
        const last = rows.reduce((m, r) => Math.max(m, r.start), Number.NEGATIVE_INFINITY);
        const replaced = (await app.prices.list(location.id, first, last + 1)).length;
        if (held + rows.length - replaced > MAX_LOCATION_PRICES) throw new ConflictError(MESSAGES.pricesFull);
      }
      return { stored: rows.length, held: await app.prices.put(location.id, rows) };
    },
  );

  app.get(
    '/locations/:id/prices',
    {
      schema: {
        summary: 'Prices with starts in [from, to)',
        tags,
        security,
        params,
        querystring: request(PricesQuerySchema),
        response: { 200: response(PricesSchema), ...errors },
      },
    },
    async (req) => {
      const location = await ownLocation(req.session.userId, req.params.id);
      const range = parseRange(req.query.from, req.query.to);
      // At most an upload's worth of quarter hours in one answer.
      if ((range.to - range.from) / QUARTER_MS > MAX_PRICE_ROWS) throw rangeTooLong();
      const rows = await app.prices.list(location.id, range.from, range.to);
      return {
        locationId: location.id,
        prices: rows.map((r) => ({ start: new Date(r.start).toISOString(), price: r.price })),
      };
    },
  );

  app.delete(
    '/locations/:id/prices',
    {
      schema: {
        summary: 'Delete the prices with starts in [from, to)',
        tags,
        security,
        params,
        querystring: request(PricesQuerySchema),
        response: { 204: noContent, ...errors },
      },
    },
    async (req, reply) => {
      const location = await ownLocation(req.session.userId, req.params.id);
      const range = parseRange(req.query.from, req.query.to);
      await app.prices.remove(location.id, range.from, range.to);
      return reply.code(204).send();
    },
  );
};

export default priceRoutes;
