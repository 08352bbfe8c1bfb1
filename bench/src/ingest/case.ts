/**
 * One ingest case: the bridge in this process on a given store and broker, fed by the publishers, through a
 * saturation phase and a steady phase, beside the store's own direct write rate.
 */
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Reading } from '@kilowatch/core';
import { type EmbeddedBroker, simulatedReading, startIngest } from '@kilowatch/ingest';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { log } from './cli.ts';
import { deviceKey, houseMeter, WORKER } from './publishers.ts';

export interface CaseResult {
  readings_per_s: number;
  p50_ms: number;
  p99_ms: number;
  steady_rate: number;
  direct_readings_per_s: number;
  direct_ratio: number;
  /** The store's direct rate just before the saturation phase and just after the steady phase. */
  direct_before_per_s: number;
  direct_after_per_s: number;
  readings: number;
  values_per_reading: number;
  max_buffer_messages: number;
  mean_batch: number;
  store_busy_s: number;
  /** CPU of the whole bench process (all threads: bridge, broker when embedded, publishers, store) per wall second. */
  saturation_cores: number;
  /** Share of the saturation phase the main event loop (bridge, and the embedded broker) was busy. */
  saturation_loop_busy: number;
  /** Same for the publishers' thread (the meters: not part of the system under test). */
  saturation_publishers_busy: number;
  /** Whether the bridge decoded in its worker thread. */
  decode_thread: boolean;
}

/** Readings the store has acknowledged from its write journal but not yet applied (DuckDB only). */
function pendingRows(store: TelemetryStore): number {
  const stats = (store as { writeStats?: () => { pendingRows: number } }).writeStats;
  return stats ? stats.call(store).pendingRows : 0;
}

/** CPU profile of this thread through the inspector (`--cpu-profile <dir>`: the saturation phase only). */
async function startProfile(): Promise<{ stop(file: string): Promise<void> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  // Nearest rank: the smallest sample with at least `q` of the samples at or below it.
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
}

export async function runCase(
  name: string,
  store: TelemetryStore,
  source: { mqttUrl: string } | { broker: EmbeddedBroker },
  opts: {
    seconds: number;
    devices: number;
    rate: number;
    publishers: number;
    backlog: number;
    profileDir?: string;
    decodeThread: boolean;
    /** Each device's MQTT account (an authenticating broker). */
    credentialsOf?: (deviceKey: string) => { username: string; password: string };
  },
): Promise<CaseResult> {
  const template = simulatedReading(houseMeter, Date.now()).values;
  const valuesPerReading = Object.keys(template).length;
  const devices = Array.from({ length: opts.devices }, (_, i) => deviceKey(0xbe01, i));
  const mqttUrl = 'broker' in source ? source.broker.url : source.mqttUrl;
  const runtime = await startIngest({
    store,
    ...source,
    clientId: `kw-bench-${name}`,
    rollupIntervalMs: 0,
    decodeThread: opts.decodeThread,
    logger: {
      info() {},
      warn: (...a) => log(`warn ${a.join(' ')}`),
      error: (...a) => log(`error ${a.join(' ')}`),
    },
  });
  let committed = 0;
  let latencies: number[] = [];
  runtime.bus.onReading((r) => {
    committed++;
    latencies.push(Date.now() - r.ts);
  });
  let maxBuffer = 0;
  const bufferProbe = setInterval(() => {
    const m = /^kilowatch_ingest_buffer_messages (\d+)/m.exec(runtime.metricsText());
    maxBuffer = Math.max(maxBuffer, Number(m?.[1] ?? 0));
  }, 100);

  // With broker authentication, each device publishes through its own connection with its own account.
  const credentials = opts.credentialsOf ? devices.map((key) => opts.credentialsOf!(key)) : undefined;
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      url: mqttUrl,
      clients: credentials ? devices.length : opts.publishers,
      devices,
      template,
      prefix: name,
      credentials,
    },
  });
  const messages: { type: string; published?: number; message?: string }[] = [];
  worker.on('message', (m) => messages.push(m));
  const waitMsg = async (type: string) => {
    for (;;) {
      const i = messages.findIndex((m) => m.type === type || m.type === 'error');
      if (i >= 0) {
        const [m] = messages.splice(i, 1);
        if (m?.type === 'error') throw new Error(m.message);
        return m!;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  await waitMsg('ready');
  // The decode thread loads its code in the background; the measured phases start once it decodes.
  const threadBy = performance.now() + 30_000;
  while (opts.decodeThread && !runtime.decodingInThread && performance.now() < threadBy)
    await new Promise((r) => setTimeout(r, 20));
  const decodeThread = runtime.decodingInThread;
  log(`${name}: decoding ${decodeThread ? 'in a worker thread' : "on the bridge's thread"}`);

  // Saturation: keep at most `backlog` readings between publish and commit.
  // Bounded: brokers keep unacknowledged messages per client in a list (aedes scans it per message).
  const backlog = opts.backlog;
  let granted = 0;
  const half = (opts.seconds * 1000) / 2;
  // Warm-up: the first writes create the device's rows and files; they are not what is measured.
  worker.postMessage({ type: 'grant', n: 2000 });
  granted += 2000;
  const warm = performance.now() + 60_000;
  while (committed < granted && performance.now() < warm) await new Promise((r) => setTimeout(r, 20));
  // The store's own rate on the same kind of readings, in batches of the bridge's size: half of its
  // window just before the saturation phase and half after the steady phase, so the ratio divides by the
  // store's rate around the bridge's measurement, not at one moment of a rate that drifts through a run.
  const directKeys = Array.from({ length: opts.devices }, (_, i) => deviceKey(0xd1e0, i));
  const directBase = Date.now() - 86_400_000;
  let direct = 0;
  const directWindow = async (ms: number): Promise<number> => {
    const n0 = direct;
    const t = performance.now();
    while (performance.now() - t < ms) {
      const batch: Reading[] = [];
      for (let k = 0; k < 2000; k++) {
        const n = direct + k;
        batch.push({
          deviceKey: directKeys[n % directKeys.length] as string,
          ts: directBase + Math.floor(n / directKeys.length),
          values: { ...template, pave1: 800 + (n % 400) },
        });
      }
      await store.write(batch);
      direct += batch.length;
    }
    return (direct - n0 - pendingRows(store)) / ((performance.now() - t) / 1000);
  };
  const directMs = Math.min(10_000, half) / 2;
  log(`${name}: direct store.write for ${directMs / 1000} s`);
  const directBefore = await directWindow(directMs);
  // What the store journaled meanwhile is applied before the bridge is timed.
  const drained = performance.now() + 30_000;
  while (pendingRows(store) > 0 && performance.now() < drained) await new Promise((r) => setTimeout(r, 20));
  log(`${name}: direct ${Math.round(directBefore)} readings/s`);

  const c0 = committed;
  log(`${name}: saturation phase ${half / 1000} s`);
  const profiler = opts.profileDir ? await startProfile() : null;
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const pubElu0 = worker.performance.eventLoopUtilization();
  const t0 = performance.now();
  while (performance.now() - t0 < half) {
    const want = committed + backlog - granted;
    if (want > 0) {
      worker.postMessage({ type: 'grant', n: want });
      granted += want;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  // Readings acknowledged from the DuckDB journal but not yet applied (a checkpoint was running) are
  // left out, here and in the direct rate: both count what DuckDB holds at the end of the window.
  const satCommitted = committed - c0 - pendingRows(store);
  const satSeconds = (performance.now() - t0) / 1000;
  const readingsPerS = satCommitted / satSeconds;
  const cpu = process.cpuUsage(cpu0);
  const satCores = (cpu.user + cpu.system) / 1e6 / satSeconds;
  const satLoop = performance.eventLoopUtilization(elu0).utilization;
  const pubLoop = worker.performance.eventLoopUtilization(pubElu0).utilization;
  log(
    `${name}: bench process used ${satCores.toFixed(2)} cores; event loops busy: bridge ${(satLoop * 100).toFixed(0)} %, publishers ${(pubLoop * 100).toFixed(0)} %`,
  );
  if (profiler && opts.profileDir) {
    const file = join(opts.profileDir, `ingest-${name}-saturation.cpuprofile`);
    await profiler.stop(file);
    log(`${name}: CPU profile of the saturation phase (bench process main thread) in ${file}`);
  }
  log(`${name}: ${Math.round(readingsPerS)} readings/s under saturation`);
  // Let the backlog drain before the steady phase.
  while (committed < granted) await new Promise((r) => setTimeout(r, 20));

  // Steady: publish at `rate` (or 80 % of the saturated rate when that is lower) and record latency.
  const rate = Math.max(1, Math.min(opts.rate, Math.floor(readingsPerS * 0.8)));
  latencies = [];
  log(`${name}: steady phase at ${rate} readings/s for ${half / 1000} s`);
  const t1 = performance.now();
  let sent = 0;
  while (performance.now() - t1 < half) {
    const due = Math.floor(((performance.now() - t1) / 1000) * rate);
    if (due > sent) {
      worker.postMessage({ type: 'grant', n: due - sent });
      granted += due - sent;
      sent = due;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  const deadline = performance.now() + 30_000;
  while (committed < granted && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  worker.postMessage({ type: 'stop' });
  await waitMsg('stopped');
  await worker.terminate();
  clearInterval(bufferProbe);
  const sorted = latencies.sort((a, b) => a - b);
  const metrics = runtime.metricsText();
  const metric = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? Number.NaN);
  const batches = metric('kilowatch_ingest_batches_total');
  const writeSeconds = metric('kilowatch_ingest_write_duration_seconds_sum');
  await runtime.stop();

  log(`${name}: direct store.write for ${directMs / 1000} s`);
  const directAfter = await directWindow(directMs);
  log(`${name}: direct ${Math.round(directAfter)} readings/s`);
  const directPerS = (directBefore + directAfter) / 2;
  return {
    readings_per_s: Math.round(readingsPerS),
    p50_ms: quantile(sorted, 0.5),
    p99_ms: quantile(sorted, 0.99),
    steady_rate: rate,
    direct_readings_per_s: Math.round(directPerS),
    direct_ratio: Math.round((readingsPerS / directPerS) * 100) / 100,
    direct_before_per_s: Math.round(directBefore),
    direct_after_per_s: Math.round(directAfter),
    readings: granted,
    values_per_reading: valuesPerReading,
    max_buffer_messages: maxBuffer,
    mean_batch: Math.round(committed / batches),
    store_busy_s: Math.round(writeSeconds * 10) / 10,
    saturation_cores: Math.round(satCores * 100) / 100,
    saturation_loop_busy: Math.round(satLoop * 100) / 100,
    saturation_publishers_busy: Math.round(pubLoop * 100) / 100,
    decode_thread: decodeThread,
  };
}
