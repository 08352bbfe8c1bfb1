/**
 * `pnpm bench query [--engine duckdb|influx] [--devices 20] [--days 365] [--step-min 1] [--runs 100]
 * [--memory-limit 1GB|duckdb] [--history FILE …]`: analytics answers through the API (HTTP on loopback,
 * the client in a worker thread) over stored history — a one-year chart at 1 h, a yearly heatmap, a
 * one-day raw chart, a comparison of 4 devices (at 1 h, and at the interval the analytics screen gets by
 * not naming one) and the consumption table of 4 devices per day — each timed again with `source=raw` (the
 * same answer from raw readings) — and a location's energy flows over the year per day and per 15 minutes
 * (5 devices, one of each role; rollups only).
 *
 * The embedded set is a DuckDB file of 20 meters × a year of 1-minute readings. `--engine influx` starts a
 * throw-away `influxd` on loopback and loads its stated set: 20 meters × a year at 15 minutes unless told
 * otherwise (`--step-min`). `--history FILE` (_history.ts) loads a history file instead, over its range.
 *
 * Prints p50/p95 per query and the raw/rollup ratio; the floor (an authenticated answer that reads no
 * telemetry); and per query the bare time: the rollup answer's own bytes served by a bare `node:http`
 * server through the same client, so `rawOverBare` is the largest ratio any server could reach here.
 */
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { buildApp, createPgliteSql } from '@kilowatch/api';
import type { Reading } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import { type InfluxTestServer, startInfluxServer } from '@kilowatch/testkit';
import { createDuckDbStore, type DuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import {
  type HistoryPlan,
  HistoryTally,
  type HistoryUsed,
  historyArg,
  historyDevices,
  planHistory,
} from './_history.ts';
import { memoryLimitArg } from './memory.ts';

export function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** Nearest-rank percentile: the smallest sample with at least `p` % of the samples at or below it. */
export function percentile(samples: number[], p: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

const MINUTE = 60_000;

/**
 * Readings of a three-phase meter every `stepMin` minutes (1 by default): voltages with a daily swing,
 * power, and import counters rising with the power drawn. Deterministic per device index.
 */
export function* meterReadings(
  deviceKey: string,
  index: number,
  from: number,
  minutes: number,
  batch = 50_000,
  stepMin = 1,
) {
  const e = [1000 * (index + 1), 2000, 3000];
  let out: Reading[] = [];
  for (let m = 0; m < minutes; m += stepMin) {
    const ts = from + m * MINUTE;
    const day = Math.sin((2 * Math.PI * (m % 1440)) / 1440);
    const values: Record<string, number> = {};
    for (let p = 0; p < 3; p++) {
      const power = 400 + 300 * day + 50 * p + ((m * (index + 3) + p) % 97);
      e[p]! += (power * stepMin) / 60_000;
      values[`vave${p + 1}`] = Math.round((230 + 4 * day + ((m + p * 7) % 11) / 5) * 10) / 10;
      values[`pave${p + 1}`] = Math.round(power);
      values[`eai${p + 1}`] = Math.round(e[p]! * 1000) / 1000;
    }
    out.push({ deviceKey, ts, values });
    if (out.length >= batch) {
      yield out;
      out = [];
    }
  }
  if (out.length) yield out;
}

export interface BenchApp {
  app: Awaited<ReturnType<typeof buildApp>>;
  store: TelemetryStore;
  token: string;
  deviceIds: number[];
  deviceKeys: string[];
  /** Time the checkpoint after loading took (timing starts after it). */
  settledMs: number;
  /** The stored range: the one asked for, or the history file's (`from` inclusive, `to` exclusive). */
  from: number;
  to: number;
  /** The history file the readings came from (`--history`), when not the synthetic meters. */
  history?: HistoryUsed;
  close(): Promise<void>;
}

export interface BenchAppOptions {
  /** DuckDB's memory limit (embedded only). */
  memoryLimit?: string;
  /** DuckDB's limit while bulk work runs (embedded only; tsdb limits.ts). */
  bulkMemoryLimit?: string;
  /** `influx`: a throw-away `influxd` on loopback instead of a DuckDB file. */
  engine?: 'duckdb' | 'influx';
  /** Minutes between readings (1 by default). */
  stepMin?: number;
  /** The readings from a history file (`--history`, _history.ts) instead of the synthetic meters. */
  history?: HistoryPlan;
}

/**
 * `devices` meters × `days` of readings (1-minute by default) in a DuckDB file or a throw-away InfluxDB,
 * and the API over it with one user. With `history` the readings and their range (`days` and `from` are
 * then not used) are a history file's.
 */
export async function benchApp(
  devices: number,
  days: number,
  from: number,
  options: BenchAppOptions = {},
): Promise<BenchApp> {
  const { memoryLimit, bulkMemoryLimit, engine = 'duckdb', stepMin = 1, history } = options;
  const dir = await mkdtemp(path.join(tmpdir(), 'kw-bench-'));
  let influx: InfluxTestServer | undefined;
  let store: TelemetryStore;
  if (engine === 'influx') {
    influx = await startInfluxServer();
    store = await createInfluxStore({ url: influx.url, database: influx.database });
  } else {
    store = await createDuckDbStore({
      path: path.join(dir, 'telemetry.duckdb'),
      memoryLimit,
      ...(bulkMemoryLimit ? { bulkMemoryLimit } : {}),
    });
  }
  const sql = await createPgliteSql();
  const app = await buildApp({
    store,
    sql,
    config: { scrypt: { N: 1024, r: 8, p: 1 }, maxEventLoopDelayMs: 0, dataDir: dir },
  });
  await app.ready();
  const reg = await app.inject({
    method: 'POST',
    url: '/api/register',
    payload: { email: 'bench@example.com', password: 'bench password 1', fullName: 'Bench' },
  });
  const token = (reg.json() as { token: string }).token;
  const auth = { authorization: `Bearer ${token}` };
  const loc = await app.inject({
    method: 'POST',
    url: '/api/locations',
    headers: auth,
    payload: { name: 'Bench', timezone: 'Europe/Warsaw' },
  });
  const locationId = (loc.json() as { id: number }).id;
  const deviceIds: number[] = [];
  const deviceKeys: string[] = [];
  for (let i = 0; i < devices; i++) {
    const key = `b0c0de${i.toString(16).padStart(6, '0')}`;
    const res = await app.inject({
      method: 'POST',
      url: '/api/devices',
      headers: auth,
      payload: { mac: key.match(/../g)!.join(':'), name: `Meter ${i + 1}`, typeCode: 1, locationId },
    });
    deviceIds.push((res.json() as { id: number }).id);
    deviceKeys.push(key);
  }
  const minutes = Math.round(days * 1440);
  const t0 = performance.now();
  const tally = history ? new HistoryTally(history) : undefined;
  const batch = engine === 'influx' ? 10_000 : 50_000;
  // History goes in as a backfill would (the bulk path), a device after another.
  async function* readings() {
    for (const [i, key] of deviceKeys.entries()) {
      if (tally) yield* tally.readings(i, key, batch);
      else yield* meterReadings(key, i, from, minutes, batch, stepMin);
      process.stderr.write(
        `wrote device ${i + 1}/${devices} (${Math.round((performance.now() - t0) / 1000)} s)\n`,
      );
    }
  }
  if (store.writeBulk) await store.writeBulk(readings());
  else for await (const b of readings()) await store.write(b);
  const range = tally ? tally.range() : { from, to: from + minutes * MINUTE };
  const used = tally?.report();
  await store.refreshRollups(range.to + 3_600_000);
  process.stderr.write(`rollups ready (${Math.round((performance.now() - t0) / 1000)} s)\n`);
  // Answers are timed over the history as it stays: checkpointed into the file's blocks (the checkpoint
  // the refresh asked for, 7–13 s for 20 meters' year, would otherwise run beside the first queries).
  const t1 = performance.now();
  if (engine !== 'influx') await (store as DuckDbStore).settle();
  const settledMs = Math.round(performance.now() - t1);
  process.stderr.write(`checkpointed (${(settledMs / 1000).toFixed(1)} s)\n`);
  return {
    app,
    store,
    token,
    deviceIds,
    deviceKeys,
    settledMs,
    ...range,
    ...(used ? { history: used } : {}),
    async close() {
      await app.close();
      await store.close();
      await influx?.stop();
      await sql.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The client: a worker thread fetching over HTTP on loopback, as a browser asks, timing each answer
 * until its last byte is in. In a thread of its own it does not share the server's event loop.
 */
const CLIENT = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', async ({ url, token, runs }) => {
  const samples = [];
  try {
    for (let i = 0; i < runs + 1; i++) {
      const t = performance.now();
      const res = await fetch(url, { headers: { authorization: 'Bearer ' + token } });
      const body = await res.arrayBuffer();
      const ms = performance.now() - t;
      if (res.status !== 200) throw new Error(url + ': ' + res.status + ' ' + Buffer.from(body).toString().slice(0, 200));
      if (i > 0) samples.push(ms); // the first run warms caches
    }
    parentPort.postMessage({ samples });
  } catch (e) {
    parentPort.postMessage({ error: String(e) });
  }
});
`;

export function httpClient(token: string) {
  const worker = new Worker(CLIENT, { eval: true });
  return {
    async time(url: string, runs: number): Promise<{ p50: number; p95: number }> {
      const reply = once(worker, 'message');
      worker.postMessage({ url, token, runs });
      const [m] = (await reply) as [{ samples?: number[]; error?: string }];
      const { samples, error } = m;
      if (!samples) throw new Error(error);
      return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
    },
    close: () => worker.terminate(),
  };
}

/**
 * A bare `node:http` server answering each path with bytes given in advance: no routing, no
 * authentication, no store. Timing an answer's own bytes through it shows what any server would pay.
 */
async function bareServer() {
  const bodies = new Map<string, Buffer>();
  const server = createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export default async function query(args: string[]): Promise<object> {
  const i = args.indexOf('--engine');
  const engine = i >= 0 ? args[i + 1] : 'duckdb';
  if (engine !== 'duckdb' && engine !== 'influx') throw new Error('--engine is duckdb or influx');
  const file = historyArg(args);
  const history = file ? await planHistory(file) : undefined;
  // The flows location takes 5 devices, the comparisons 4.
  const devices = history
    ? historyDevices(history, args.includes('--devices') ? arg(args, 'devices', 20) : undefined, 20, 5)
    : Math.max(4, arg(args, 'devices', 20));
  const stepMin = arg(args, 'step-min', engine === 'influx' ? 15 : 1);
  const runs = arg(args, 'runs', 100);
  const b = await benchApp(devices, arg(args, 'days', 365), Date.parse('2025-01-01T00:00:00Z'), {
    engine,
    stepMin,
    memoryLimit: engine === 'duckdb' ? memoryLimitArg(args) : undefined,
    ...(history ? { history } : {}),
  });
  const { from, to } = b;
  const days = (to - from) / 86_400_000;
  try {
    const id = b.deviceIds[0]!;
    const range = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
    const day = `from=${new Date(to - 86_400_000).toISOString()}&to=${new Date(to).toISOString()}`;
    // Flows are asked for at most the last year (the API's flows range limit), whatever --days holds.
    const flowsRange = `from=${new Date(Math.max(from, to - 365 * 86_400_000)).toISOString()}&to=${new Date(to).toISOString()}`;
    const cmp = await b.app.inject({
      method: 'POST',
      url: '/api/comparisons',
      headers: { authorization: `Bearer ${b.token}` },
      payload: {
        name: 'Four meters',
        members: b.deviceIds.slice(0, 4).map((deviceId) => ({ deviceId, param: 'vave1' })),
      },
    });
    const comparisonId = (cmp.json() as { id: number }).id;
    // A location of 5 devices with one of each role (two sub-meters) for the flows answer.
    const auth = { authorization: `Bearer ${b.token}` };
    const flowsLoc = await b.app.inject({
      method: 'POST',
      url: '/api/locations',
      headers: auth,
      payload: { name: 'Flows', timezone: 'Europe/Warsaw' },
    });
    const flowsLocationId = (flowsLoc.json() as { id: number }).id;
    const roles = ['grid', 'production', 'storage', 'consumer', 'consumer'] as const;
    for (const [k, role] of roles.entries()) {
      const moved = await b.app.inject({
        method: 'PUT',
        url: `/api/devices/${b.deviceIds[k]}`,
        headers: auth,
        payload: {
          name: `Meter ${k + 1}`,
          locationId: flowsLocationId,
          billingStart: '2025-01-01',
          billingMonths: 1,
          role,
        },
      });
      if (moved.statusCode !== 200) throw new Error(`flows location: ${moved.statusCode} ${moved.body}`);
    }
    const queries: Record<string, string> = {
      yearChart1h: `/api/devices/${id}/series?params=vave1,vave2,vave3&interval=1h&${range}`,
      yearlyHeatmap: `/api/devices/${id}/heatmap?param=eai&kind=yearly&${range}`,
      dayRawChart: `/api/devices/${id}/series?params=vave1,vave2,vave3&interval=raw&${day}`,
      // The same two answers sized to a 1,600-pixel plot (`points`, docs/api.md §Answers sized to the screen).
      yearChart1hPoints: `/api/devices/${id}/series?params=vave1,vave2,vave3&interval=1h&points=1600&${range}`,
      comparison4: `/api/comparisons/${comparisonId}/data?interval=1h&${range}`,
      comparison4Points: `/api/comparisons/${comparisonId}/data?interval=1h&points=1600&${range}`,
      comparison4BandsPoints: `/api/comparisons/${comparisonId}/data?interval=1h&stats=avg,min,max&points=1600&${range}`,
      // As the analytics screen asks it: no interval, so the API picks the finest with ≤ 2,000 points.
      comparison4Auto: `/api/comparisons/${comparisonId}/data?${range}`,
      // The analytics consumption table: 4 devices' import, export and balance per local day for the year
      // (balance netted per hour across phases, then summed into days).
      consumption4: `/api/analytics/consumption?deviceIds=${b.deviceIds.slice(0, 4).join(',')}&interval=1d&${range}`,
      // A location's energy flows, 5 devices, over the (last) year: per local day as the Energy view asks for a
      // month (allocated per hour), and per 15 minutes (allocated per quarter; 35,040 intervals).
      flows5Days: `/api/locations/${flowsLocationId}/flows?interval=1d&${flowsRange}`,
      flows5Quarters: `/api/locations/${flowsLocationId}/flows?interval=15m&${flowsRange}`,
    };
    // Answers that take no `source`: timed from the rollups only.
    const rollupOnly = new Set(['flows5Days', 'flows5Quarters']);
    const origin = await b.app.listen({ port: 0, host: '127.0.0.1' });
    const client = httpClient(b.token);
    const bare = await bareServer();
    const results: Record<string, object> = {};
    for (const [name, url] of Object.entries(queries)) {
      const rollup = await client.time(origin + url, runs);
      const raw = rollupOnly.has(name)
        ? rollup
        : await client.time(`${origin}${url}&source=raw`, Math.max(3, Math.round(runs / 4)));
      const answer = await fetch(origin + url, { headers: { authorization: `Bearer ${b.token}` } });
      bare.bodies.set(`/${name}`, Buffer.from(await answer.arrayBuffer()));
      const bareTime = await client.time(`${bare.origin}/${name}`, runs);
      results[name] = {
        p50Ms: +rollup.p50.toFixed(2),
        p95Ms: +rollup.p95.toFixed(2),
        rawP50Ms: +raw.p50.toFixed(2),
        rawP95Ms: +raw.p95.toFixed(2),
        rawOverRollup: +(raw.p50 / rollup.p50).toFixed(2),
        answerBytes: bare.bodies.get(`/${name}`)!.length,
        bareP50Ms: +bareTime.p50.toFixed(2),
        rawOverBare: +(raw.p50 / bareTime.p50).toFixed(2),
      };
      process.stderr.write(`${name}: ${JSON.stringify(results[name])}\n`);
    }
    // The floor under every answer: an authenticated request that reads no telemetry (the comparison's
    // definition) through the same client. A rollup answer cannot beat it, so no ratio can pass raw ÷ floor.
    const floor = await client.time(`${origin}/api/comparisons/${comparisonId}`, runs);
    process.stderr.write(`floor: p50 ${floor.p50.toFixed(2)} ms, p95 ${floor.p95.toFixed(2)} ms\n`);
    await client.close();
    await bare.close();
    return {
      floor: { p50Ms: +floor.p50.toFixed(2), p95Ms: +floor.p95.toFixed(2) },
      bench: 'query',
      engine,
      devices,
      days,
      ...(b.history
        ? { history: b.history, readingsPerDevice: Math.round(b.history.readings / devices) }
        : { stepMin, readingsPerDevice: Math.round((days * 1440) / stepMin) }),
      runs,
      checkpointMs: b.settledMs,
      memoryLimit: engine === 'duckdb' ? await (b.store as DuckDbStore).memoryLimit() : null,
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      results,
    };
  } finally {
    await b.close();
  }
}
