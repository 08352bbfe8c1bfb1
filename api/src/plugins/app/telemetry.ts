/**
 * The telemetry side as the API sees it: the TelemetryStore handed to `buildApp`, and — when ingest runs
 * in this process — its live device states. Without ingest, status comes from the newest stored reading.
 */
import {
  calendarBucketCountAtMost,
  calendarBucketStartsYielding,
  DEFAULT_TIMEZONE,
  type DeviceStatus,
  isValidTimeZone,
  type YearlyUnit,
} from '@kilowatch/core';
import { StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** What the API needs of an ingest runtime (the embedded deployment passes the real one). */
export interface DeviceStateSource {
  deviceState(
    deviceKey: string,
  ): { deviceKey: string; status: DeviceStatus; lastSeen: number | null; rssi?: number } | undefined;
}

export interface LiveStatus {
  status: DeviceStatus;
  lastSeen: number | null;
  rssi: number | null;
}

/** A device whose newest stored reading is older than this is offline. */
export const OFFLINE_AFTER_MS = 10 * 60_000;

/** How long one read of a request may take before the request is answered 503 (busy, come back). */
export const QUERY_BUDGET_MS = 20_000;

const BUDGETED = ['readRaw', 'series', 'seriesMany', 'energy', 'latest'] as const;

/** Local days or months past which a query is refused by the store anyway: not worth building first. */
const MAX_WARM_BUCKETS = 200_000;

/**
 * The local-day and local-month starts the queries will need, built a local year per turn of the event
 * loop into core's cache, which the stores read: a store builds a cold range in one go, and a decade of
 * local days is ~0.15 s of time-zone arithmetic that would hold every other request.
 */
async function warmCalendars(prop: string | symbol, args: unknown[]): Promise<void> {
  if (prop !== 'series' && prop !== 'seriesMany' && prop !== 'energy') return;
  const queries = (prop === 'seriesMany' ? args[0] : [args[0]]) as
    | readonly { from?: unknown; to?: unknown; interval?: unknown; tz?: unknown }[]
    | undefined;
  for (const q of Array.isArray(queries) ? queries : []) {
    const unit: YearlyUnit | null = q?.interval === '1d' ? 'day' : q?.interval === '1mo' ? 'month' : null;
    if (unit === null || typeof q.from !== 'number' || typeof q.to !== 'number') continue;
    const tz = typeof q.tz === 'string' ? q.tz : DEFAULT_TIMEZONE;
    if (!(q.to > q.from) || !isValidTimeZone(tz)) continue;
    if (calendarBucketCountAtMost(q.from, q.to, unit) > MAX_WARM_BUCKETS) continue;
    await calendarBucketStartsYielding(q.from, q.to, unit, tz);
  }
}

/**
 * The store as routes see it: every read a request waits on has a time budget. Past it the request is
 * answered 503 with Retry-After (the error handler's answer to an unavailable store) instead of waiting
 * for as long as the store takes; the read itself finishes or fails on its own. Calendar buckets a read
 * will need are built first, a year per turn (`warmCalendars`).
 */
export function withQueryBudget(store: TelemetryStore, budgetMs: number): TelemetryStore {
  const budgeted = new Set<string | symbol>(BUDGETED);
  return new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (!budgeted.has(prop)) return value.bind(target);
      return (...args: unknown[]): Promise<unknown> => {
        let timer: NodeJS.Timeout | undefined;
        const over = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new StoreError(`${String(prop)} took longer than its ${budgetMs} ms budget`, 'unavailable'),
              ),
            budgetMs,
          );
        });
        const read = warmCalendars(prop, args).then(() =>
          (value as (...a: unknown[]) => Promise<unknown>).apply(target, args),
        );
        read.catch(() => {});
        return Promise.race([read, over]).finally(() => clearTimeout(timer));
      };
    },
  });
}

declare module 'fastify' {
  interface FastifyInstance {
    store: TelemetryStore;
    deviceStatus(deviceKey: string): Promise<LiveStatus>;
  }
}

export default fp(
  async (
    app: FastifyInstance,
    opts: { store: TelemetryStore; states?: DeviceStateSource; queryBudgetMs?: number },
  ) => {
    app.decorate('store', withQueryBudget(opts.store, opts.queryBudgetMs ?? QUERY_BUDGET_MS));
    app.decorate('deviceStatus', async (deviceKey: string): Promise<LiveStatus> => {
      const live = opts.states?.deviceState(deviceKey);
      if (live) return { status: live.status, lastSeen: live.lastSeen, rssi: live.rssi ?? null };
      const latest = await opts.store.latest(deviceKey);
      if (!latest) return { status: 'offline', lastSeen: null, rssi: null };
      const online = app.clock.now() - latest.ts <= OFFLINE_AFTER_MS;
      return { status: online ? 'online' : 'offline', lastSeen: latest.ts, rssi: null };
    });
  },
  { name: 'telemetry', dependencies: ['config'] },
);
