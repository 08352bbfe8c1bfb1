/**
 * A real Kilowatch process for tests and benches: the server's one entry (`api/src/main.ts` through tsx's
 * loader, or a compiled `main.js` with plain node) as a child process on free loopback ports with a
 * throw-away data directory, ready once an HTTP answer or a log line says so. It keeps the last lines the
 * process printed for failure messages, stops with SIGTERM and then SIGKILL after a grace period, and
 * `kill()` is the kill -9 of crash tests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';

/** The repository's root (the test kit lives in `testkit/src`). */
export const REPO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * When a started process counts as ready, polled until then: an HTTP path of its own that answers (`http`,
 * by default with a 2xx), lines it printed (`log`: each text in some line since the start), or a check of
 * its own (true: ready, false: not yet, a throw: give up, the process is stopped and the start fails).
 */
export type ReadyCondition =
  | { http: string; accept?: (res: Response) => boolean | Promise<boolean> }
  | { log: readonly string[] }
  | ((p: KilowatchProcess) => boolean | Promise<boolean>);

export interface KilowatchProcessOptions {
  /**
   * The entry, relative to the repository or absolute: a `.ts` file runs with tsx's loader, anything else
   * with plain node. Default `api/src/main.ts`.
   */
  entry?: string;
  /** KW_ROLE: one side of the server deployment alone. Default: both sides in one process. */
  role?: 'api' | 'ingest';
  /**
   * Environment over the parent's and the harness's own (HOST=127.0.0.1, PORT and KW_MQTT_PORT free,
   * KW_DATA_DIR).
   */
  env?: Record<string, string>;
  /** false: of the parent's environment only PATH, for a bench that measures the process alone (default true). */
  parentEnv?: boolean;
  /** The data directory, kept when the process is gone. Default: a temp one, deleted once it is gone. */
  dataDir?: string;
  /** Default `{ http: '/api/health' }`. */
  ready?: ReadyCondition;
  /** How long the start may take before it fails (default 120 s). */
  readyTimeoutMs?: number;
  /** Pause between two checks of `ready` (default 100 ms). */
  pollMs?: number;
  /** Grace period between SIGTERM and SIGKILL in `stop` (default 10 s). */
  stopTimeoutMs?: number;
  /** Lines of output kept for failure messages (default 200). */
  keepLines?: number;
  /** Sees every whole line the process prints (stdout and stderr), as it arrives. */
  onLine?: (line: string) => void;
  /** Names the process in error messages (default: the role, else `kilowatch`). */
  name?: string;
}

export interface KilowatchProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly mqttPort: number;
  readonly dataDir: string;
  /** `performance.now()` when the process was spawned. */
  readonly spawnedAt: number;
  /** The last lines it printed (stdout and stderr), oldest first. */
  lines(): readonly string[];
  /** The same lines as one text, for failure messages. */
  output(): string;
  running(): boolean;
  /** SIGTERM, SIGKILL when it has not exited after the grace period; resolves once it is gone. */
  stop(): Promise<void>;
  /** SIGKILL (kill -9, a crash); resolves once it is gone. */
  kill(): Promise<void>;
}

/** Starts a Kilowatch process and waits until it is ready (see `KilowatchProcessOptions`). */
export async function startKilowatch(opts: KilowatchProcessOptions = {}): Promise<KilowatchProcess> {
  const name = opts.name ?? opts.role ?? 'kilowatch';
  const entry = opts.entry ?? 'api/src/main.ts';
  const entryPath = isAbsolute(entry) ? entry : join(REPO_DIR, entry);
  const port = await freePort();
  const mqttPort = await freePort();
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), `kw-${name.replace(/\W+/g, '-')}-`)));
  const keepLines = opts.keepLines ?? 200;
  const kept: string[] = [];
  const logWanted = opts.ready && typeof opts.ready === 'object' && 'log' in opts.ready ? opts.ready.log : [];
  const logSeen = new Set<string>();

  // Node itself with tsx's loader, not the tsx launcher: the launcher runs the entry in a child process of
  // its own, and a launcher killed after the grace period would leave that child running.
  const args = entryPath.endsWith('.ts') ? ['--import', 'tsx', entryPath] : [entryPath];
  const child = spawn(process.execPath, args, {
    cwd: REPO_DIR,
    env: {
      ...(opts.parentEnv === false ? { PATH: process.env.PATH } : process.env),
      HOST: '127.0.0.1',
      PORT: String(port),
      KW_MQTT_PORT: String(mqttPort),
      KW_DATA_DIR: dataDir,
      ...(opts.role ? { KW_ROLE: opts.role } : {}),
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const spawnedAt = performance.now();
  // Gone once it exited and its output is read to the end ('close'), or a moment after the exit should a
  // process of its own still hold the pipes.
  const closed = new Promise<void>((ok) => child.once('close', () => ok()));
  const gone = new Promise<void>((ok) => child.once('exit', () => ok())).then(() =>
    Promise.race([closed, new Promise<void>((ok) => setTimeout(ok, 1000).unref())]),
  );
  const running = () => child.exitCode === null && child.signalCode === null;

  const line = (text: string) => {
    kept.push(text);
    if (kept.length > keepLines) kept.shift();
    for (const want of logWanted) if (text.includes(want)) logSeen.add(want);
    opts.onLine?.(text);
  };
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (b: Buffer) => {
      const parts = (partial + b.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const p of parts) line(p);
    });
    stream?.on('end', () => {
      if (partial) line(partial);
      partial = '';
    });
  }

  const cleanUp = async () => {
    // The process's last writes can still land while the folder goes (ENOTEMPTY on a busy machine): retried.
    if (ownDir) await rm(dataDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 500 });
  };
  const end = async (signal: 'SIGTERM' | 'SIGKILL') => {
    if (running()) {
      child.kill(signal);
      const timer =
        signal === 'SIGTERM'
          ? setTimeout(() => child.kill('SIGKILL'), opts.stopTimeoutMs ?? 10_000)
          : undefined;
      await gone;
      clearTimeout(timer);
    }
    await cleanUp();
  };

  const proc: KilowatchProcess = {
    name,
    child,
    pid: child.pid ?? -1,
    url: `http://127.0.0.1:${port}`,
    port,
    mqttPort,
    dataDir,
    spawnedAt,
    lines: () => kept,
    output: () => kept.join('\n'),
    running,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };

  const ready = readyCheck(opts.ready ?? { http: '/api/health' }, () => logSeen.size === logWanted.length);
  const fail = async (why: string): Promise<never> => {
    await proc.stop();
    throw new Error(`${name} ${why}; its last lines:\n${proc.output()}`);
  };
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 120_000);
  for (;;) {
    if (!running()) {
      await gone;
      return fail(`exited (${child.exitCode ?? child.signalCode}) before it was ready`);
    }
    let ok: boolean;
    try {
      ok = await ready(proc);
    } catch (e) {
      return fail(`did not start: ${(e as Error).message}`);
    }
    if (ok && running()) return proc;
    if (Date.now() > deadline) return fail(`was not ready after ${opts.readyTimeoutMs ?? 120_000} ms`);
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 100));
  }
}

/**
 * Starts processes together (their starts overlap, as replicas of one deployment do) and answers them once
 * all are ready; when one fails to start, those that did are stopped and the first failure is thrown.
 */
export async function startTogether(all: readonly KilowatchProcessOptions[]): Promise<KilowatchProcess[]> {
  const started = await Promise.allSettled(all.map((opts) => startKilowatch(opts)));
  const failed = started.find((s) => s.status === 'rejected');
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  if (!failed) return ok;
  await Promise.all(ok.map((p) => p.stop()));
  throw failed.reason;
}

function readyCheck(
  cond: ReadyCondition,
  allLogged: () => boolean,
): (p: KilowatchProcess) => boolean | Promise<boolean> {
  if (typeof cond === 'function') return cond;
  if ('log' in cond) return allLogged;
  const accept = cond.accept ?? ((res: Response) => res.ok);
  return async (p) => {
    let res: Response;
    try {
      res = await fetch(`${p.url}${cond.http}`);
    } catch {
      return false; // not listening yet
    }
    const ok = await accept(res);
    if (!res.bodyUsed) await res.body?.cancel();
    return ok;
  };
}
