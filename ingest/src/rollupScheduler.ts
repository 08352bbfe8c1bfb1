import type { RollupRunResult, TelemetryStore } from '@kilowatch/tsdb';

/**
 * Runs `fn` while holding a lock shared by every ingest process (a PostgreSQL advisory lock), or answers
 * `{ ran: false }` at once when another process holds it.
 */
export type RollupLock = <T>(fn: () => Promise<T>) => Promise<{ ran: true; value: T } | { ran: false }>;

export interface RollupScheduler {
  /** Resolves when a run in progress (if any) has finished; no run starts afterwards. */
  stop(): Promise<void>;
}

/**
 * Calls `store.refreshRollups()` every `intervalMs`, never two at once: the next run is scheduled only
 * after the previous one settles. With `lock`, several ingest processes take turns: a tick whose lock is
 * held elsewhere is skipped (that process is refreshing the same dirty ranges), and a process that dies
 * holding it lets go of it with its connection, so the others carry on.
 */
export function startRollupScheduler(opts: {
  store: TelemetryStore;
  intervalMs: number;
  /** The clock rollups are closed by (the store's watermark); default the real one. */
  now?: () => number;
  lock?: RollupLock;
  onRun?: (result: 'ok' | 'skipped' | 'error', error?: unknown, outcome?: RollupRunResult) => void;
}): RollupScheduler {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  const run = async () => {
    timer = null;
    if (stopped) return;
    try {
      const refresh = () => opts.store.refreshRollups(opts.now?.());
      if (opts.lock) {
        const turn = await opts.lock(refresh);
        if (turn.ran) opts.onRun?.('ok', undefined, turn.value);
        else opts.onRun?.('skipped');
      } else opts.onRun?.('ok', undefined, await refresh());
    } catch (e) {
      opts.onRun?.('error', e);
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = run().finally(() => {
        running = null;
        schedule();
      });
    }, opts.intervalMs);
    timer.unref();
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
