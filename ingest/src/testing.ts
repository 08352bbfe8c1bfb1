/**
 * Test helpers shared with other packages' suites and the benchmarks: a real Mosquitto on a free loopback
 * port with its persistence in a temp dir, the rule for a missing server binary (fail under CI, skip
 * otherwise), and the store-outage scenario any engine can be put through.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@kilowatch/testkit';
import type { TelemetryStore } from '@kilowatch/tsdb';
import mqtt from 'mqtt';
import { startIngest } from './bridge.ts';

/** Path of a server binary, or null; under CI=true a missing one throws (a skip would hide it). */
export function findServerBinary(name: string, candidates: readonly string[] = []): string | null {
  for (const c of candidates) if (existsSync(c)) return c;
  try {
    const path = execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim();
    if (path) return path;
  } catch {}
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin'])
    if (existsSync(join(dir, name))) return join(dir, name);
  if (process.env.CI === 'true')
    throw new Error(`${name} is not installed (apt-get install -y ${name}); CI requires it`);
  return null;
}

/** The services' account in tests: embedded brokers are started with it, legacy publishers use it. */
export const TEST_SERVICE = {
  username: 'kilowatch-test-service',
  password: 'test-service-password',
} as const;

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

export interface MosquittoServer {
  url: string;
  port: number;
  dir: string;
  /** Stops the broker (SIGTERM) and deletes its temp dir. */
  stop(): Promise<void>;
  /** Restarts on the same port and persistence. */
  restart(): Promise<void>;
  /** Stops the broker (SIGTERM), keeping its port and persistence for `start`. */
  halt(): Promise<void>;
  /** Starts a halted broker again. */
  start(): Promise<void>;
  running(): boolean;
}

/** Mosquitto's dynamic security plugin (Debian's `mosquitto` ships it), or null; required under CI=true. */
export function findDynsecPlugin(): string | null {
  for (const c of [
    '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
    '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
    '/usr/lib/mosquitto_dynamic_security.so',
    '/usr/local/lib/mosquitto_dynamic_security.so',
  ])
    if (existsSync(c)) return c;
  if (process.env.CI === 'true')
    throw new Error(
      'mosquitto_dynamic_security.so is not installed (apt-get install -y mosquitto); CI requires it',
    );
  return null;
}

/**
 * The dynamic security plugin's file with one admin client, as `mosquitto_ctrl dynsec init <file> <admin>`
 * writes it: PBKDF2-SHA512 (101 iterations) of the password with a random 12-byte salt, the `admin` role
 * (the `$CONTROL/dynamic-security/#` topics) and a default access that denies publishing and subscribing.
 */
export function dynsecInitFile(admin: { username: string; password: string }): string {
  const salt = randomBytes(12);
  const hash = pbkdf2Sync(admin.password, salt, 101, 64, 'sha512');
  const acl = (acltype: string, topic: string) => ({ acltype, topic, allow: true });
  return JSON.stringify(
    {
      clients: [
        {
          username: admin.username,
          textName: 'Dynsec admin user',
          password: hash.toString('base64'),
          salt: salt.toString('base64'),
          iterations: 101,
          roles: [{ rolename: 'admin' }],
        },
      ],
      roles: [
        {
          rolename: 'admin',
          acls: [
            acl('publishClientSend', '$CONTROL/dynamic-security/#'),
            acl('publishClientReceive', '$CONTROL/dynamic-security/#'),
            acl('subscribePattern', '$CONTROL/dynamic-security/#'),
          ],
        },
      ],
      defaultACLAccess: {
        publishClientSend: false,
        publishClientReceive: true,
        subscribe: false,
        unsubscribe: true,
      },
    },
    null,
    2,
  );
}

export interface MosquittoOptions {
  /**
   * Authentication by the dynamic security plugin (`plugin`: its .so) with this admin, anonymous refused.
   * Without it the broker is anonymous.
   */
  dynsec?: { plugin: string; admin: { username: string; password: string } };
  /**
   * Log lines on `$SYS/broker/log/<level>` (`log_dest topic`, levels as deploy/mosquitto.conf has them)
   * instead of none: the API reads meters' connections and refused logins there.
   */
  logTopic?: boolean;
  /** Lines appended to the configuration (later settings override the harness's own). */
  extraConfig?: string[];
}

/**
 * Starts `mosquitto` on a free loopback port with persistence in a temp dir: anonymous, or with the
 * dynamic security plugin (`opts.dynsec`). Inflight and queue limits are raised: ingest acknowledges after
 * commit, so mosquitto's default of 20 inflight messages per client would cap a batch at 20.
 */
export async function startMosquitto(binary: string, opts: MosquittoOptions = {}): Promise<MosquittoServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-mosquitto-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  if (opts.dynsec) await writeFile(join(dir, 'dynamic-security.json'), dynsecInitFile(opts.dynsec.admin));
  await writeFile(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      ...(opts.dynsec
        ? [
            'allow_anonymous false',
            `plugin ${opts.dynsec.plugin}`,
            `plugin_opt_config_file ${dir}/dynamic-security.json`,
          ]
        : ['allow_anonymous true']),
      // As root, Mosquitto would switch to the `mosquitto` user, who cannot read or write this temp dir.
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      'persistence true',
      `persistence_location ${dir}/`,
      'autosave_interval 1',
      'max_inflight_messages 1000',
      'max_queued_messages 1000000',
      ...(opts.logTopic ? ['log_dest topic'] : ['log_dest none']),
      ...(opts.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  let proc: ChildProcess;
  const start = async () => {
    proc = spawn(binary, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    const exited = once(proc, 'exit').then(() => {
      throw new Error(`mosquitto exited: ${stderr}`);
    });
    await Promise.race([waitForPort(port, 10_000), exited]);
    exited.catch(() => {});
  };
  const halt = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exit = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exit;
  };
  await start();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      await start();
    },
    halt,
    start,
    running: () => proc.exitCode === null && proc.signalCode === null,
  };
}

export interface OutageScenarioOptions {
  store: TelemetryStore;
  mqttUrl: string;
  /** Takes the store's server away (stop or kill it) and brings it back. */
  outage: { begin(): Promise<void> | void; end(): Promise<void> | void };
  outageMs: number;
  /** Readings published in total (default 2,000), at `ratePerS` (default 100). */
  readings?: number;
  ratePerS?: number;
  /** The bridge's in-flight window (default 300): the buffer must stay within it. */
  maxInFlight?: number;
  deviceKey?: string;
  log?: (msg: string) => void;
}

export interface OutageScenarioResult {
  published: number;
  /** Distinct readings found in the store afterwards. */
  stored: number;
  missing: number;
  maxBufferMessages: number;
  maxInFlight: number;
  retried: number;
}

/**
 * Readings at QoS 1 through a running bridge while the store's server is away for `outageMs`: every
 * reading must be in the store afterwards, and the bridge's buffer must stay within its window (it stops
 * reading from the broker instead of growing). Used by the Mosquitto suite and the InfluxDB bench.
 */
export async function runStoreOutageScenario(opts: OutageScenarioOptions): Promise<OutageScenarioResult> {
  const n = opts.readings ?? 2000;
  const rate = opts.ratePerS ?? 100;
  const maxInFlight = opts.maxInFlight ?? 300;
  const key = opts.deviceKey ?? '0a1b2c3d4e60';
  const log = opts.log ?? (() => {});
  const runtime = await startIngest({
    store: opts.store,
    mqttUrl: opts.mqttUrl,
    clientId: `kw-outage-${key}`,
    maxInFlight,
    batchSize: 200,
    rollupIntervalMs: 0,
    logger: { info() {}, warn() {}, error() {} },
  });
  const publisher = await mqtt.connectAsync(opts.mqttUrl, { clientId: `kw-outage-pub-${key}` });
  const gauge = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)`, 'm').exec(runtime.metricsText())?.[1] ?? Number.NaN);
  let maxBuffer = 0;
  const probe = setInterval(() => {
    maxBuffer = Math.max(maxBuffer, gauge('kilowatch_ingest_buffer_messages'));
  }, 25);
  const committed = new Set<number>();
  runtime.bus.onReading((r) => {
    if (r.deviceKey === key) committed.add(r.ts);
  });
  const base = Math.floor(Date.now() / 1000) * 1000 - n * 1000 - 60_000;
  try {
    const outageAt = Math.floor(n / 4);
    let outageOver: Promise<void> | null = null;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      if (i === outageAt) {
        log(`store outage for ${opts.outageMs / 1000} s`);
        await opts.outage.begin();
        outageOver = new Promise<void>((resolve, reject) => {
          setTimeout(() => {
            Promise.resolve(opts.outage.end()).then(() => {
              log('store back');
              resolve();
            }, reject);
          }, opts.outageMs);
        });
      }
      const payload = JSON.stringify({
        ts: base + i * 1000,
        seq: i,
        values: { eai1: i, vave1: 230 + (i % 7) },
      });
      await publisher.publishAsync(`kilowatch/meters/${key}/readings`, payload, { qos: 1 });
      const ahead = (i + 1) / rate - (performance.now() - t0) / 1000;
      if (ahead > 0) await new Promise((r) => setTimeout(r, ahead * 1000));
    }
    await outageOver;
    const deadline = Date.now() + 120_000;
    while (committed.size < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await runtime.flush();
    let stored = 0;
    for await (const page of opts.store.streamRaw({
      deviceKey: key,
      from: base,
      to: base + n * 1000,
      pageSize: 1000,
    })) {
      for (const row of page) if (row.values.eai1 === (row.ts - base) / 1000) stored++;
    }
    return {
      published: n,
      stored,
      missing: n - stored,
      maxBufferMessages: maxBuffer,
      maxInFlight,
      retried: gauge('kilowatch_ingest_write_retries_total'),
    };
  } finally {
    clearInterval(probe);
    await publisher.endAsync();
    await runtime.stop();
  }
}
