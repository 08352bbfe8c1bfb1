import type { TelemetryStore } from '@kilowatch/tsdb';

export interface RollupScheduler {
  /** Resolves when a run in progress (if any) has finished; no run starts afterwards. */
  stop(): Promise<void>;
}

/**
 * Calls `store.refreshRollups()` every `intervalMs`, never two at once: the next run is scheduled only
 * after the previous one settles.
 */
export function startRollupScheduler(opts: {
  store: TelemetryStore;
  intervalMs: number;
  /** The clock rollups are closed by (the store's watermark); default the real one. */
  now?: () => number;
  onRun?: (result: 'ok' | 'error', error?: unknown) => void;
}): RollupScheduler {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;

  const run = async () => {
    timer = null;
    if (stopped) return;
    try {
      await opts.store.refreshRollups(opts.now?.());
      opts.onRun?.('ok');
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
