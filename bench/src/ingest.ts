/**
 * `pnpm bench ingest [--seconds 40] [--devices 50] [--rate 5000] [--publishers <devices>] [--backlog 4000] [--skip-influx]
 *   [--outage 30] [--cpu-profile <dir>] [--no-decode-thread] [--memory-limit 1GB|duckdb] [--auth-compare [--pairs 3]]`
 * `pnpm bench ingest --engine server [--seconds 40] [--devices 50] [--rate 5000]`: the server deployment's
 * ingest as the image runs it (`node main.js`, KW_ROLE=ingest, compiled once into api/dist) behind Mosquitto
 * into InfluxDB, with one and then two ingest processes sharing the meters' topics in the same run.
 *
 * Simulated three-phase readings (~40 values each) published over MQTT at QoS 1 by publisher clients in
 * a worker thread, (a) into the embedded broker + DuckDB (file in a temp dir) and (b) into Mosquitto +
 * InfluxDB. Each case runs a saturation phase (as fast as the bridge commits, with a bounded backlog:
 * readings/s) and a steady phase at `--rate` (publish → committed latency, p50/p99), and measures the
 * store's own `write` rate on the same readings in the same run, half before and half after them. `--no-decode-thread` decodes on the
 * bridge's own thread (the embedded case decodes in a worker thread by default), for comparison.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { Reading } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import { influxdPath, startInfluxServer } from '@kilowatch/influx/testing';
import {
  checkMeterTopic,
  createMemoryMeterAuth,
  DEMO_DEVICES,
  type EmbeddedBroker,
  type MeterTopicCache,
  simulatedReading,
  startEmbeddedBroker,
  startIngest,
} from '@kilowatch/ingest';
import { findServerBinary, runStoreOutageScenario, startMosquitto } from '@kilowatch/ingest/testing';
import { freePort } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt from 'mqtt';
import { memoryLimitArg } from './memory.ts';

const log = (msg: string) => process.stderr.write(`[ingest bench] ${msg}\n`);

function arg(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : dflt;
}

function strArg(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

const houseMeter = DEMO_DEVICES.find((d) => d.kind === 'three-phase')!;
const deviceKey = (prefix: number, i: number) =>
  `${prefix.toString(16).padStart(4, '0')}${i.toString(16).padStart(8, '0')}`;

/**
 * Publishers in a worker thread, so they do not share the bridge's event loop (meters are elsewhere); each device
 * publishes through one connection, so its readings arrive in order as a real meter's do.
 *
 * The meters are not the system under test, yet on this machine they share its two cores: they speak MQTT 3.1.1
 * over plain sockets (CONNECT, QoS 1 PUBLISH, PUBACKs read and dropped, DISCONNECT) and build each payload from
 * a prepared template, so a reading costs the publishers a few microseconds instead of a full client's
 * bookkeeping. The broker and the bridge see ordinary MQTT traffic.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { url, clients, devices, template, prefix, credentials } = workerData;
const { hostname, port } = new URL(url);
const last = new Map();
let budget = 0; let stopped = false; let published = 0; let packetId = 0;
const rest = JSON.stringify(Object.fromEntries(Object.entries(template).filter(([k]) => k !== 'pave1'))).slice(1);
const topics = devices.map((key) => Buffer.from('kilowatch/meters/' + key + '/readings'));
function varint(n) { const out = []; do { let b = n % 128; n = Math.floor(n / 128); if (n > 0) b |= 128; out.push(b); } while (n > 0); return out; }
const str = (s) => { const b = Buffer.from(s); return Buffer.concat([Buffer.from([b.length >> 8, b.length & 255]), b]); };
function connect(clientId, login) {
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname);
    sock.setNoDelay(true);
    // Clean session; with a login, the user name and password flags and fields.
    const body = Buffer.concat([Buffer.from([0, 4, 77, 81, 84, 84, 4, login ? 0xc2 : 2, 0, 0]), str(clientId), ...(login ? [str(login.username), str(login.password)] : [])]);
    sock.once('error', reject);
    sock.once('connect', () => sock.write(Buffer.concat([Buffer.from([0x10, ...varint(body.length)]), body])));
    let buf = Buffer.alloc(0); let connected = false;
    sock.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      // Skip whole packets (PUBACKs); the first is the CONNACK.
      for (;;) {
        let len = 0, mul = 1, i = 1;
        for (; i < buf.length && i < 5; i++) { len += (buf[i] & 127) * mul; mul *= 128; if ((buf[i] & 128) === 0) break; }
        if (i >= buf.length || buf.length < i + 1 + len) break;
        if (!connected) {
          connected = true;
          if (buf[0] !== 0x20 || buf[i + 2] !== 0) { reject(new Error('CONNACK refused')); return; }
          resolve(sock);
        }
        buf = buf.subarray(i + 1 + len);
      }
    });
  });
}
function publish(sock, topic, payload) {
  packetId = packetId % 65535 + 1;
  const p = Buffer.from(payload);
  const len = 2 + topic.length + 2 + p.length;
  sock.write(Buffer.concat([Buffer.from([0x32, ...varint(len), topic.length >> 8, topic.length & 255]), topic, Buffer.from([packetId >> 8, packetId & 255]), p]));
}
const conns = [];
async function main() {
  for (let c = 0; c < clients; c++) conns.push(await connect('kw-bench-pub-' + prefix + '-' + c, credentials && credentials[c]));
  parentPort.postMessage({ type: 'ready' });
  let d = 0;
  let scheduled = false;
  // Runs while there is budget and sleeps until the next grant otherwise (no spinning on an empty budget).
  const pump = () => {
    scheduled = false;
    if (stopped || budget <= 0) return;
    const n = Math.min(budget, 500);
    for (const c of conns) c.cork();
    for (let k = 0; k < n; k++) {
      d = (d + 1) % devices.length;
      const key = devices[d];
      const ts = Math.max(Date.now(), (last.get(key) || 0) + 1);
      last.set(key, ts);
      const payload = '{"ts":' + ts + ',"values":{"pave1":' + (800 + (published % 400)) + ',' + rest + '}';
      publish(conns[d % conns.length], topics[d], payload);
      published++;
    }
    for (const c of conns) c.uncork();
    budget -= n;
    if (budget > 0) { scheduled = true; setImmediate(pump); }
  };
  parentPort.on('message', (m) => {
    if (m.type === 'grant') { budget += m.n; if (!scheduled) { scheduled = true; setImmediate(pump); } }
    if (m.type === 'stop') {
      stopped = true;
      Promise.all(conns.map((c) => new Promise((r) => { c.end(Buffer.from([0xe0, 0]), r); }))).then(() => parentPort.postMessage({ type: 'stopped', published }));
    }
  });
  pump();
}
main().catch((e) => { parentPort.postMessage({ type: 'error', message: String(e) }); });
`;

interface CaseResult {
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

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  // Nearest rank: the smallest sample with at least `q` of the samples at or below it.
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] as number;
}

async function runCase(
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

const ROOT = join(import.meta.dirname, '..', '..');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `processes` ingest processes of the compiled server behind Mosquitto into InfluxDB. Committed readings
 * are counted from their `/metrics`; publish → committed latency from the live readings they publish on
 * `kilowatch/live/+` after each commit (QoS 0: a sample lost under load is a latency not counted).
 */
async function runServerCase(
  processes: number,
  main: string,
  opts: { seconds: number; devices: number; rate: number; publishers: number; backlog: number },
): Promise<object> {
  const server = await startInfluxServer();
  const mosquitto = await startMosquitto(findServerBinary('mosquitto', ['/usr/sbin/mosquitto']) as string);
  const children: { child: ChildProcess; port: number; output: string }[] = [];
  const live = await mqtt.connectAsync(mosquitto.url, { clientId: `kw-bench-live-${processes}` });
  try {
    for (let i = 0; i < processes; i++) {
      const port = await freePort();
      const child = spawn(process.execPath, [main], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH,
          KW_ROLE: 'ingest',
          PORT: String(port),
          MQTT_URL: mosquitto.url,
          INFLUX_URL: server.url,
          INFLUX_DB: server.database,
          KW_ROLLUP_INTERVAL_MS: '0',
          KW_INGEST_CLIENT_ID: `kw-bench-ingest-${processes}-${i}`,
          KW_DATA_DIR: join(tmpdir(), `kw-bench-server-${process.pid}-${processes}-${i}`),
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const c = { child, port, output: '' };
      child.stdout?.on('data', (d) => (c.output += String(d)));
      child.stderr?.on('data', (d) => (c.output += String(d)));
      children.push(c);
    }
    for (const c of children) {
      const by = performance.now() + 90_000;
      for (;;) {
        if (c.child.exitCode !== null) throw new Error(`ingest exited: ${c.output}`);
        const r = await fetch(`http://127.0.0.1:${c.port}/api/health/ready`).catch(() => null);
        if (r?.status === 200) break;
        if (performance.now() > by) throw new Error(`ingest not ready: ${c.output}`);
        await sleep(200);
      }
    }
    let committed = 0;
    const poll = async () => {
      let n = 0;
      for (const c of children) {
        const text = await (await fetch(`http://127.0.0.1:${c.port}/metrics`)).text();
        n += Number(/^kilowatch_ingest_readings_stored_total (\d+)/m.exec(text)?.[1] ?? 0);
      }
      committed = n;
    };
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await poll().catch(() => {});
        await sleep(100);
      }
    })();
    let latencies: number[] = [];
    await live.subscribeAsync('kilowatch/live/+', { qos: 0 });
    live.on('message', (_t, payload) => {
      const ts = /"ts":(\d+)/.exec(payload.toString('latin1'))?.[1];
      if (ts) latencies.push(Date.now() - Number(ts));
    });
    const template = simulatedReading(houseMeter, Date.now()).values;
    const devices = Array.from({ length: opts.devices }, (_, i) => deviceKey(0xbe02, i));
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        url: mosquitto.url,
        clients: opts.publishers,
        devices,
        template,
        prefix: `server-${processes}`,
      },
    });
    const ready = new Promise<void>((resolve, reject) =>
      worker.on('message', (m: { type: string; message?: string }) => {
        if (m.type === 'ready') resolve();
        if (m.type === 'error') reject(new Error(m.message));
      }),
    );
    await ready;
    let granted = 0;
    const grant = (n: number) => {
      worker.postMessage({ type: 'grant', n });
      granted += n;
    };
    const drain = async (ms: number) => {
      const by = performance.now() + ms;
      while (committed < granted && performance.now() < by) await sleep(50);
    };
    grant(2000);
    await drain(60_000);
    const half = (opts.seconds * 1000) / 2;
    log(`server, ${processes} ingest: saturation phase ${half / 1000} s`);
    const c0 = committed;
    const t0 = performance.now();
    while (performance.now() - t0 < half) {
      const want = committed + opts.backlog - granted;
      if (want > 0) grant(want);
      await sleep(20);
    }
    const readingsPerS = (committed - c0) / ((performance.now() - t0) / 1000);
    log(`server, ${processes} ingest: ${Math.round(readingsPerS)} readings/s under saturation`);
    await drain(60_000);
    const rate = Math.max(1, Math.min(opts.rate, Math.floor(readingsPerS * 0.8)));
    log(`server, ${processes} ingest: steady phase at ${rate} readings/s for ${half / 1000} s`);
    latencies = [];
    const t1 = performance.now();
    let sent = 0;
    while (performance.now() - t1 < half) {
      const due = Math.floor(((performance.now() - t1) / 1000) * rate);
      if (due > sent) {
        grant(due - sent);
        sent = due;
      }
      await sleep(5);
    }
    await drain(30_000);
    const sorted = latencies.sort((a, b) => a - b);
    worker.postMessage({ type: 'stop' });
    await worker.terminate();
    polling = false;
    await poller;
    return {
      processes,
      readings_per_s: Math.round(readingsPerS),
      steady_rate: rate,
      p50_ms: quantile(sorted, 0.5),
      p99_ms: quantile(sorted, 0.99),
      latency_samples: sorted.length,
      readings: granted,
      committed,
    };
  } finally {
    await live.endAsync();
    for (const c of children) {
      c.child.kill('SIGTERM');
      if (c.child.exitCode === null) await new Promise((r) => c.child.once('exit', r));
    }
    await mosquitto.stop();
    await server.stop();
  }
}

/** `--engine server`: one, then two ingest processes, in one run. */
async function serverEngine(args: string[]): Promise<object> {
  const opts = {
    seconds: arg(args, 'seconds', 40),
    devices: arg(args, 'devices', 50),
    rate: arg(args, 'rate', 5000),
    publishers: arg(args, 'publishers', arg(args, 'devices', 50)),
    backlog: arg(args, 'backlog', 4000),
  };
  if (!findServerBinary('mosquitto', ['/usr/sbin/mosquitto']) || !influxdPath())
    return { skipped: 'mosquitto or influxd not installed' };
  const out = join(ROOT, 'api', 'dist', `bench-${process.pid}`);
  const build = spawnSync(process.execPath, ['scripts/build.mjs', 'server', '--outdir', out], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`the server build failed: ${build.stdout}${build.stderr}`);
  try {
    const one = await runServerCase(1, join(out, 'main.js'), opts);
    const two = await runServerCase(2, join(out, 'main.js'), opts);
    return { one_ingest: one, two_ingest: two, config: opts };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

export default async function (args: string[]): Promise<object> {
  if (strArg(args, 'engine') === 'server') return serverEngine(args);
  const opts = {
    seconds: arg(args, 'seconds', 40),
    devices: arg(args, 'devices', 50),
    rate: arg(args, 'rate', 5000),
    publishers: arg(args, 'publishers', arg(args, 'devices', 50)),
    backlog: arg(args, 'backlog', 4000),
    profileDir: strArg(args, 'cpu-profile'),
    decodeThread: !args.includes('--no-decode-thread'),
  };
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-ingest-'));
  try {
    if (args.includes('--auth-compare'))
      return { auth_compare: await authCompare(dir, args, opts), config: opts };
    // Meters anonymous, as before accounts: the broker's own cost is compared with `--auth-compare`.
    const broker = await startEmbeddedBroker({ port: 0, allowAnonymous: true });
    const store = await createDuckDbStore({
      path: join(dir, 'telemetry.duckdb'),
      memoryLimit: memoryLimitArg(args),
    });
    let embedded: CaseResult;
    try {
      embedded = await runCase('embedded', store, { broker }, opts);
    } finally {
      await store.close();
      await broker.close();
    }

    let influx: CaseResult | { skipped: string };
    const mosquittoBin = args.includes('--skip-influx')
      ? null
      : findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
    if (args.includes('--skip-influx')) influx = { skipped: '--skip-influx' };
    else if (!mosquittoBin || !influxdPath()) influx = { skipped: 'mosquitto or influxd not installed' };
    else {
      const server = await startInfluxServer();
      const mosquitto = await startMosquitto(mosquittoBin);
      const istore = await createInfluxStore({ url: server.url, database: server.database });
      try {
        influx = await runCase('influx', istore, { mqttUrl: mosquitto.url }, opts);
      } finally {
        await istore.close();
        await mosquitto.stop();
        await server.stop();
      }
    }
    // `--outage [seconds]`: InfluxDB killed mid-stream for 30 s behind Mosquitto; nothing may be lost.
    let influx_outage: object | undefined;
    if (args.includes('--outage') && mosquittoBin && influxdPath()) {
      const server = await startInfluxServer();
      const mosquitto = await startMosquitto(mosquittoBin);
      const istore = await createInfluxStore({ url: server.url, database: server.database, timeoutMs: 2000 });
      try {
        const outageMs = arg(args, 'outage', 30) * 1000;
        influx_outage = await runStoreOutageScenario({
          store: istore,
          mqttUrl: mosquitto.url,
          outage: { begin: () => server.kill('SIGKILL'), end: () => server.restart() },
          outageMs,
          readings: Math.round((outageMs / 1000) * 100 * 2),
          ratePerS: 100,
          maxInFlight: 500,
          log,
        });
        log(`influx outage: ${JSON.stringify(influx_outage)}`);
      } finally {
        await istore.close();
        await mosquitto.stop();
        await server.stop();
      }
    }
    return { ...embedded, influx, ...(influx_outage ? { influx_outage } : {}), config: opts };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `--auth-compare [--pairs 3]`: the embedded case with anonymous meters (open) and with every meter on its
 * own account (auth: the broker checks the password at connect and each publish's topic against the
 * device), in adjacent pairs whose order alternates (open–auth, auth–open, …) so that a machine that
 * drifts through the run weighs on both sides alike; each round a fresh broker and DuckDB file. Each
 * pair gives three costs of authentication, and the answer is their medians over the pairs (one round
 * disturbed by a burst of other work moves a median little, a mean a lot):
 * - `cost`: 1 − auth rate ÷ open rate;
 * - `cost_vs_direct`: the same of each round's rate over the store's own direct rate in that round;
 * - `cpu_cost`: the process's CPU per reading with authentication ÷ without, − 1 (CPU spent is the least
 *   sensitive to other processes taking the cores).
 */
async function authCompare(
  dir: string,
  args: string[],
  opts: Parameters<typeof runCase>[3],
): Promise<object> {
  const pairs = Math.max(1, arg(args, 'pairs', 3));
  const order = Array.from({ length: pairs }, (_, p) => (p % 2 === 0 ? [false, true] : [true, false])).flat();
  const rounds: { auth: boolean; pair: number; result: CaseResult }[] = [];
  for (const [i, auth] of order.entries()) {
    const meters = createMemoryMeterAuth();
    const accounts = new Map<string, { username: string; password: string }>();
    const broker = await startEmbeddedBroker(
      auth ? { port: 0, auth: meters } : { port: 0, allowAnonymous: true },
    );
    const store = await createDuckDbStore({
      path: join(dir, `telemetry-${i}.duckdb`),
      memoryLimit: memoryLimitArg(args),
    });
    try {
      const name = auth ? 'auth' : 'open';
      log(`round ${i + 1}/${order.length}: ${auth ? 'meters on their own accounts' : 'anonymous meters'}`);
      const result = await runCase(
        `embedded-${name}-${i}`,
        store,
        { broker },
        {
          ...opts,
          ...(auth
            ? {
                credentialsOf: (key: string) => {
                  const a = accounts.get(key) ?? meters.issue(key);
                  accounts.set(key, a);
                  return a;
                },
              }
            : {}),
        },
      );
      rounds.push({ auth, pair: Math.floor(i / 2), result });
    } finally {
      await store.close();
      await broker.close();
    }
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = s.length >> 1;
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const cpuPerReading = (r: CaseResult) => (r.saturation_cores * 1e6) / r.readings_per_s;
  const perPair = Array.from({ length: pairs }, (_, p) => {
    const open = rounds.find((r) => r.pair === p && !r.auth)!.result;
    const auth = rounds.find((r) => r.pair === p && r.auth)!.result;
    return {
      cost: 1 - auth.readings_per_s / open.readings_per_s,
      cost_vs_direct: 1 - auth.direct_ratio / open.direct_ratio,
      cpu_cost: cpuPerReading(auth) / cpuPerReading(open) - 1,
    };
  });
  const r3 = (x: number) => Math.round(x * 1000) / 1000;
  // The broker's per-publish work for a meter, alone, in CPU time (what other processes do to the clock
  // does not count): the first publish to a topic checks and rewrites it, later ones find it cached.
  const topicCheck = (cached: boolean) => {
    const key = deviceKey(0xbe01, 7);
    const topics = [`kilowatch/meters/${key}/readings`, `tele/tasmota_${key.slice(6).toUpperCase()}/SENSOR`];
    const n = 1_000_000;
    let cache: MeterTopicCache = new Map();
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) {
      if (!cached) cache = new Map();
      if (checkMeterTopic(cache, key, topics[i & 1]!).refusal) throw new Error('refused');
    }
    const used = process.cpuUsage(t);
    return ((used.user + used.system) * 1000) / n;
  };
  const checkNs = {
    first: median([0, 1, 2].map(() => topicCheck(false))),
    cached: median([0, 1, 2].map(() => topicCheck(true))),
  };
  const side = (auth: boolean, f: (r: CaseResult) => number) =>
    median(rounds.filter((r) => r.auth === auth).map((r) => f(r.result)));
  return {
    pairs,
    cost: r3(median(perPair.map((p) => p.cost))),
    cost_vs_direct: r3(median(perPair.map((p) => p.cost_vs_direct))),
    cpu_cost: r3(median(perPair.map((p) => p.cpu_cost))),
    per_pair: perPair.map((p) => ({
      cost: r3(p.cost),
      cost_vs_direct: r3(p.cost_vs_direct),
      cpu_cost: r3(p.cpu_cost),
    })),
    topic_check_ns: { first: Math.round(checkNs.first), cached: Math.round(checkNs.cached) },
    topic_check_share_of_cpu_per_reading:
      Math.round((checkNs.cached / 1000 / side(false, cpuPerReading)) * 1e6) / 1e6,
    open_readings_per_s: Math.round(side(false, (r) => r.readings_per_s)),
    auth_readings_per_s: Math.round(side(true, (r) => r.readings_per_s)),
    open_cpu_us_per_reading: Math.round(side(false, cpuPerReading) * 10) / 10,
    auth_cpu_us_per_reading: Math.round(side(true, cpuPerReading) * 10) / 10,
    open_p99_ms: side(false, (r) => r.p99_ms),
    auth_p99_ms: side(true, (r) => r.p99_ms),
    rounds: rounds.map((r) => ({
      pair: r.pair,
      auth: r.auth,
      readings_per_s: r.result.readings_per_s,
      p99_ms: r.result.p99_ms,
      direct_readings_per_s: r.result.direct_readings_per_s,
      direct_ratio: r.result.direct_ratio,
      saturation_cores: r.result.saturation_cores,
      cpu_us_per_reading: Math.round(cpuPerReading(r.result) * 10) / 10,
    })),
  };
}
