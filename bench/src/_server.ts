/**
 * The embedded deployment as a household runs it, for the benches that measure the whole process: the
 * compiled server (`pnpm build server` first) started with plain `node` on free ports and a throw-away
 * data directory, demo on. Reads the process's memory and CPU from /proc (Linux).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_DIR, startKilowatch } from '@kilowatch/testkit';

export const log = (bench: string, msg: string) => process.stderr.write(`[${bench} bench] ${msg}\n`);

export interface RunningServer {
  pid: number;
  base: string;
  /** Port of the embedded MQTT broker. */
  mqttPort: number;
  dataDir: string;
  /** Milliseconds from spawn to the port's first answer (503 "starting" while the server loads). */
  firstAnswerMs: number;
  /** Milliseconds from spawn to the first answer of /api/health from the API itself (not "starting"). */
  readyMs: number;
  output(): string;
  stop(): Promise<void>;
}

/** Compiles the server (esbuild, ~1 s), so the bench measures the current sources. */
export function buildServer(): void {
  const r = spawnSync(process.execPath, [join(REPO_DIR, 'scripts', 'build.mjs'), 'server'], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('pnpm build server failed');
}

export async function startServer(env: Record<string, string> = {}): Promise<RunningServer> {
  let firstAnswerMs = Number.NaN;
  const server = await startKilowatch({
    entry: 'api/dist/main.js',
    name: 'the server',
    env: {
      KW_DEMO: 'on',
      // The benches sign in to the demo far more often than a visitor may.
      KW_DEMO_SIGNINS_PER_MINUTE: '100000',
      KW_DEMO_MAX_WORKSPACES: '100000',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      ...env,
    },
    readyTimeoutMs: 180_000,
    pollMs: 20,
    stopTimeoutMs: 15_000,
    ready: async (p) => {
      try {
        const res = await fetch(`${p.url}/api/health`);
        const body = (await res.json().catch(() => ({}))) as { status?: string };
        if (Number.isNaN(firstAnswerMs)) firstAnswerMs = performance.now() - p.spawnedAt;
        return body.status !== 'starting';
      } catch {
        return false; // not listening yet
      }
    },
  });
  const readyMs = performance.now() - server.spawnedAt;
  return {
    pid: server.pid,
    base: server.url,
    mqttPort: server.mqttPort,
    dataDir: server.dataDir,
    firstAnswerMs,
    readyMs,
    output: server.output,
    stop: server.stop,
  };
}

/** Resident memory now and at its peak (MB), from /proc/<pid>/status. */
export function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

/**
 * What of the process's resident memory is anonymous, and how much of that the allocators have already
 * given back lazily (`MADV_FREE`: counted in RSS until the kernel needs the pages), MB, from
 * /proc/<pid>/smaps_rollup. Walks every mapping: for the moments measured, not for a sampler.
 */
export function residentOf(pid: number): { anonMb: number; lazyFreeMb: number } {
  const r = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(r)?.[1] ?? Number.NaN);
  return { anonMb: Math.round(kb('Anonymous') / 1024), lazyFreeMb: Math.round(kb('LazyFree') / 1024) };
}

/**
 * The server's own count of its memory from /metrics, MB: V8's heap (used, total), memory held outside
 * it (buffers, PGlite's WebAssembly memory) and the embedded store's by tag (in memory; spilled).
 */
export async function memoryMetrics(base: string): Promise<{
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  store: Record<string, number>;
}> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
  const one = (name: string) => mb(Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? Number.NaN));
  const store: Record<string, number> = {};
  for (const m of text.matchAll(/^kilowatch_store_(memory|temporary)_bytes\{tag="(\w+)"\} (\d+)/gm)) {
    const v = mb(Number(m[3]));
    if (v > 0) store[m[1] === 'memory' ? m[2]! : `${m[2]} (spilled)`] = v;
  }
  return {
    heapUsedMb: one('nodejs_heap_used_bytes'),
    heapTotalMb: one('nodejs_heap_total_bytes'),
    externalMb: one('nodejs_external_memory_bytes'),
    store,
  };
}

/** CPU seconds the process has used (every thread), from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function health(base: string): Promise<{ demoHistory?: { state?: string } }> {
  const res = await fetch(`${base}/api/health`);
  return (await res.json()) as { demoHistory?: { state?: string } };
}

/** Signs in to the demo (POST /api/account/demo) and answers its access token. */
export async function demoToken(base: string): Promise<string> {
  const res = await fetch(`${base}/api/account/demo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  if (!res.ok) throw new Error(`demo sign-in: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

export async function getJson<T>(base: string, path: string, token: string): Promise<T> {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
  return (await res.json()) as T;
}

/** Nearest-rank percentile of `xs` (ms). */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
}

export const round1 = (x: number) => Math.round(x * 10) / 10;
