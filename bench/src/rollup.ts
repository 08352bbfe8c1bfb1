/**
 * `pnpm bench rollup [--devices 20] [--days 365] [--reps 7] [--engine duckdb|influx|all]
 *   [--influx-devices 20] [--influx-days 365] [--influx-step-min 15] [--history FILE …]`
 *
 * Loads N devices × D days of 1-minute three-phase readings into a DuckDB file in a temp dir (through
 * the store's own write path, in bulk batches), brings the rollups up to date, then answers the same
 * questions from rollups and from raw readings in the same run:
 *   (a) one device's hourly voltage chart over the whole range (vave1..3 avg/min/max, `1h`);
 *   (b) daily energy of every device over the whole range (`eai` all phases, `1d`, Europe/Warsaw).
 * Reports load time and rate, rollup refresh time, p50/p95 per query and source, and the ratios.
 * The InfluxDB case (a smaller stated set) runs with `--engine influx` or `--engine all`.
 * `--history FILE` (_history.ts) loads a history file's readings instead of the generated ones, over
 * the file's range, on `--devices` bench devices (InfluxDB: `--influx-devices`, else `--devices`): by
 * default every device of a Kilowatch export of several, else 20; `--days`, `--influx-days` and
 * `--influx-step-min` do not apply.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DAY_MS, HOUR_MS, MINUTE_MS, type Reading } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import { type InfluxTestServer, startInfluxServer } from '@kilowatch/testkit';
import { createDuckDbStore, type QuerySource, type TelemetryStore } from '@kilowatch/tsdb';
import {
  HISTORY_OPTIONS,
  type HistoryFile,
  type HistoryPlan,
  HistoryTally,
  type HistoryUsed,
  historyArg,
  historyDevices,
  planHistory,
} from './_history.ts';
import { memoryLimitArg } from './memory.ts';

interface Args {
  devices: number;
  days: number;
  reps: number;
  engine: 'duckdb' | 'influx' | 'all';
  influxDevices: number;
  influxDays: number;
  influxStepMin: number;
  memoryLimit: string | undefined;
  /** `--history`: the file the readings come from. */
  history: HistoryFile | undefined;
  /** Whether `--devices` / `--influx-devices` were given (with a history file they default to its devices). */
  devicesGiven: boolean;
  influxDevicesGiven: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    devices: 20,
    days: 365,
    reps: 7,
    engine: 'duckdb',
    influxDevices: 20,
    influxDays: 365,
    influxStepMin: 15,
    memoryLimit: memoryLimitArg(argv),
    history: historyArg(argv),
    devicesGiven: argv.includes('--devices'),
    influxDevicesGiven: argv.includes('--influx-devices'),
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    const num = () => {
      const n = Number(v);
      if (!Number.isFinite(n) || n <= 0) throw new Error(`${k} needs a positive number`);
      i++;
      return n;
    };
    if (k === '--devices') a.devices = num();
    else if (k === '--days') a.days = num();
    else if (k === '--reps') a.reps = num();
    else if (k === '--influx-devices') a.influxDevices = num();
    else if (k === '--influx-days') a.influxDays = num();
    else if (k === '--influx-step-min') a.influxStepMin = num();
    else if (k === '--memory-limit' || (k !== undefined && HISTORY_OPTIONS.includes(k))) i++;
    else if (k === '--engine') {
      if (v !== 'duckdb' && v !== 'influx' && v !== 'all')
        throw new Error('--engine is duckdb, influx or all');
      a.engine = v;
      i++;
    } else throw new Error(`unknown argument ${k}`);
  }
  return a;
}

const log = (msg: string) => process.stderr.write(`[rollup] ${msg}\n`);

const START = Date.UTC(2025, 0, 1) - 60 * MINUTE_MS; // local midnight in Warsaw

function deviceKey(i: number): string {
  return `beef0000${String(i).padStart(4, '0')}`;
}

/** Plausible three-phase readings: 19 values (voltages, currents, powers, PFs, 6 counters, frequency). */
function* generate(dev: number, days: number, stepMin: number, batch: number): Generator<Reading[]> {
  const key = deviceKey(dev);
  const counters = [1000 + dev, 2000 + dev, 3000 + dev];
  const exports = [10, 20, 30];
  const n = Math.floor((days * DAY_MS) / (stepMin * MINUTE_MS));
  let out: Reading[] = [];
  let seed = 12345 + dev * 7919;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  for (let i = 0; i < n; i++) {
    const ts = START + i * stepMin * MINUTE_MS;
    const hour = ((ts / 3_600_000) | 0) % 24;
    const load = 300 + 1500 * Math.max(0, Math.sin(((hour - 6) / 24) * 2 * Math.PI)) + rand() * 200;
    const values: Record<string, number> = { frq1: 49.95 + rand() * 0.1 };
    for (let p = 0; p < 3; p++) {
      const v = 228 + rand() * 6;
      const w = load * (0.8 + 0.4 * rand());
      const ph = p + 1;
      values[`vave${ph}`] = v;
      values[`iave${ph}`] = w / v;
      values[`pave${ph}`] = w;
      values[`pfave${ph}`] = 0.9 + rand() * 0.1;
      counters[p]! += (w / 1000) * (stepMin / 60);
      values[`eai${ph}`] = Math.round(counters[p]! * 1000) / 1000;
      values[`eae${ph}`] = exports[p]!;
      values[`eri${ph}`] = 0;
    }
    delete values.eri1;
    delete values.eri2;
    delete values.eri3;
    out.push({ deviceKey: key, ts, values });
    if (out.length >= batch) {
      yield out;
      out = [];
    }
  }
  if (out.length) yield out;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100;
}

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await fn();
  return [performance.now() - t, r];
}

interface CaseResult {
  engine: string;
  dataset: string;
  /** The history file the readings came from (`--history`). */
  history?: HistoryUsed;
  readings: number;
  values: number;
  loadSeconds: number;
  readingsPerSecond: number;
  valuesPerSecond: number;
  refreshSeconds: number;
  queries: Record<
    string,
    { rollupsMs: { p50: number; p95: number }; rawMs: { p50: number; p95: number }; ratioP50: number }
  >;
}

async function runCase(
  engine: string,
  store: TelemetryStore,
  devices: number,
  days: number,
  stepMin: number,
  reps: number,
  /** Ask for the devices of (b) concurrently (both sources), the way a comparison view does. */
  concurrentDevices = false,
  /** The readings of a history file instead of generated ones (then `days` and `stepMin` do not apply). */
  history?: HistoryPlan,
): Promise<CaseResult> {
  let readings = 0;
  let values = 0;
  const tally = history ? new HistoryTally(history) : undefined;
  const t0 = performance.now();
  for (let d = 0; d < devices; d++) {
    const batches = tally ? tally.readings(d, deviceKey(d), 20_000) : generate(d, days, stepMin, 20_000);
    for await (const batch of batches) {
      await store.write(batch);
      readings += batch.length;
      for (const r of batch) values += Object.keys(r.values).length;
    }
    log(`${engine}: device ${d + 1}/${devices} loaded (${readings} readings)`);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  log(`${engine}: loaded ${readings} readings in ${loadSeconds.toFixed(1)} s; refreshing rollups`);
  const { from, to } = tally ? tally.range() : { from: START, to: START + days * DAY_MS };
  const used = tally?.report();
  const [refreshMs] = await time(() => store.refreshRollups(tally ? to + HOUR_MS : to));
  log(`${engine}: rollups refreshed in ${(refreshMs / 1000).toFixed(1)} s`);

  const queries: CaseResult['queries'] = {};
  const measure = async (name: string, q: (source: QuerySource) => Promise<unknown>) => {
    const samples: Record<QuerySource, number[]> = { auto: [], raw: [] };
    // One warm-up each, then alternate so both sources see the same machine state.
    await q('auto');
    await q('raw');
    for (let i = 0; i < reps; i++) {
      for (const source of ['auto', 'raw'] as const) samples[source].push((await time(() => q(source)))[0]);
    }
    const r = { p50: pct(samples.auto, 50), p95: pct(samples.auto, 95) };
    const w = { p50: pct(samples.raw, 50), p95: pct(samples.raw, 95) };
    queries[name] = { rollupsMs: r, rawMs: w, ratioP50: Math.round((w.p50 / r.p50) * 10) / 10 };
    log(`${engine}: ${name}: rollups p50 ${r.p50} ms, raw p50 ${w.p50} ms, ×${queries[name]!.ratioP50}`);
  };
  await measure('a_oneDeviceHourlyVoltage', (source) =>
    store.series({
      deviceKey: deviceKey(0),
      params: ['vave1', 'vave2', 'vave3'],
      from,
      to,
      interval: '1h',
      stats: ['avg', 'min', 'max'],
      source,
    }),
  );
  await measure('b_allDevicesDailyEnergy', async (source) => {
    const daily = (d: number) =>
      store.energy({
        deviceKey: deviceKey(d),
        counters: ['eai'],
        from,
        to,
        interval: '1d',
        tz: 'Europe/Warsaw',
        source,
      });
    if (concurrentDevices) return Promise.all(Array.from({ length: devices }, (_, d) => daily(d)));
    const out = [];
    for (let d = 0; d < devices; d++) out.push(await daily(d));
    return out;
  });
  return {
    engine,
    dataset: used
      ? `${devices} devices from ${used.file} (${used.format}), ${used.days} days`
      : `${devices} devices × ${days} days at ${stepMin}-minute readings`,
    ...(used ? { history: used } : {}),
    readings,
    values,
    loadSeconds: Math.round(loadSeconds * 10) / 10,
    readingsPerSecond: Math.round(readings / loadSeconds),
    valuesPerSecond: Math.round(values / loadSeconds),
    refreshSeconds: Math.round(refreshMs / 100) / 10,
    queries,
  };
}

export default async function rollup(argv: string[]): Promise<object> {
  const args = parseArgs(argv);
  const history = args.history ? await planHistory(args.history) : undefined;
  const results: (CaseResult | { engine: string; error: string })[] = [];
  if (args.engine === 'duckdb' || args.engine === 'all') {
    const dir = mkdtempSync(join(tmpdir(), 'kilowatch-bench-rollup-'));
    try {
      const store = await createDuckDbStore({
        path: join(dir, 'bench.duckdb'),
        memoryLimit: args.memoryLimit,
      });
      try {
        const devices = history
          ? historyDevices(history, args.devicesGiven ? args.devices : undefined, 20)
          : args.devices;
        results.push(await runCase('duckdb', store, devices, args.days, 1, args.reps, false, history));
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (args.engine === 'influx' || args.engine === 'all') {
    results.push(await influxCase(args, history));
  }
  return { bench: 'rollup', args, machine: { cpus: (await import('node:os')).cpus().length }, results };
}

async function influxCase(
  args: Args,
  history: HistoryPlan | undefined,
): Promise<CaseResult | { engine: string; error: string }> {
  let server: InfluxTestServer;
  try {
    server = await startInfluxServer();
  } catch (e) {
    log(`influx: server not available: ${(e as Error).message}`);
    return { engine: 'influxdb', error: (e as Error).message };
  }
  try {
    const store = await createInfluxStore({ url: server.url, database: server.database });
    try {
      const devices = history
        ? historyDevices(
            history,
            args.influxDevicesGiven ? args.influxDevices : args.devicesGiven ? args.devices : undefined,
            20,
          )
        : args.influxDevices;
      return await runCase(
        'influxdb',
        store,
        devices,
        args.influxDays,
        args.influxStepMin,
        args.reps,
        true,
        history,
      );
    } finally {
      await store.close();
    }
  } finally {
    await server.stop();
  }
}
