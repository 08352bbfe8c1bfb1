/**
 * The demo's year of history, written once in the background (a marker file records completion). The
 * last two days go first, so the dashboard's recent charts are complete within seconds; the rest of the
 * year follows oldest-first. Counters are a pure function of time, so the order changes no value.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { backfillHistory, DEMO_DEVICES } from '@kilowatch/ingest';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyBaseLogger } from 'fastify';
import { errorInOneLine } from '../log-format.ts';

const DAY_MS = 86_400_000;
const RECENT_HISTORY_MS = 2 * DAY_MS;
const DEMO_KEYS = new Set(DEMO_DEVICES.map((d) => d.deviceKey));

/** `recent`: the last two days are there; `done`: the whole year. */
export type DemoHistoryState = 'none' | 'writing' | 'recent' | 'done' | 'failed';

export class DemoHistory {
  state: DemoHistoryState = 'none';
  private finish: (written: boolean) => void = () => {};
  /** Settles when a write started by `start` ends: `true` once the whole history is written. */
  readonly finished: Promise<boolean> = new Promise((resolve) => {
    this.finish = resolve;
  });

  constructor(
    private readonly dataDir: string,
    private readonly days: number,
  ) {}

  private get marker(): string {
    return path.join(this.dataDir, 'demo-history.done');
  }

  /** The demo runs: its history is there already (`done`) or is to be written (`writing`). */
  expect(): void {
    this.state = existsSync(this.marker) ? 'done' : 'writing';
  }

  /**
   * Whether a meter's totals would count only part of its history: a demo meter's until its history is
   * written (a failed write is written again at the next start, so its totals stay partial until then).
   */
  readonly loading = (deviceKey: string): boolean =>
    DEMO_KEYS.has(deviceKey) &&
    (this.state === 'writing' || this.state === 'recent' || this.state === 'failed');

  /** Writes what `expect` found missing, in the background; a shutdown abandons it (written again next start). */
  start(store: TelemetryStore, log: FastifyBaseLogger, stopping: () => boolean): void {
    if (this.state !== 'writing') return;
    void this.write(store, log).then(
      () => {
        this.state = 'done';
        this.finish(true);
      },
      (err: unknown) => {
        this.state = 'failed';
        this.finish(false);
        // Cut short by a shutdown: expected, not an error.
        if (stopping())
          log.info('demo history interrupted by the shutdown; it is written again at the next start');
        else log.error({ err }, 'demo history failed; it is written again at the next start');
      },
    );
  }

  private async write(store: TelemetryStore, log: FastifyBaseLogger): Promise<void> {
    if (existsSync(this.marker)) return;
    const historyMs = this.days * DAY_MS;
    const to = Math.floor(Date.now() / 60_000) * 60_000;
    const recentFrom = to - Math.min(RECENT_HISTORY_MS, historyMs);
    log.info(
      `writing ${this.days} days of demo history for ${DEMO_DEVICES.length} simulated meters (once, in the background)…`,
    );
    // Generated and laid out in columns in a worker thread; batches of 10,000 readings (the store still
    // merges them in large transactions), so handing one to DuckDB holds the event loop only briefly.
    const batchSize = 10_000;
    // A failed load runs once more at once: the store keeps what it stored, and after running out of
    // memory under its bulk memory limit it gives that limit up (tsdb limits.ts), so the second run
    // completes it.
    const load = async (from: number, until: number) => {
      const opts = { from, to: until, batchSize, thread: true };
      try {
        return await backfillHistory(store, DEMO_DEVICES, opts);
      } catch (e) {
        // One line: DuckDB's out-of-memory message goes on for paragraphs of possible solutions.
        log.warn(`demo history: writing failed (${errorInOneLine(e)}); trying once more`);
        return backfillHistory(store, DEMO_DEVICES, opts);
      }
    };
    const recent = await load(recentFrom, to);
    await store.refreshRollups();
    this.state = 'recent';
    log.info(`demo history: the last two days are written (${recent.readings} readings)`);
    const older = await load(to - historyMs, recentFrom);
    await store.refreshRollups();
    await writeFile(this.marker, new Date().toISOString());
    log.info(`demo history written: ${recent.readings + older.readings} readings`);
  }
}
