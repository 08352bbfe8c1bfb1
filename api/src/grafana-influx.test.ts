/**
 * The InfluxDB-direct dashboards (@kilowatch/grafana, server deployments) against a real influxd: readings
 * are written through Kilowatch's own InfluxDB store and its rollups refreshed, then every InfluxQL query of
 * every InfluxDB-direct dashboard (panels and variables) runs on the server's `/query` with Grafana's macros
 * substituted as Grafana does (`$timeFilter`, `$__interval`, `$device` single and as a regex of several,
 * `$tz`). Every query must answer rows with numbers, and where the JSON API answers the same thing (bucket
 * means, extremes, energy per local day and hour, 10-minute EN 50160 counts) the numbers must be equal.
 */
import type { Reading } from '@kilowatch/core';
import type { TimeSeriesAnswer } from '@kilowatch/grafana';
import { DASHBOARDS, type InfluxQlQuery } from '@kilowatch/grafana/testing';
import { createInfluxStore } from '@kilowatch/influx';
import { type InfluxTestServer, influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from './analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from './testing/helper.ts';

const H = 3_600_000;
const MIN = 60_000;
const TZ = 'Europe/Warsaw';
const FROM = Date.parse('2026-11-10T23:00:00Z'); // 2026-11-11 00:00 CET
const TO = FROM + 72 * H; // 2026-11-14 00:00 CET
const NOW = Date.parse('2026-11-20T12:00:00Z');
const PHASES = [1, 2, 3] as const;
/** What Grafana puts for `$__interval` on a three-day panel of about 70 points. */
const INTERVAL = '1h';

interface Series {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  values: (number | string | null)[][];
}

interface Ran {
  dashboard: string;
  panel: string;
  refId: string;
  query: string;
  series: Series[];
}

/** Readings every 2 minutes (never on a 10-minute edge), voltages swinging and sagging on phase 1 at 11 UTC. */
function readingsOf(m: Meter, scale: number, exports: boolean): Reading[] {
  const out: Reading[] = [];
  const register = { eai1: 100, eai2: 200, eai3: 300, eae1: 10, eae2: 20, eae3: 30 } as Record<
    string,
    number
  >;
  for (let ts = FROM + MIN; ts < TO; ts += 2 * MIN) {
    const values: Record<string, number> = {};
    const hour = new Date(ts).getUTCHours();
    for (const p of PHASES) {
      const swing = 12 * Math.sin((2 * Math.PI * (ts - FROM)) / (6 * H) + p);
      values[`vave${p}`] = p === 1 && hour === 11 ? 199 + (ts % 7) : 230 + p + swing;
      values[`iave${p}`] = scale * (2 + p + Math.cos((ts - FROM) / H));
      values[`pave${p}`] = values[`vave${p}`]! * values[`iave${p}`]! * 0.95;
      values[`pfave${p}`] = 0.9 + 0.01 * p;
      register[`eai${p}`]! += scale * 0.01 * p * (1 + (hour % 3));
      values[`eai${p}`] = register[`eai${p}`]!;
      if (exports) {
        register[`eae${p}`]! += 0.004 * p * (hour >= 9 && hour <= 14 ? 1 : 0);
        values[`eae${p}`] = register[`eae${p}`]!;
      }
    }
    out.push({ deviceKey: m.deviceKey, ts, values });
  }
  return out;
}

/** The InfluxQL queries of the InfluxDB-direct dashboards, with where each comes from. */
function influxQueries(): { dashboard: string; panel: string; refId: string; query: string }[] {
  const out: { dashboard: string; panel: string; refId: string; query: string }[] = [];
  for (const build of Object.values(DASHBOARDS)) {
    const d = build();
    for (const v of d.templating?.list ?? []) {
      if (v.datasource?.type === 'influxdb')
        out.push({ dashboard: d.uid!, panel: `variable ${v.name}`, refId: v.name, query: String(v.query) });
    }
    for (const panel of d.panels ?? []) {
      for (const target of (panel as { targets?: unknown[] }).targets ?? []) {
        const q = target as InfluxQlQuery;
        if (q.datasource?.type === 'influxdb')
          out.push({
            dashboard: d.uid!,
            panel: String((panel as { title?: string }).title),
            refId: q.refId,
            query: q.query,
          });
      }
    }
  }
  return out;
}

const skip = influxSkipReason();

describe.skipIf(skip !== null)('InfluxDB-direct dashboards on a real influxd', () => {
  let server: InfluxTestServer;
  let t: TestApp;
  let closeStore: () => Promise<void>;
  let alice: Account;
  let home: Meter;
  let garage: Meter;
  const ran: Ran[] = [];

  /** Grafana's substitution: `$timeFilter` as epoch-ms bounds (both inclusive), the variables as given. */
  function substitute(query: string): string {
    return query
      .replaceAll('$timeFilter', `time >= ${FROM}ms and time <= ${TO}ms`)
      .replaceAll('$__interval', INTERVAL)
      .replaceAll('/^$device$/', `/^(${home.deviceKey}|${garage.deviceKey})$/`)
      .replaceAll('$device', home.deviceKey)
      .replaceAll('$tz', TZ);
  }

  async function influxQl(q: string): Promise<Series[]> {
    const params = new URLSearchParams({ db: server.database, q, epoch: 'ms' });
    const res = await fetch(`${server.url}/query?${params}`);
    const body = (await res.json()) as { results: { series?: Series[]; error?: string }[]; error?: string };
    expect(res.status, `${q}: ${JSON.stringify(body)}`).toBe(200);
    expect(body.error, q).toBeUndefined();
    for (const r of body.results) expect(r.error, q).toBeUndefined();
    return body.results.flatMap((r) => r.series ?? []);
  }

  beforeAll(async () => {
    server = await startInfluxServer();
    const store = await createInfluxStore({ url: server.url, database: server.database, dayZones: [TZ] });
    closeStore = () => store.close();
    t = await buildTestApp('pglite', { store, now: () => NOW });
    alice = await signUp(t.app);
    const loc = await locationOf(t.app, alice, TZ);
    home = await claimMeter(t.app, alice, loc, 'Home');
    garage = await claimMeter(t.app, alice, loc, 'Garage');
    await store.write([...readingsOf(home, 1, true), ...readingsOf(garage, 0.5, true)]);
    await store.refreshRollups(NOW);
  }, 240_000);

  afterAll(async () => {
    await t?.close();
    await closeStore?.();
    await server?.stop();
  });

  /** A JSON API series for one device, as a map from bucket start to value. */
  async function jsonSeries(
    device: Meter,
    target: string,
    payload: Record<string, string>,
    intervalMs: number,
  ): Promise<Map<number, number>> {
    const res = await as(t.app, alice, {
      method: 'POST',
      url: '/grafana/query',
      payload: {
        range: { from: iso(FROM), to: iso(TO) },
        intervalMs,
        maxDataPoints: 10_000,
        targets: [{ target, refId: 'A', payload: { device: String(device.id), ...payload } }],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [series] = res.json() as TimeSeriesAnswer[];
    return new Map((series?.datapoints ?? []).map(([v, ts]) => [ts, v]));
  }

  /** Rows of an answer as objects, only buckets inside [FROM, TO) (the JSON API's half-open range). */
  function rowsOf(s: Series): Record<string, number | null>[] {
    return s.values
      .map((row) => Object.fromEntries(s.columns.map((c, i) => [c, row[i] as number | null])))
      .filter((r) => typeof r.time !== 'number' || r.time === 0 || (r.time >= FROM && r.time < TO));
  }

  function panel(uid: string, title: string): Ran[] {
    const found = ran.filter((r) => r.dashboard === uid && r.panel === title);
    expect(found.length, `${uid}: ${title}`).toBeGreaterThan(0);
    return found;
  }

  function expectSame(influx: Map<number, number>, api: Map<number, number>, what: string) {
    expect(influx.size, what).toBeGreaterThan(0);
    expect([...influx.keys()].sort(), what).toEqual([...api.keys()].sort());
    for (const [ts, value] of influx) expect(value, `${what} at ${iso(ts)}`).toBeCloseTo(api.get(ts)!, 6);
  }

  it('runs every InfluxQL query of every InfluxDB-direct dashboard, and each answers numbers', async () => {
    const queries = influxQueries();
    const uids = new Set(queries.map((q) => q.dashboard));
    expect([...uids].sort()).toEqual([
      'kilowatch-influxdb-direct',
      'kilowatch-influxdb-fleet',
      'kilowatch-influxdb-power-quality',
    ]);
    for (const q of queries) {
      const series = await influxQl(substitute(q.query));
      ran.push({ ...q, series });
      const where = `${q.dashboard} / ${q.panel} / ${q.refId}: ${substitute(q.query)}`;
      expect(series.length, where).toBeGreaterThan(0);
      for (const s of series) {
        expect(s.values.length, where).toBeGreaterThan(0);
        // Every column answers a value somewhere (a phase that never has one would be a wrong field name).
        for (const [i, c] of s.columns.entries()) {
          if (c === 'time') continue;
          expect(
            s.values.some((row) => row[i] !== null),
            `${where}: column ${c}${s.tags ? ` of ${JSON.stringify(s.tags)}` : ''}`,
          ).toBe(true);
        }
      }
    }
    // The variables list the devices by their keys and the location's zone.
    const devices = ran.find((r) => r.refId === 'device')!.series[0]!.values.map((row) => row[1]);
    expect(devices).toEqual(expect.arrayContaining([home.deviceKey, garage.deviceKey]));
    expect(ran.find((r) => r.refId === 'tz')!.series[0]!.values.map((row) => row[1])).toContain(TZ);
  });

  it('gives the JSON API’s bucket means and extremes per phase', async () => {
    const cases: [string, string, string][] = [
      ['kilowatch-influxdb-power-quality', 'Voltage per phase (bucket means), EN 50160 band', 'vave'],
      ['kilowatch-influxdb-power-quality', 'Current per phase', 'iave'],
      ['kilowatch-influxdb-power-quality', 'Active power per phase', 'pave'],
      ['kilowatch-influxdb-power-quality', 'Power factor per phase', 'pfave'],
      ['kilowatch-influxdb-direct', 'Voltage per phase (15-minute means)', 'vave'],
    ];
    for (const [uid, title, stem] of cases) {
      const rows = rowsOf(panel(uid, title)[0]!.series[0]!);
      for (const p of PHASES) {
        const influx = new Map(rows.filter((r) => r[`L${p}`] !== null).map((r) => [r.time!, r[`L${p}`]!]));
        const api = await jsonSeries(home, `${stem}${p}`, { interval: INTERVAL }, H);
        expectSame(influx, api, `${title} L${p}`);
      }
    }
    const extremes = rowsOf(
      panel('kilowatch-influxdb-power-quality', 'Voltage extremes per phase')[0]!.series[0]!,
    );
    for (const p of PHASES)
      for (const stat of ['min', 'max'] as const) {
        const influx = new Map(extremes.map((r) => [r.time!, r[`L${p} ${stat}`]!]));
        const api = await jsonSeries(home, `vave${p}`, { interval: INTERVAL, stat }, H);
        expectSame(influx, api, `voltage ${stat} L${p}`);
      }
  });

  it('counts the 10-minute means inside EN 50160 as the JSON API’s voltage quality does', async () => {
    const res = await as(t.app, alice, {
      method: 'GET',
      url: `/api/devices/${home.id}/voltage-quality?from=${iso(FROM)}&to=${iso(TO)}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    const quality = res.json() as { phases: { phase: number; samples: number; withinEn50160: number }[] };
    const counts = new Map<string, number>();
    for (const r of panel(
      'kilowatch-influxdb-power-quality',
      'EN 50160: 10-minute mean voltages inside 207–253 V, and all',
    ))
      for (const s of r.series) {
        const [row] = s.values;
        counts.set(s.columns[1]!, row![1] as number);
      }
    for (const p of PHASES) {
      const q = quality.phases.find((x) => x.phase === p)!;
      expect(counts.get(`L${p} all`), `phase ${p}`).toBe(q.samples);
      expect(counts.get(`L${p} within EN 50160`)! / counts.get(`L${p} all`)!, `phase ${p}`).toBeCloseTo(
        q.withinEn50160,
        12,
      );
    }
    // The sag on phase 1 is seen: some of its means are outside, none of the others'.
    expect(counts.get('L1 within EN 50160')).toBeLessThan(counts.get('L1 all')!);
    expect(counts.get('L2 within EN 50160')).toBe(counts.get('L2 all'));
  });

  it('gives the JSON API’s energy per local day and per hour, phases added up', async () => {
    const phasesSum = (r: Record<string, number | null>, label: string) =>
      PHASES.reduce((s, p) => s + (r[`L${p}${label}`] ?? 0), 0);
    // Household, InfluxDB direct: one device.
    const daily = rowsOf(
      panel('kilowatch-influxdb-direct', 'Energy per local day, phases stacked')[0]!.series[0]!,
    );
    expect(daily.map((r) => r.time)).toEqual([FROM, FROM + 24 * H, FROM + 48 * H]);
    expectSame(
      new Map(daily.map((r) => [r.time!, phasesSum(r, ' import')])),
      await jsonSeries(home, 'energy.import', { interval: '1d' }, 86_400_000),
      'household import per local day',
    );
    const hourly = rowsOf(
      panel('kilowatch-influxdb-direct', 'Energy per hour, phases stacked')[0]!.series[0]!,
    );
    expectSame(
      new Map(hourly.map((r) => [r.time!, phasesSum(r, ' import')])),
      await jsonSeries(home, 'energy.import', { interval: '1h' }, H),
      'household import per hour',
    );
    // Fleet: per device, by the `device` tag.
    const byDevice = panel(
      'kilowatch-influxdb-fleet',
      'Energy imported per local day, by device and phase',
    )[0]!;
    const totals = panel('kilowatch-influxdb-fleet', 'Energy in the range by device (local days)')[0]!;
    for (const m of [home, garage]) {
      const s = byDevice.series.find((x) => x.tags?.device === m.deviceKey)!;
      const api = await jsonSeries(m, 'energy.import', { interval: '1d' }, 86_400_000);
      expectSame(
        new Map(rowsOf(s).map((r) => [r.time!, phasesSum(r, '')])),
        api,
        `fleet import of ${m.deviceKey}`,
      );
      const total = rowsOf(totals.series.find((x) => x.tags?.device === m.deviceKey)!)[0]!;
      const sum = (x: Map<number, number>) => [...x.values()].reduce((a, b) => a + b, 0);
      expect(phasesSum(total, ' import')).toBeCloseTo(sum(api), 6);
      const exported = await jsonSeries(m, 'energy.export', { interval: '1d' }, 86_400_000);
      if (m === garage) expect(sum(exported)).toBeGreaterThan(0);
      expect(phasesSum(total, ' export')).toBeCloseTo(sum(exported), 6);
    }
  });

  it('gives the JSON API’s all-phase power and voltage per device', async () => {
    for (const [title, metric] of [
      ['Active power, all phases, by device', 'pave'],
      ['Mean voltage, by device', 'vave'],
    ] as const) {
      const answer = panel('kilowatch-influxdb-fleet', title)[0]!;
      expect(answer.series.map((s) => s.tags?.device).sort()).toEqual(
        [home.deviceKey, garage.deviceKey].sort(),
      );
      for (const m of [home, garage]) {
        const s = answer.series.find((x) => x.tags?.device === m.deviceKey)!;
        const influx = new Map(rowsOf(s).map((r) => [r.time!, r[metric]!]));
        expectSame(influx, await jsonSeries(m, metric, { interval: INTERVAL }, H), `${title} ${m.deviceKey}`);
      }
    }
  });
});
