/**
 * The Grafana data source (@kilowatch/grafana) composed with the API: it reads the owner's devices and
 * answers series, energy, zone energy and voltage quality through the same analytics code as
 * `/api/devices/:id/…` and `/api/tariffs/:id/stats`, so a Grafana panel and a Kilowatch screen show the
 * same numbers. Opened by an API key or a session.
 */
import { DEFAULT_LIMITS } from '@kilowatch/core';
import { type GrafanaSource, grafanaPlugin } from '@kilowatch/grafana';
import type { FastifyInstance } from 'fastify';
import { contextOf, deviceContext } from './analytics/context.ts';
import { energySeries } from './analytics/energy.ts';
import { voltageQuality } from './analytics/quality.ts';
import { seriesFor } from './analytics/series.ts';
import { hourlyBilledEnergy, zoneEnergy } from './analytics/tariffs.ts';
import { longAnswersInTurns } from './schema.ts';

export function grafanaSource(app: FastifyInstance): GrafanaSource {
  const limitsOf = async (userId: number, id: number) =>
    (await app.devices.limits(userId, id)) ?? DEFAULT_LIMITS;
  return {
    async devices(userId) {
      return (await app.devices.list(userId)).map((d) => ({
        id: d.id,
        name: d.name,
        location: d.location?.name ?? null,
        tz: contextOf(d).tz,
        phases: d.phases,
      }));
    },
    async series(userId, id, q) {
      return seriesFor(app.store, await deviceContext(app, userId, id), q);
    },
    async energy(userId, id, q) {
      const ctx = await deviceContext(app, userId, id);
      return energySeries(app.store, ctx, { from: q.from, to: q.to }, q.interval);
    },
    async tariffs(userId) {
      const out = [];
      for (const l of await app.locations.list(userId))
        for (const t of await app.locations.listTariffs(userId, l.id))
          out.push({ id: t.id, name: t.name, group: t.group });
      return out;
    },
    async zoneEnergy(userId, id, q) {
      const ctx = await deviceContext(app, userId, id);
      const tariffId = q.tariffId ?? ctx.device.tariff?.id;
      const tariff = tariffId === undefined ? null : await app.locations.getTariff(userId, tariffId);
      if (!tariff) return null;
      // The hours `/api/tariffs/:id/stats` prices, zoned by the same calendar, summed per bucket.
      const energy = await hourlyBilledEnergy(app.store, ctx, { from: q.from, to: q.to });
      const zoned = await zoneEnergy(energy, ctx.tz, tariff, q.unit);
      return { tz: ctx.tz, tariff: { id: tariff.id, name: tariff.name, group: tariff.group }, ...zoned };
    },
    async limits(userId, id) {
      await deviceContext(app, userId, id);
      return limitsOf(userId, id);
    },
    async voltageQuality(userId, id, range) {
      const ctx = await deviceContext(app, userId, id);
      return voltageQuality(app.store, ctx, range, await limitsOf(userId, id));
    },
  };
}

/** Mounts the data source at `/grafana`. */
export async function registerGrafana(app: FastifyInstance): Promise<void> {
  await app.register(
    async (scope) => {
      // Long answers (years of points for several targets) are written in turns of the event loop.
      scope.addHook('preSerialization', longAnswersInTurns(null));
      await scope.register(grafanaPlugin, {
        source: grafanaSource(app),
        authenticate: app.authenticateReader,
        userOf: (request) => request.session.userId,
        // The bounds of docs/api.md §Grafana; the answer budget runs on the app's clock.
        ...(app.config.grafana ? { limits: app.config.grafana } : {}),
        now: () => app.clock.now(),
      });
    },
    { prefix: '/grafana' },
  );
}
