/**
 * Kilowatch as a Grafana data source (docs/api.md §Grafana) through `inject`, on real DuckDB (in memory) and a
 * real InfluxDB (influxd on a loopback port): every answer checked against the simPod JSON API plugin's
 * published shapes (@kilowatch/grafana's schemas, written from its openapi.yaml and README), energy the
 * same as `/api/devices/:id/energy`, keys scoped to their owner and revoked at once, maxDataPoints kept.
 *
 * Over 500 lines on purpose: every case reads the one data set `beforeAll` builds per engine (an app, two
 * accounts with keys, three meters across the autumn clock change, rolled up, and an influxd for the
 * InfluxDB run); split, each file would build it all again.
 */
import type { Reading } from '@kilowatch/core';
import {
  METRIC_NAMES,
  MetricsResponseSchema,
  PayloadOptionsResponseSchema,
  QueryResponseSchema,
  RowsResponseSchema,
  TableAnswerSchema,
  TagKeysResponseSchema,
  TagValuesResponseSchema,
  type TimeSeriesAnswer,
  VariableResponseSchema,
} from '@kilowatch/grafana';
import type { LightMyRequestResponse } from 'fastify';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter, steadyCounter } from './analytics/testing.ts';
import { ENGINES } from './testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from './testing/helper.ts';

const H = 3_600_000;
const WARSAW_AUTUMN = Date.parse('2026-10-24T22:00:00Z'); // 2026-10-25 00:00 CEST
const WARSAW_AUTUMN_END = Date.parse('2026-10-25T23:00:00Z'); // 2026-10-26 00:00 CET
const FROM = WARSAW_AUTUMN - 24 * H;
const TO = WARSAW_AUTUMN_END + 24 * H;
const NOW = Date.parse('2026-11-20T12:00:00Z');

function ok<S extends v.GenericSchema>(schema: S, res: LightMyRequestResponse): v.InferOutput<S> {
  expect(res.statusCode, res.body).toBe(200);
  const parsed = v.safeParse(schema, res.json());
  if (!parsed.success) throw new Error(`answer off the published shape: ${JSON.stringify(parsed.issues[0])}`);
  return parsed.output;
}

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`Grafana data source on ${engine.name}`, () => {
    let t: TestApp;
    let stop: () => Promise<void>;
    let alice: Account;
    let bob: Account;
    let aliceKey: string;
    let bobKey: string;
    let home: Meter;
    let garage: Meter;
    let bobs: Meter;
    let aliceLoc: number;

    beforeAll(async () => {
      const opened = await engine.open();
      stop = opened.stop;
      const store = opened.store;
      t = await buildTestApp('pglite', { store, now: () => NOW });
      alice = await signUp(t.app);
      bob = await signUp(t.app);
      aliceLoc = await locationOf(t.app, alice);
      home = await claimMeter(t.app, alice, aliceLoc, 'Home');
      garage = await claimMeter(t.app, alice, aliceLoc, 'Garage');
      bobs = await claimMeter(t.app, bob, await locationOf(t.app, bob), 'Bob secret meter');
      const readings: Reading[] = [
        // 1 kWh an hour on phase 1 across the autumn change, sampled every 15 minutes.
        ...steadyCounter(home.deviceKey, 'eai1', FROM - H, TO + H),
        ...steadyCounter(garage.deviceKey, 'eai1', FROM - H, TO + H, 0.5),
        ...steadyCounter(bobs.deviceKey, 'eai1', FROM - H, TO + H, 7),
      ];
      // Voltages every 15 minutes: phase n at 229 + n V, a sag to 200 V on phase 1 at noon each day.
      for (let ts = FROM; ts < TO; ts += 15 * 60_000) {
        const sag = new Date(ts).getUTCHours() === 11;
        for (const m of [home, bobs])
          readings.push({
            deviceKey: m.deviceKey,
            ts,
            values: { vave1: sag ? 200 : 230, vave2: 231, vave3: 232 },
          });
      }
      await store.write(readings);
      await store.refreshRollups(NOW);
      const key = async (who: Account) => {
        const res = await as(t.app, who, {
          method: 'POST',
          url: '/api/account/api-keys',
          payload: { name: 'Grafana' },
        });
        return (res.json() as { key: string }).key;
      };
      aliceKey = await key(alice);
      bobKey = await key(bob);
    }, 180_000);

    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    const grafana = (key: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
      t.app.inject({
        method,
        url: `/grafana${url}`,
        headers: { authorization: `Bearer ${key}` },
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
    const query = (key: string, body: Record<string, unknown>) => grafana(key, 'POST', '/query', body);
    const range = { from: iso(FROM), to: iso(TO), raw: { from: 'now-3d', to: 'now' } };

    it('answers the connection test with a key, and 401 without one', async () => {
      expect((await grafana(aliceKey, 'GET', '/')).statusCode).toBe(200);
      const bare = await t.app.inject({
        method: 'GET',
        url: '/grafana',
        headers: { authorization: `Bearer ${aliceKey}` },
      });
      expect(bare.statusCode).toBe(200);
      const none = await t.app.inject({ method: 'GET', url: '/grafana/' });
      expect(none.statusCode).toBe(401);
      const wrong = await grafana('kw_thisKeyWasNeverIssuedByKilowatch', 'POST', '/metrics', {});
      expect(wrong.statusCode).toBe(401);
      // A session's token opens it too (the user trying it from the browser).
      expect((await as(t.app, alice, { method: 'GET', url: '/grafana/' })).statusCode).toBe(200);
    });

    it('lists metrics with payload options of the owner’s devices only', async () => {
      for (const body of [{}, { metric: 'energy.import', payload: { device: String(home.id) } }]) {
        const metrics = ok(MetricsResponseSchema, await grafana(aliceKey, 'POST', '/metrics', body));
        expect(metrics.map((m) => m.value)).toEqual(METRIC_NAMES);
        expect(metrics.map((m) => m.value)).toEqual(
          expect.arrayContaining(['energy.import', 'vave1', 'vave', 'pave']),
        );
        const device = metrics
          .find((m) => m.value === 'energy.import')!
          .payloads.find((p) => p.name === 'device')!;
        expect(device.options).toEqual([
          { label: 'Home', value: String(home.id) },
          { label: 'Garage', value: String(garage.id) },
        ]);
      }
      for (const path of ['/metric-payload-options', '/options']) {
        const devices = ok(
          PayloadOptionsResponseSchema,
          await grafana(aliceKey, 'POST', path, { metric: 'vave1', payload: {}, name: 'device' }),
        );
        expect(devices.map((o) => o.label)).toEqual(['Home', 'Garage']);
        const stats = ok(
          PayloadOptionsResponseSchema,
          await grafana(aliceKey, 'POST', path, { metric: 'vave1', payload: {}, name: 'stat' }),
        );
        expect(stats.map((o) => o.value)).toEqual(['avg', 'min', 'max']);
      }
    });

    it('gives energy per local day across the autumn change exactly as /api/devices/:id/energy does', async () => {
      const body = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          intervalMs: 86_400_000,
          maxDataPoints: 500,
          targets: [
            { target: 'energy.import', refId: 'A', payload: { device: String(home.id), interval: '1d' } },
          ],
        }),
      );
      expect(body).toHaveLength(1);
      const series = body[0] as TimeSeriesAnswer;
      expect(series.target).toBe('Home energy.import');
      const api = (
        await as(t.app, alice, {
          method: 'GET',
          url: `/api/devices/${home.id}/energy?from=${iso(FROM)}&to=${iso(TO)}&interval=1d`,
        })
      ).json() as { t: number[]; import: (number | null)[] };
      const expected = api.t.flatMap((ts, i) => (api.import[i] === null ? [] : [[api.import[i], ts]]));
      expect(series.datapoints).toEqual(expected);
      // The 25-hour day holds 25 kWh, the days around it 24.
      expect(series.datapoints).toEqual([
        [24, FROM],
        [25, WARSAW_AUTUMN],
        [24, WARSAW_AUTUMN_END],
      ]);
      // Hourly from the same code: 25 buckets on the long day.
      const hourly = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range: { from: iso(WARSAW_AUTUMN), to: iso(WARSAW_AUTUMN_END) },
          intervalMs: H,
          maxDataPoints: 1000,
          targets: [{ target: 'energy.import', payload: { device: String(home.id) } }],
        }),
      );
      expect((hourly[0] as TimeSeriesAnswer).datapoints).toHaveLength(25);
    });

    it('honours maxDataPoints: the right rollup, then merged runs, never more points than asked', async () => {
      const cases = [
        { maxDataPoints: 1000, intervalMs: 60_000, most: 1000 },
        { maxDataPoints: 100, intervalMs: 30 * 60_000, most: 100 },
        { maxDataPoints: 10, intervalMs: 60_000, most: 10 },
        { maxDataPoints: 1, intervalMs: 0, most: 1 },
      ];
      for (const c of cases) {
        const body = ok(
          QueryResponseSchema,
          await query(aliceKey, {
            range,
            intervalMs: c.intervalMs,
            maxDataPoints: c.maxDataPoints,
            targets: [
              { target: 'vave1', refId: 'A', payload: { device: String(home.id) } },
              { target: 'energy.import', refId: 'B', payload: { device: String(home.id) } },
            ],
          }),
        );
        expect(body).toHaveLength(2);
        for (const s of body as TimeSeriesAnswer[]) {
          expect(s.datapoints.length, `${s.target} ${c.maxDataPoints}`).toBeLessThanOrEqual(c.most);
          expect(s.datapoints.length).toBeGreaterThan(0);
        }
      }
      // 73 hours at 100 points and 30-minute panels: hourly rollups, one point an hour.
      const hourly = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          intervalMs: 30 * 60_000,
          maxDataPoints: 100,
          targets: [{ target: 'vave2', payload: { device: String(home.id) } }],
        }),
      )[0] as TimeSeriesAnswer;
      expect(hourly.datapoints.length).toBe((TO - FROM) / H);
      expect(hourly.datapoints[1]![1] - hourly.datapoints[0]![1]).toBe(H);
      expect(hourly.datapoints[0]![0]).toBeCloseTo(231, 9);
      // Energy merged into runs still adds up to the whole: 73 kWh over 73 hours. (At one point the answer
      // is the calendar month, which holds all 75 hours written.)
      for (const [maxDataPoints, kWh] of [
        [1000, 73],
        [20, 73],
        [7, 73],
        [1, 75],
      ] as const) {
        const e = ok(
          QueryResponseSchema,
          await query(aliceKey, {
            range,
            intervalMs: H,
            maxDataPoints,
            targets: [{ target: 'energy.import', payload: { device: String(home.id) } }],
          }),
        )[0] as TimeSeriesAnswer;
        expect(e.datapoints.length).toBeLessThanOrEqual(maxDataPoints);
        expect(e.datapoints.reduce((a, [x]) => a + x, 0)).toBeCloseTo(kWh, 6);
      }
    });

    it('answers tables, several devices, ad hoc filters by device, location and phase', async () => {
      const table = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          maxDataPoints: 10,
          targets: [{ target: 'energy.import', payload: { format: 'table', interval: '1d' } }],
        }),
      );
      const tab = v.parse(TableAnswerSchema, table[0]);
      expect(tab.columns.map((c) => c.text)).toEqual(['Time', 'Device', 'Location', 'energy.import']);
      expect(tab.rows).toContainEqual([WARSAW_AUTUMN, 'Home', 'Home', 25]);
      expect(tab.rows).toContainEqual([WARSAW_AUTUMN, 'Garage', 'Home', 12.5]);

      const filtered = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          maxDataPoints: 100,
          targets: [{ target: 'vave', payload: {} }],
          adhocFilters: [
            { key: 'device', operator: '=', value: 'Home' },
            { key: 'phase', operator: '=', value: '3' },
          ],
        }),
      ) as TimeSeriesAnswer[];
      expect(filtered.map((s) => s.target)).toEqual(['Home vave3']);
      expect(filtered[0]!.datapoints[0]![0]).toBeCloseTo(232, 9);
      // Multi-value variables arrive as {a,b}.
      const both = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          maxDataPoints: 10,
          targets: [
            { target: 'energy.import', payload: JSON.stringify({ device: `{${home.id},${garage.id}}` }) },
          ],
        }),
      ) as TimeSeriesAnswer[];
      expect(both.map((s) => s.target)).toEqual(['Home energy.import', 'Garage energy.import']);
      const none = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          targets: [{ target: 'vave', payload: {} }],
          adhocFilters: [{ key: 'location', operator: '!=', value: 'Home' }],
        }),
      );
      expect(none).toEqual([]);
    });

    it('gives the voltage bands and the EN 50160 shares', async () => {
      const bands = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          targets: [{ target: 'voltage.bands', payload: { device: String(home.id) } }],
        }),
      ) as TimeSeriesAnswer[];
      expect(bands.map((b) => b.target)).toEqual([
        'Home warning low',
        'Home warning high',
        'Home critical low',
        'Home critical high',
      ]);
      expect(bands[0]!.datapoints).toEqual([
        [207, FROM],
        [207, TO],
      ]);
      const quality = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          targets: [{ target: 'voltage.quality', payload: { device: String(home.id) } }],
        }),
      );
      const tab = v.parse(TableAnswerSchema, quality[0]);
      const api = (
        await as(t.app, alice, {
          method: 'GET',
          url: `/api/devices/${home.id}/voltage-quality?from=${iso(FROM)}&to=${iso(TO)}`,
        })
      ).json() as { phases: { phase: number; samples: number; withinEn50160: number }[] };
      expect(tab.rows).toHaveLength(3);
      for (const p of api.phases) {
        const row = tab.rows.find((r) => r[1] === p.phase)!;
        expect(row[2]).toBe(p.samples);
        expect(row[5]).toBe(p.withinEn50160);
      }
      // Phase 1 sags below EN 50160's 207 V one hour a day.
      expect(Number(tab.rows.find((r) => r[1] === 1)![5])).toBeLessThan(1);
    });

    it('answers variables and ad hoc tag keys and values from the owner’s devices only', async () => {
      const devices = ok(
        VariableResponseSchema,
        await grafana(aliceKey, 'POST', '/variable', { payload: { target: 'devices' } }),
      );
      expect(devices).toEqual([
        { __text: 'Home', __value: String(home.id) },
        { __text: 'Garage', __value: String(garage.id) },
      ]);
      const asText = ok(
        VariableResponseSchema,
        await grafana(aliceKey, 'POST', '/variable', { payload: 'metrics' }),
      );
      expect(asText.map((x) => x.__value)).toEqual(METRIC_NAMES);
      const keys = ok(TagKeysResponseSchema, await grafana(aliceKey, 'POST', '/tag-keys', {}));
      expect(keys.map((k) => k.text)).toEqual(['device', 'location', 'phase']);
      const names = ok(
        TagValuesResponseSchema,
        await grafana(aliceKey, 'POST', '/tag-values', { key: 'device' }),
      );
      expect(names).toEqual([{ text: 'Home' }, { text: 'Garage' }]);
      const phases = ok(
        TagValuesResponseSchema,
        await grafana(aliceKey, 'POST', '/tag-values', { key: 'phase' }),
      );
      expect(phases).toEqual([{ text: '1' }, { text: '2' }, { text: '3' }]);
    });

    it('gives energy per tariff zone per month, local day and hour as /api/tariffs/:id/stats does', async () => {
      type Series = TimeSeriesAnswer[];
      const zones = async (
        key: string,
        payload: Record<string, string>,
        intervalMs: number,
        over: { from: string; to: string } = range,
      ) =>
        query(key, {
          range: over,
          intervalMs,
          maxDataPoints: 1000,
          targets: [{ target: 'energy.zones', refId: 'Z', payload: { device: String(home.id), ...payload } }],
        });
      // Home has no tariff yet: named alone, it is told so.
      const untariffed = await zones(aliceKey, {}, 86_400_000);
      expect(untariffed.statusCode).toBe(400);
      expect(untariffed.json().message).toMatch(/has no tariff/);

      const created = await as(t.app, alice, {
        method: 'POST',
        url: `/api/locations/${aliceLoc}/tariffs`,
        payload: {
          name: 'Day and night',
          group: 'G12',
          zone1Price: 1,
          zone2Price: 0.5,
          validFrom: '2026-01-01',
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const tariff = String(created.json().id);
      const statsOf = async (from: number, to: number) => {
        const res = await as(t.app, alice, {
          method: 'GET',
          url: `/api/tariffs/${tariff}/stats?deviceId=${home.id}&from=${iso(from)}&to=${iso(to)}`,
        });
        expect(res.statusCode, res.body).toBe(200);
        return res.json() as { months: { month: string; zones: { zone: number; energy: number }[] }[] };
      };
      const stats = await statsOf(FROM, TO);
      expect(stats.months.map((m) => m.month)).toEqual(['2026-10']);
      const statZones = stats.months[0]!.zones;
      expect(statZones.map((z) => z.zone)).toEqual([1, 2]);
      const sum = (points: [number, number][]) => points.reduce((a, [x]) => a + x, 0);

      // One local month (October, from 1 October 00:00 CEST): exactly the route's energy per zone.
      const monthly = ok(
        QueryResponseSchema,
        await zones(aliceKey, { tariff, interval: '1mo' }, 30 * 86_400_000),
      ) as Series;
      expect(monthly.map((s) => s.target)).toEqual(['Home zone 1', 'Home zone 2']);
      const october = Date.parse('2026-09-30T22:00:00Z');
      monthly.forEach((s, k) => {
        expect(s.datapoints).toEqual([[expect.closeTo(statZones[k]!.energy, 9), october]]);
      });

      // Local days: the zones of each day add up to /api/devices/:id/energy's day (24, 25, 24 kWh), and the
      // days of each zone to the route's month.
      const daily = ok(
        QueryResponseSchema,
        await zones(aliceKey, { tariff, interval: '1d' }, 86_400_000),
      ) as Series;
      expect(daily).toHaveLength(2);
      const days = [FROM, WARSAW_AUTUMN, WARSAW_AUTUMN_END];
      for (const s of daily) expect(s.datapoints.map(([, ts]) => ts)).toEqual(days);
      expect(days.map((_, i) => daily[0]!.datapoints[i]![0] + daily[1]!.datapoints[i]![0])).toEqual([
        expect.closeTo(24, 9),
        expect.closeTo(25, 9),
        expect.closeTo(24, 9),
      ]);
      daily.forEach((s, k) => {
        expect(sum(s.datapoints)).toBeCloseTo(statZones[k]!.energy, 9);
      });
      // Each day on its own as the route prices it.
      for (const [i, from] of days.entries()) {
        const to = days[i + 1] ?? TO;
        const dayStats = (await statsOf(from, to)).months[0]!.zones;
        daily.forEach((s, k) => {
          expect(s.datapoints[i]![0]).toBeCloseTo(dayStats.find((z) => z.zone === k + 1)?.energy ?? 0, 9);
        });
      }

      // Whole hours of the 25-hour day: each hour's kWh lies in exactly one zone.
      const hourly = ok(
        QueryResponseSchema,
        await zones(aliceKey, { tariff }, H, { from: iso(WARSAW_AUTUMN), to: iso(WARSAW_AUTUMN_END) }),
      ) as Series;
      expect(hourly.map((s) => s.datapoints.length)).toEqual([25, 25]);
      for (let i = 0; i < 25; i++) {
        const pair = hourly.map((s) => s.datapoints[i]![0]).sort();
        expect(pair[0]).toBeCloseTo(0, 9);
        expect(pair[1]).toBeCloseTo(1, 9);
      }
      const longDay = (await statsOf(WARSAW_AUTUMN, WARSAW_AUTUMN_END)).months[0]!.zones;
      hourly.forEach((s, k) => {
        expect(sum(s.datapoints)).toBeCloseTo(longDay[k]!.energy, 9);
      });

      // With a tariff on its location the device's own tariff is the default; as a table too.
      const located = await as(t.app, alice, {
        method: 'PUT',
        url: `/api/locations/${aliceLoc}`,
        payload: { name: 'Home', timezone: 'Europe/Warsaw', tariffId: Number(tariff) },
      });
      expect(located.statusCode, located.body).toBe(200);
      const own = ok(QueryResponseSchema, await zones(aliceKey, { interval: '1d' }, 86_400_000));
      expect(own).toEqual(daily);
      const table = ok(
        QueryResponseSchema,
        await zones(aliceKey, { interval: '1mo', format: 'table' }, 30 * 86_400_000),
      );
      const rows = v.parse(TableAnswerSchema, table[0]).rows;
      expect(rows).toEqual([
        [october, 'Home', 'Day and night', 1, expect.closeTo(statZones[0]!.energy, 9)],
        [october, 'Home', 'Day and night', 2, expect.closeTo(statZones[1]!.energy, 9)],
      ]);
      // The tariff is listed as a payload option; another user cannot name it.
      const metrics = ok(MetricsResponseSchema, await grafana(aliceKey, 'POST', '/metrics', {}));
      const options = metrics
        .find((m) => m.value === 'energy.zones')!
        .payloads.find((p) => p.name === 'tariff')!;
      expect(options.options).toContainEqual({ label: 'Day and night (G12)', value: tariff });
      const foreign = await query(bobKey, {
        range,
        targets: [{ target: 'energy.zones', payload: { device: String(bobs.id), tariff } }],
      });
      expect(foreign.statusCode).toBe(400);
      expect(foreign.json().message).toMatch(/unknown tariff/);
    });

    it('shows a key of user A nothing of user B', async () => {
      const everything = ok(
        QueryResponseSchema,
        await query(aliceKey, {
          range,
          maxDataPoints: 10,
          targets: [{ target: 'energy.import' }, { target: 'vave1' }],
        }),
      ) as TimeSeriesAnswer[];
      expect(everything.map((s) => s.target)).toEqual([
        'Home energy.import',
        'Garage energy.import',
        'Home vave1',
        'Garage vave1',
      ]);
      // Bob's meter, by id or by name, reads exactly as a meter that does not exist.
      const pairs: [string, string][] = [
        [String(bobs.id), '987654'],
        ['Bob secret meter', 'No such meter'],
      ];
      for (const [his, nobodys] of pairs) {
        for (const ask of [
          (d: string) =>
            query(aliceKey, { range, targets: [{ target: 'energy.import', payload: { device: d } }] }),
          (d: string) =>
            grafana(
              aliceKey,
              'GET',
              `/rows?device=${encodeURIComponent(d)}&param=vave1&from=${iso(FROM)}&to=${iso(TO)}`,
            ),
        ]) {
          const res = await ask(his);
          const control = await ask(nobodys);
          expect(res.statusCode).toBe(400);
          expect(res.body.replaceAll(his, '?')).toBe(control.body.replaceAll(nobodys, '?'));
        }
      }
      for (const [url, body] of [
        ['/metrics', {}],
        ['/variable', { payload: { target: 'devices' } }],
        ['/variable', { payload: { target: 'locations' } }],
        ['/tag-values', { key: 'device' }],
      ] as const) {
        const res = await grafana(aliceKey, 'POST', url, body);
        expect(res.statusCode).toBe(200);
        expect(res.body).not.toContain('Bob secret meter');
        expect(res.body).not.toContain(`"${bobs.id}"`);
      }
      // And Bob's key sees Bob's meter: the data is there.
      const bobsOwn = ok(
        QueryResponseSchema,
        await query(bobKey, {
          range,
          maxDataPoints: 10,
          targets: [{ target: 'energy.import', payload: { interval: '1d' } }],
        }),
      ) as TimeSeriesAnswer[];
      expect(bobsOwn.map((s) => s.target)).toEqual(['Bob secret meter energy.import']);
      expect(bobsOwn[0]!.datapoints[1]![0]).toBeCloseTo(7 * 25, 9);
    });

    it('refuses a revoked key at once with 401', async () => {
      const created = (
        await as(t.app, alice, {
          method: 'POST',
          url: '/api/account/api-keys',
          payload: { name: 'temporary' },
        })
      ).json() as { id: number; key: string };
      const body = { range, targets: [{ target: 'energy.import' }] };
      expect((await query(created.key, body)).statusCode).toBe(200);
      await as(t.app, alice, { method: 'DELETE', url: `/api/account/api-keys/${created.id}` });
      for (const res of [
        await query(created.key, body),
        await grafana(created.key, 'GET', '/'),
        await grafana(created.key, 'POST', '/metrics', {}),
        await grafana(
          created.key,
          'GET',
          `/rows?device=${home.id}&param=vave1&from=${iso(FROM)}&to=${iso(TO)}`,
        ),
      ]) {
        expect(res.statusCode).toBe(401);
      }
    });

    it('serves Infinity rows as flat JSON and as CSV', async () => {
      const url = `/rows?device=${home.id}&param=energy.import,vave1&from=${iso(FROM)}&to=${iso(TO)}&interval=1d`;
      const rows = ok(RowsResponseSchema, await grafana(aliceKey, 'GET', url));
      expect(rows.filter((r) => r.param === 'energy.import').map((r) => [r.time, r.value])).toEqual([
        [iso(FROM), 24],
        [iso(WARSAW_AUTUMN), 25],
        [iso(WARSAW_AUTUMN_END), 24],
      ]);
      expect(rows.filter((r) => r.param === 'vave1')).toHaveLength(3);
      const csv = await grafana(aliceKey, 'GET', `${url}&format=csv`);
      expect(csv.statusCode).toBe(200);
      expect(csv.headers['content-type']).toMatch(/^text\/csv/);
      const lines = csv.body.trim().split('\n');
      expect(lines[0]).toBe('time,ts,device,deviceId,param,value');
      expect(lines).toHaveLength(rows.length + 1);
      expect(lines[2]).toBe(`${iso(WARSAW_AUTUMN)},${WARSAW_AUTUMN},Home,${home.id},energy.import,25`);
      // Epoch milliseconds, as Infinity's ${__from} gives them, read the same.
      const ms = ok(
        RowsResponseSchema,
        await grafana(
          aliceKey,
          'GET',
          `/rows?device=Home&param=energy.import&from=${FROM}&to=${TO}&interval=1d`,
        ),
      );
      expect(ms.map((r) => r.value)).toEqual([24, 25, 24]);
    });

    it('answers a body it cannot use with 400 and the reason, never 500', async () => {
      const bad: [string, 'GET' | 'POST', unknown, RegExp][] = [
        ['/query', 'POST', {}, /range/],
        ['/query', 'POST', { range }, /targets/],
        ['/query', 'POST', { range, targets: 'energy' }, /targets/],
        ['/query', 'POST', { range, targets: [{ refId: 'A' }] }, /target/],
        ['/query', 'POST', { range: { from: 'yesterday', to: 'now' }, targets: [] }, /from/],
        ['/query', 'POST', { range: { from: iso(TO), to: iso(FROM) }, targets: [] }, /range/],
        ['/query', 'POST', { range, maxDataPoints: -1, targets: [] }, /maxDataPoints/],
        ['/query', 'POST', { range, maxDataPoints: 'many', targets: [] }, /maxDataPoints/],
        ['/query', 'POST', { range, targets: [{ target: 'nope' }] }, /unknown metric "nope"/],
        ['/query', 'POST', { range, targets: [{ target: 'vave1', payload: '{not json' }] }, /not JSON/],
        ['/query', 'POST', { range, targets: [{ target: 'vave1', payload: { stat: 'median' } }] }, /stat/],
        [
          '/query',
          'POST',
          { range, targets: [{ target: 'energy.zones', payload: { interval: '15m' } }] },
          /interval/,
        ],
        [
          '/query',
          'POST',
          { range, targets: [{ target: 'energy.zones', payload: { tariff: 'x1' } }] },
          /tariff/,
        ],
        [
          '/query',
          'POST',
          { range, targets: [{ target: 'vave1', payload: { interval: '7m' } }] },
          /interval/,
        ],
        [
          '/query',
          'POST',
          { range, targets: [{ target: 'energy.import', payload: { interval: 'raw' } }] },
          /interval/,
        ],
        ['/query', 'POST', { range, targets: [{ target: 'vave1', payload: { format: 'graph' } }] }, /format/],
        [
          '/query',
          'POST',
          { range, targets: [], adhocFilters: [{ key: 'device', operator: '=~', value: 'H.*' }] },
          /operator/,
        ],
        [
          '/query',
          'POST',
          { range, targets: [], adhocFilters: [{ key: 'city', operator: '=', value: 'X' }] },
          /city/,
        ],
        [
          '/query',
          'POST',
          { range, targets: [], adhocFilters: [{ key: 'phase', operator: '=', value: '4' }] },
          /phase/,
        ],
        [
          '/query',
          'POST',
          { range: { from: '1900-01-01T00:00:00Z', to: iso(TO) }, targets: [{ target: 'vave1' }] },
          /too long/,
        ],
        ['/metric-payload-options', 'POST', { payload: {}, name: 'device' }, /metric/],
        ['/metric-payload-options', 'POST', { metric: 'nope', payload: {}, name: 'device' }, /nope/],
        ['/metric-payload-options', 'POST', { metric: 'vave1', payload: {}, name: 'colour' }, /colour/],
        ['/variable', 'POST', { payload: { target: 'galaxies' } }, /galaxies/],
        ['/variable', 'POST', { payload: '{broken' }, /JSON/],
        ['/tag-values', 'POST', {}, /key/],
        ['/tag-values', 'POST', { key: 'colour' }, /colour/],
        ['/rows?param=vave1', 'GET', undefined, /device/],
        [`/rows?device=${home.id}&param=vave1&from=x&to=${iso(TO)}`, 'GET', undefined, /from/],
        [`/rows?device=${home.id}&param=nope&from=${iso(FROM)}&to=${iso(TO)}`, 'GET', undefined, /nope/],
        [
          `/rows?device=${home.id}&param=vave1&from=${iso(FROM)}&to=${iso(TO)}&format=xml`,
          'GET',
          undefined,
          /format/,
        ],
        [
          `/rows?device=${home.id}&param=vave1&from=${iso(FROM)}&to=${iso(TO)}&maxDataPoints=0`,
          'GET',
          undefined,
          /maxDataPoints/,
        ],
      ];
      for (const [url, method, body, why] of bad) {
        const res = await grafana(aliceKey, method, url, body);
        expect(res.statusCode, `${url} ${JSON.stringify(body)}: ${res.body}`).toBe(400);
        expect((res.json() as { message: string }).message, url).toMatch(why);
      }
      // Not JSON at all.
      const garbled = await t.app.inject({
        method: 'POST',
        url: '/grafana/query',
        headers: { authorization: `Bearer ${aliceKey}`, 'content-type': 'application/json' },
        payload: '{"range":',
      });
      expect(garbled.statusCode).toBe(400);
      expect(garbled.json().message).toBeTruthy();
      // Hidden targets are skipped, not answered.
      const hidden = await query(aliceKey, { range, targets: [{ target: 'vave1', hide: true }] });
      expect(ok(QueryResponseSchema, hidden)).toEqual([]);
    });
  });
}
