/**
 * Simulated tariff figures (docs/api.md §Locations and tariffs): energy and cost per zone per month for one
 * tariff, and every group priced on the same hourly energy, cheapest first.
 */
import {
  HOUR_MS,
  IdParamsSchema,
  isDynamicGroup,
  ROLLUP_STEP_MS,
  stepPrices,
  type Tariff,
  TariffComparisonSchema,
  type TariffGroup,
  TariffStatsQuerySchema,
  TariffStatsSchema,
} from '@kilowatch/core';
import { deviceContext, parseRange } from '../analytics/context.ts';
import type { FineEnergy } from '../analytics/energy.ts';
import { compareGroups, hourlyBilledEnergy, priceHours, pricesOf } from '../analytics/tariffs.ts';
import { tidyAnswers } from '../analytics/tidy.ts';
import { NotFoundError } from '../errors.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['tariffs'];
const security = [{ bearer: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };

const isoOf = (t: number) => new Date(t).toISOString();

const tariffStatsRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  tidyAnswers(app);

  /**
   * The location's price series on the energy's buckets; undefined when the location holds no price in the
   * range (the dynamic group is then left out of a comparison, not priced).
   */
  async function seriesFor(locationId: number, energy: FineEnergy): Promise<(number | null)[] | undefined> {
    const from = energy.t[0];
    if (from === undefined) return undefined;
    const step = ROLLUP_STEP_MS[energy.interval];
    const rows = await app.prices.list(locationId, from - HOUR_MS, energy.t[energy.t.length - 1]! + step);
    return rows.length === 0 ? undefined : stepPrices(energy.t, step, rows);
  }

  app.get(
    '/tariffs/compare',
    {
      schema: {
        summary: 'Every tariff group priced on the same hourly energy, cheapest first (simulated)',
        tags,
        security,
        querystring: request(TariffStatsQuerySchema),
        response: { 200: response(TariffComparisonSchema), ...errors },
      },
    },
    async (req) => {
      const q = req.query;
      const ctx = await deviceContext(app, req.session.userId, q.deviceId);
      const range = parseRange(q.from, q.to);
      const energy = await hourlyBilledEnergy(app.store, ctx, range);
      // The user's own tariffs of the device's location price their groups; the rest use reference prices.
      const own: Partial<Record<TariffGroup, Tariff>> = {};
      let currency = 'PLN';
      if (ctx.device.location) {
        for (const t of await app.locations.listTariffs(req.session.userId, ctx.device.location.id)) {
          own[t.group] = t;
          currency = t.currency;
        }
      }
      const series = ctx.device.location ? await seriesFor(ctx.device.location.id, energy) : undefined;
      const { groups, dynamic } = await compareGroups(energy, ctx.tz, own, series);
      return {
        deviceId: ctx.device.id,
        currency,
        tz: ctx.tz,
        simulated: true as const,
        energy: groups[0]?.energy ?? 0,
        groups,
        dynamic: { covered: dynamic.covered, unpriced: dynamic.unpriced.map(isoOf) },
      };
    },
  );

  app.get(
    '/tariffs/:id/stats',
    {
      schema: {
        summary: 'Energy and cost per zone and month for a tariff and a device (simulated)',
        tags,
        security,
        params: request(IdParamsSchema),
        querystring: request(TariffStatsQuerySchema),
        response: { 200: response(TariffStatsSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const q = req.query;
      const tariff = await app.locations.getTariff(req.session.userId, id);
      if (!tariff) throw new NotFoundError();
      const ctx = await deviceContext(app, req.session.userId, q.deviceId);
      const range = parseRange(q.from, q.to);
      const energy = await hourlyBilledEnergy(app.store, ctx, range);
      const series = isDynamicGroup(tariff.group) ? await seriesFor(tariff.locationId, energy) : undefined;
      const { months, unpriced } = await priceHours(energy, ctx.tz, {
        ...(series ? { series } : {}),
        group: tariff.group,
        operator: tariff.operator,
        schedule: tariff.schedule,
        clockBasis: tariff.clockBasis,
        prices: pricesOf(tariff),
        validFrom: tariff.validFrom,
        validTo: tariff.validTo,
      });
      return {
        tariffId: tariff.id,
        deviceId: ctx.device.id,
        group: tariff.group,
        currency: tariff.currency,
        tz: ctx.tz,
        unit: 'kWh' as const,
        simulated: true as const,
        months,
        unpriced: unpriced.map(isoOf),
        total: {
          energy: months.reduce((s, m) => s + m.energy, 0),
          cost: months.reduce((s, m) => s + m.cost, 0),
        },
      };
    },
  );
};

export default tariffStatsRoutes;
