/**
 * Overload protection: API requests get 503 "busy" with `Retry-After` while the event loop runs late or
 * memory is over a limit; monitoring (`/api/health`, `/metrics`) and the built client's files are
 * always served.
 *
 * The server samples its load once a second. The event loop's delay is how late the last two samples'
 * timers fired, the lesser of the two: a loop that stays behind sheds load, one long turn (the start-up,
 * a large synchronous task) does not. A finer monitor (`perf_hooks`'
 * `monitorEventLoopDelay`, a timer every 10 ms, as `@fastify/under-pressure` keeps) cost ~0.55 CPU-s a
 * minute on its own, a third of the idle server's CPU (bench/results/footprint.md), to tell delays far
 * below the one second that sheds load.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';

export interface PressureOptions {
  /** Milliseconds of event-loop delay above which API requests are shed (0: never). */
  maxEventLoopDelay?: number;
  maxHeapUsedBytes?: number;
  maxRssBytes?: number;
  /** Milliseconds between samples (default 1000). */
  sampleMs?: number;
}

/** The last sample: what `/api/health` shows as `load`. */
export interface Load {
  /** How late the last two samples' timers fired, the lesser, ms. */
  eventLoopDelay: number;
  rssBytes: number;
  heapUsed: number;
  /** Share of the time since the previous sample the event loop was busy (0–1). */
  eventLoopUtilized: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    memoryUsage(): Load;
  }
}

/** Samples the load and sheds API requests over a limit by calling `shed` (which throws the reply). */
export function registerPressure(
  app: FastifyInstance,
  opts: PressureOptions,
  shed: (url: string) => void,
): void {
  const sampleMs = opts.sampleMs ?? 1000;
  const load: Load = { eventLoopDelay: 0, rssBytes: 0, heapUsed: 0, eventLoopUtilized: 0 };
  let elu = performance.eventLoopUtilization();
  let due = performance.now();
  let lastLate = 0;
  const sample = () => {
    const now = performance.now();
    const late = Math.max(0, now - due);
    load.eventLoopDelay = Math.min(late, lastLate);
    lastLate = late;
    const mem = process.memoryUsage();
    load.rssBytes = mem.rss;
    load.heapUsed = mem.heapUsed;
    const current = performance.eventLoopUtilization();
    load.eventLoopUtilized = performance.eventLoopUtilization(current, elu).utilization;
    elu = current;
    due = now + sampleMs;
  };
  sample();
  const timer = setInterval(sample, sampleMs);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
  app.decorate('memoryUsage', () => ({ ...load }));

  const over = () =>
    (!!opts.maxEventLoopDelay && load.eventLoopDelay > opts.maxEventLoopDelay) ||
    (!!opts.maxHeapUsedBytes && load.heapUsed > opts.maxHeapUsedBytes) ||
    (!!opts.maxRssBytes && load.rssBytes > opts.maxRssBytes);
  if (!opts.maxEventLoopDelay && !opts.maxHeapUsedBytes && !opts.maxRssBytes) return;
  app.addHook('onRequest', async (request) => {
    if (over()) shed(request.url.split('?')[0] ?? '');
  });
}
