/**
 * Gives DuckDB's cache back to the system once the store has been idle: a one-year chart, a yearly
 * heatmap or a year's export leaves hundreds of megabytes of blocks cached up to the memory limit, and
 * DuckDB keeps them for good. After `idleMs` without a read or a bulk load, the limit is lowered for a
 * moment (DuckDB evicts its unpinned blocks down to it and frees their memory) and set back at once, so
 * the next query may again use the whole limit. On the demo year this took the resident memory of a
 * DuckDB file after a year's queries from 665 MB to 191 MB (bench/results/footprint.md).
 *
 * Only the file's cached blocks go, down to `idleLimit` at most: rows written since the last checkpoint
 * and working memory would otherwise be written to DuckDB's temporary file, and read back by the next
 * write. The minute's refresh of live readings is trimmed right after it when nobody has read for
 * `idleMs` (~40 MB of blocks on the demo year, re-read from the page cache a minute later).
 *
 * The lowered limit must never meet a query that needs more: a trim runs only when no read and no bulk
 * load is in progress, under the write lock (so no commit, checkpoint or rollup window runs beside it),
 * and a read or bulk load that starts meanwhile waits for it (a few milliseconds). Reads wait only for
 * the trim itself, never for what holds the write lock before it: the gate closes once the trim has the
 * lock (a trim asked during a checkpoint lasting a minute would otherwise hold every read for that
 * minute), and a read that started while the trim waited for the lock makes it give up (`busy`).
 */
import { memorySizeBytes } from '@kilowatch/core';
import { type Db, readRows } from './db.ts';

export interface TrimOptions {
  /**
   * The limit in force (the one the store was opened with, or the lower one of a bulk load: limits.ts),
   * set back after each trim as it was given (DuckDB's own spelling of it, `488.2 MiB`, would not come
   * back the same, and `RESET` does not restore a default).
   */
  limit: () => string;
  /** What DuckDB may keep cached while idle (`64MB`), rows not yet checkpointed aside. */
  idleLimit: string;
  /** Milliseconds without a read or bulk load before a trim. */
  idleMs: number;
}

/** Room left above what a trim must not evict, for the blocks in use by the next write. */
const KEEP_BYTES = 8 * 1024 * 1024;

export type TrimResult = 'trimmed' | 'busy' | 'small' | 'closed';

export class MemoryTrim {
  private active = 0;
  private lastEnd = 0;
  /** Whether a read, a bulk load or a rollup refresh ran since the last trim (live writes do not count). */
  private used = false;
  /** Set while a trim holds the write lock: reads and bulk loads that start wait for it. */
  private gate: Promise<unknown> | null = null;
  /** The trim asked for and not yet over (waiting for the write lock, or running). */
  private queued: Promise<TrimResult> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly db: Db,
    private readonly opts: TrimOptions,
  ) {}

  /** Checks every half idle period, at most every 50 ms (the timer does not keep the process alive). */
  start(): void {
    this.timer ??= setInterval(
      () => {
        if (this.idleFor() >= this.opts.idleMs) void this.trim().catch(() => undefined);
      },
      Math.max(50, this.opts.idleMs / 2),
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Runs `fn` as a read or bulk load: no trim starts while it runs, and it waits for one running. */
  async during<T>(fn: () => Promise<T>): Promise<T> {
    await this.enter();
    try {
      return await fn();
    } finally {
      this.exit();
    }
  }

  /** `during` for an async iterable: counted from the first item asked until it ends or is left. */
  async *iterate<T>(items: AsyncIterable<T>): AsyncIterable<T> {
    await this.enter();
    try {
      yield* items;
    } finally {
      this.exit();
    }
  }

  /** Marks a large rollup refresh (after a backfill) for the next idle trim, as a read would be. */
  touched(): void {
    this.used = true;
    this.lastEnd = Date.now();
  }

  /**
   * The minute's refresh of live readings ran: its blocks are trimmed at once when nothing has been read
   * for `idleMs`, and stay cached while someone is reading.
   */
  refreshed(): void {
    this.used = true;
    if (this.idleFor() >= this.opts.idleMs) void this.trim().catch(() => undefined);
  }

  private async enter(): Promise<void> {
    while (this.gate) await this.gate;
    this.active++;
    this.used = true;
  }

  private exit(): void {
    this.active--;
    this.lastEnd = Date.now();
  }

  private idleFor(): number {
    return this.active > 0 ? 0 : Date.now() - this.lastEnd;
  }

  /**
   * Trims now unless a read or bulk load is running (`busy`), nothing ran since the last trim or DuckDB
   * holds no more than the idle limit (`small`). The timer calls it; tests call it directly.
   */
  trim(): Promise<TrimResult> {
    if (this.db.closed) return Promise.resolve('closed');
    // One trim asked for at a time: the timer keeps asking while a checkpoint holds the write lock.
    if (this.queued) return this.queued;
    if (this.active > 0) return Promise.resolve('busy');
    if (!this.used) return Promise.resolve('small');
    const run = this.db.lock.run(async (): Promise<TrimResult> => {
      if (this.db.closed) return 'closed';
      if (this.active > 0) return 'busy';
      // From here until the limit is set back, a read or bulk load that starts waits (`enter`).
      let open = (): void => undefined;
      this.gate = new Promise<void>((resolve) => {
        open = resolve;
      });
      try {
        return await this.shrink();
      } finally {
        this.gate = null;
        open();
      }
    });
    this.queued = run;
    const done = () => {
      if (this.queued === run) this.queued = null;
    };
    run.then(done, done);
    return run;
  }

  /** Lowers the limit to what the file's cached blocks may keep and sets it back (the write lock held). */
  private async shrink(): Promise<TrimResult> {
    this.used = false;
    const [row] = await readRows(
      this.db.w,
      `SELECT sum(memory_usage_bytes)::DOUBLE, (sum(memory_usage_bytes) FILTER (tag = 'BASE_TABLE'))::DOUBLE FROM duckdb_memory()`,
    );
    const held = Number(row?.[0]);
    // The idle limit, or all DuckDB holds besides the file's blocks (BASE_TABLE) and a little room,
    // whichever is higher: only those blocks are evicted (see the header).
    const target = Math.max(memorySizeBytes(this.opts.idleLimit), held - Number(row?.[1] ?? 0) + KEEP_BYTES);
    if (!(held > target)) return 'small';
    try {
      await this.db.w.run(`SET memory_limit = '${Math.ceil(target / 1024)}KiB'`);
    } finally {
      await this.db.w.run(`SET memory_limit = '${this.opts.limit()}'`);
    }
    return 'trimmed';
  }
}
