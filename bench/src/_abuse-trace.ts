/**
 * `pnpm bench abuse --trace`: where the second client's time goes while the worst requests run. Linux only
 * (it reads `/proc`); elsewhere the trace is empty.
 *
 * - Each second-client answer is split into the time before the server saw the request (the server's
 *   event loop busy or its thread off the CPU), the server's own time (request to last byte written), and
 *   within it the time spent waiting for the metadata database (`sql.query`) and the telemetry store
 *   (`health`, `latest`).
 * - The server's main thread is sampled every 2 ms from `/proc/thread-self/schedstat`: each stretch of
 *   more than 15 ms between two samples is split into CPU it ran, time it waited on the run queue (another
 *   thread or process had the core) and the rest (asleep inside a synchronous call: a lock, a disk read).
 * - Every thread of the process is read from `/proc/self/task` before and after each request: CPU time
 *   per thread name (DuckDB's threads, libuv's pool, workers, V8's helpers) shows what competes with the
 *   main thread for the cores.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Header the second client sets on each request: its sequence number. */
export const PROBE_HEADER = 'x-bench-probe';

interface ProbeServerSide {
  receivedAt: number;
  finishedAt: number;
  parts: Record<string, number>;
}

function schedstat(path: string): [number, number] | null {
  try {
    const [cpu, wait] = readFileSync(path, 'utf8').split(' ');
    return [Number(cpu), Number(wait)];
  } catch {
    return null;
  }
}

/** CPU ns per thread of this process, keyed `<tid>` (`main` for the main thread). */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const [cpu] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ');
      out.set(tid === String(process.pid) ? 'main' : tid, Number(cpu));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

export interface Stall {
  at: number;
  wallMs: number;
  cpuMs: number;
  runQueueMs: number;
  asleepMs: number;
}

export function startTrace(server: Server, components: Record<string, { obj: object; method: string }>) {
  const als = new AsyncLocalStorage<Record<string, number>>();
  const probes = new Map<number, ProbeServerSide>();
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const id = Number(req.headers[PROBE_HEADER]);
    if (!Number.isFinite(id)) return;
    const entry: ProbeServerSide = {
      receivedAt: performance.timeOrigin + performance.now(),
      finishedAt: 0,
      parts: {},
    };
    probes.set(id, entry);
    // Everything the server does for this request (Fastify's listener runs after this one) sees `parts`.
    als.enterWith(entry.parts);
    res.once('finish', () => {
      entry.finishedAt = performance.timeOrigin + performance.now();
    });
  };
  server.prependListener('request', onRequest);
  const restore: (() => void)[] = [];
  for (const [name, { obj, method }] of Object.entries(components)) {
    const target = obj as Record<string, unknown>;
    const original = target[method] as (...a: unknown[]) => unknown;
    target[method] = function (this: unknown, ...a: unknown[]) {
      const parts = als.getStore();
      const result = original.apply(this, a);
      if (!parts || !(result instanceof Promise)) return result;
      const t = performance.now();
      const add = () => {
        parts[name] = (parts[name] ?? 0) + performance.now() - t;
      };
      result.then(add, add);
      return result;
    };
    restore.push(() => {
      target[method] = original;
    });
  }

  const stalls: Stall[] = [];
  /** The main thread's CPU clock (ms) against the epoch (ms), every 2 ms. */
  const timeline = { at: [] as number[], cpu: [] as number[] };
  let last = schedstat('/proc/thread-self/schedstat');
  let lastWall = performance.now();
  const timer = setInterval(() => {
    const now = schedstat('/proc/thread-self/schedstat');
    const wall = performance.now();
    if (now) {
      timeline.at.push(performance.timeOrigin + wall);
      timeline.cpu.push(now[0] / 1e6);
    }
    if (now && last && wall - lastWall > 15) {
      const cpuMs = (now[0] - last[0]) / 1e6;
      const runQueueMs = (now[1] - last[1]) / 1e6;
      stalls.push({
        at: performance.timeOrigin + lastWall,
        wallMs: +(wall - lastWall).toFixed(1),
        cpuMs: +cpuMs.toFixed(1),
        runQueueMs: +runQueueMs.toFixed(1),
        asleepMs: +Math.max(0, wall - lastWall - cpuMs - runQueueMs).toFixed(1),
      });
    }
    last = now;
    lastWall = wall;
  }, 2);

  let before = threadCpu();
  return {
    probes,
    stalls,
    /** Main-thread CPU ms between two epoch times (from the 2 ms samples, interpolated). */
    mainCpuBetween(from: number, to: number): number {
      return cpuAt(timeline, to) - cpuAt(timeline, from);
    },
    /** CPU ms per thread name since the last call. */
    threadsSince(probeTid = ''): Record<string, number> {
      const after = threadCpu();
      const out: Record<string, number> = {};
      for (const [name, ns] of after) {
        const d = (ns - (before.get(name) ?? 0)) / 1e6;
        if (d >= 1) out[name === probeTid ? 'secondClient' : name] = +d.toFixed(1);
      }
      before = after;
      return out;
    },
    stop() {
      clearInterval(timer);
      server.off('request', onRequest);
      for (const r of restore) r();
    },
  };
}

function cpuAt(t: { at: number[]; cpu: number[] }, when: number): number {
  const { at, cpu } = t;
  if (at.length === 0) return 0;
  let lo = 0;
  let hi = at.length - 1;
  if (when <= at[0]!) return cpu[0]!;
  if (when >= at[hi]!) return cpu[hi]!;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (at[mid]! <= when) lo = mid;
    else hi = mid;
  }
  const f = (when - at[lo]!) / (at[hi]! - at[lo]!);
  return cpu[lo]! + f * (cpu[hi]! - cpu[lo]!);
}

export interface ProbeSample {
  id: number;
  url: string;
  startedAt: number;
  ms: number;
}

/** The slowest second-client answers, each split into before the server, the server, and after it. */
export function explainSlowest(
  samples: ProbeSample[],
  server: Map<number, ProbeServerSide>,
  stalls: Stall[],
  count: number,
  running: { name: string; from: number; to: number }[],
  mainCpuBetween: (from: number, to: number) => number,
) {
  const slow = [...samples].sort((a, b) => b.ms - a.ms).slice(0, count);
  return slow.map((s) => {
    const srv = server.get(s.id);
    const end = s.startedAt + s.ms;
    const overlapping = stalls.filter((st) => st.at < end && st.at + st.wallMs > s.startedAt);
    const sum = (k: keyof Stall) => +overlapping.reduce((a, st) => a + st[k], 0).toFixed(1);
    return {
      url: s.url.replace(/^https?:\/\/[^/]+/, ''),
      ms: +s.ms.toFixed(1),
      mainCpuMs: +mainCpuBetween(s.startedAt, end).toFixed(1),
      during: running.find((r) => r.from <= s.startedAt && s.startedAt < r.to)?.name ?? 'none',
      beforeServerMs: srv ? +(srv.receivedAt - s.startedAt).toFixed(1) : null,
      serverMs: srv ? +(srv.finishedAt - srv.receivedAt).toFixed(1) : null,
      afterServerMs: srv ? +(end - srv.finishedAt).toFixed(1) : null,
      parts: srv ? Object.fromEntries(Object.entries(srv.parts).map(([k, v]) => [k, +v.toFixed(1)])) : {},
      mainThreadStalls: {
        n: overlapping.length,
        wallMs: sum('wallMs'),
        cpuMs: sum('cpuMs'),
        runQueueMs: sum('runQueueMs'),
        asleepMs: sum('asleepMs'),
      },
    };
  });
}
