/**
 * A real InfluxDB 1.x server for tests and benchmarks: Debian's `influxd` with a generated config in a
 * temp dir, listening on free loopback ports only. Never a mock.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { lookUpBinary, serverMissing } from './servers.ts';

export interface InfluxTestServer {
  url: string;
  database: string;
  /** Set when the server was started with `auth`. */
  username?: string;
  password?: string;
  stop(): Promise<void>;
  /** Signals the server without waiting (outage tests); `restart()` brings it back. */
  kill(signal?: NodeJS.Signals): void;
  /** Restarts on the same ports with the same data. */
  restart(): Promise<void>;
}

export interface InfluxTestServerOptions {
  /** Enables `auth-enabled` and creates this admin user before the database. */
  auth?: { username: string; password: string };
  database?: string;
  /** The server's `max-row-limit` (0, unlimited, by default): to test answers it cuts short. */
  maxRowLimit?: number;
}

/** Path of the `influxd` binary, or null when it is not installed. */
export function influxdPath(): string | null {
  return lookUpBinary('influxd');
}

/** Why InfluxDB tests should be skipped, or null to run them (`serverMissing`'s rule: CI never skips). */
export function influxSkipReason(): string | null {
  if (influxdPath()) return null;
  serverMissing('influxd', 'apt-get install -y influxdb');
  return 'influxd not installed (apt-get install -y influxdb): InfluxDB tests skipped';
}

/** InfluxQL identifier and string literal, for the setup statements. */
const ident = (name: string) => `"${name.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
const literal = (value: string) => `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;

function config(dir: string, rpcPort: number, httpPort: number, auth: boolean, maxRowLimit: number): string {
  return `reporting-disabled = true
bind-address = "127.0.0.1:${rpcPort}"

[meta]
  dir = "${join(dir, 'meta')}"
  logging-enabled = false

[data]
  dir = "${join(dir, 'data')}"
  wal-dir = "${join(dir, 'wal')}"
  index-version = "inmem"
  query-log-enabled = false
  cache-max-memory-size = "256m"
  cache-snapshot-memory-size = "8m"
  max-concurrent-compactions = 1
  max-series-per-database = 0
  max-values-per-tag = 0

[coordinator]
  log-queries-after = "0s"

[retention]
  enabled = false

[monitor]
  store-enabled = false

[subscriber]
  enabled = false

[http]
  enabled = true
  bind-address = "127.0.0.1:${httpPort}"
  auth-enabled = ${auth}
  log-enabled = false
  write-tracing = false
  max-row-limit = ${maxRowLimit}

[continuous_queries]
  enabled = false

[logging]
  level = "error"
  suppress-logo = true
`;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A crashed test run must not leave servers behind.
  process.on('exit', () => {
    for (const p of live) p.kill('SIGKILL');
  });
}

async function waitForPing(url: string, proc: ChildProcess, stderr: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`influxd exited during startup (${proc.exitCode ?? proc.signalCode}): ${stderr()}`);
    }
    try {
      const res = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 204) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`influxd did not answer /ping within 30 s: ${stderr()}`);
}

async function admin(url: string, q: string, auth?: { username: string; password: string }): Promise<void> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth)
    headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
  const res = await fetch(`${url}/query`, { method: 'POST', headers, body: new URLSearchParams({ q }) });
  const text = await res.text();
  if (!res.ok || text.includes('"error"'))
    throw new Error(`influxd setup "${q}" failed: ${res.status} ${text}`);
}

/** Starts a throwaway influxd on free loopback ports and creates the database. */
export async function startInfluxServer(options: InfluxTestServerOptions = {}): Promise<InfluxTestServer> {
  const bin = influxdPath();
  if (!bin) throw new Error('influxd not found: install it with `apt-get install -y influxdb`');
  installExitHook();
  const dir = await mkdtemp(join(tmpdir(), 'kw-influx-'));
  const rpcPort = await freePort();
  const httpPort = await freePort();
  const confPath = join(dir, 'influxdb.conf');
  await writeFile(
    confPath,
    config(dir, rpcPort, httpPort, options.auth !== undefined, options.maxRowLimit ?? 0),
  );
  const url = `http://127.0.0.1:${httpPort}`;
  const database = options.database ?? 'kilowatch';

  let proc: ChildProcess | null = null;
  let errTail = '';

  const launch = async (): Promise<void> => {
    errTail = '';
    const p = spawn(bin, ['-config', confPath], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env },
    });
    live.add(p);
    p.on('exit', () => live.delete(p));
    p.stderr?.on('data', (b: Buffer) => {
      errTail = (errTail + b.toString()).slice(-2000);
    });
    proc = p;
    await waitForPing(url, p, () => errTail);
  };

  const waitExit = async (p: ChildProcess, signal: NodeJS.Signals): Promise<void> => {
    if (p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once('exit', () => r()));
    // A server paused with kill('SIGSTOP') must run again to handle the signal.
    p.kill('SIGCONT');
    p.kill(signal);
    const timer = setTimeout(() => p.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  await launch();
  try {
    if (options.auth) {
      const { username, password } = options.auth;
      await admin(
        url,
        `CREATE USER ${ident(username)} WITH PASSWORD ${literal(password)} WITH ALL PRIVILEGES`,
      );
      await admin(url, `CREATE DATABASE ${ident(database)}`, options.auth);
    } else {
      await admin(url, `CREATE DATABASE ${ident(database)}`);
    }
  } catch (err) {
    if (proc) await waitExit(proc, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    url,
    database,
    ...(options.auth ? { username: options.auth.username, password: options.auth.password } : {}),
    async stop() {
      if (proc) await waitExit(proc, 'SIGTERM');
      proc = null;
      await rm(dir, { recursive: true, force: true });
    },
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      proc?.kill(signal);
    },
    async restart() {
      if (proc) await waitExit(proc, 'SIGTERM');
      await launch();
    },
  };
}
