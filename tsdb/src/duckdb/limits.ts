/**
 * DuckDB's memory limit over time: the one the store was opened with, or a lower one while bulk work
 * runs — history bulk-loaded, a large rollup refresh, a raw stream (an export). Such work fills whatever
 * limit it is given (table segments and sort runs that later writes replace anyway, blocks an export
 * reads once), and on a home server it meets everything else the process holds at that moment (the demo
 * year's generation thread, PGlite, the API, an export's pages), so its limit sets the process's peak.
 * Queries keep the whole limit the rest of the time.
 *
 * The limit is one setting of the whole database: a query running beside a bulk load works under the
 * lower one too (spilling sooner), which is the trade the setting makes. Should DuckDB run out of memory
 * under it (what the work pins does not fit), the store gives it up for good (`relieve`), and what failed
 * runs again under the whole limit: a refresh at once, a live write through the ingest bridge's retries,
 * a bulk load when run again (it keeps what is stored; the demo history's writer does so at once), an
 * export when asked again.
 */
import { memorySizeBytes } from '@kilowatch/core';
import type { Db } from './db.ts';

export class MemoryLimits {
  /** Bulk loads, large refreshes and raw streams running now. */
  private heavy = 0;

  /**
   * `normal` is the limit the store was opened with; `low` the one for heavy writes (ignored unless it is
   * below `normal`).
   */
  constructor(
    private readonly db: Db,
    private readonly normal: string,
    low: string | undefined,
  ) {
    this.low = low !== undefined && memorySizeBytes(low) < memorySizeBytes(normal) ? low : null;
  }

  private low: string | null;

  /** Whether the lower limit was given up after DuckDB ran out of memory under it. */
  givenUp = false;

  /** The limit in force now, as it was given. */
  current(): string {
    return this.heavy > 0 && this.low ? this.low : this.normal;
  }

  /** Runs bulk work under the lower limit (set when the first one starts, set back after the last). */
  async during<T>(fn: () => Promise<T>): Promise<T> {
    if (!this.low) return fn();
    await this.enter();
    try {
      return await fn();
    } finally {
      await this.exit();
    }
  }

  /**
   * `during` for an async iterable (a raw stream, an export's read): from the first item asked until it
   * ends or is left. Setting the limit takes the write lock; a read waits for that only when the lock is
   * free (a moment), never behind what holds it — a checkpoint may for a minute. The stream then starts
   * under the limit in force, and the lower one takes over once the lock is free (each setting applies
   * the limit in force when it runs, so two of them cannot land out of order).
   */
  async *iterate<T>(items: AsyncIterable<T>): AsyncIterable<T> {
    if (!this.low) {
      yield* items;
      return;
    }
    await this.unlessBusy(() => this.enter());
    try {
      yield* items;
    } finally {
      await this.unlessBusy(() => this.exit());
    }
  }

  /** Runs `set` and waits for it if the write lock is free, else lets it run when the lock is. */
  private async unlessBusy(set: () => Promise<void>): Promise<void> {
    const free = !this.db.lock.busy;
    const done = set();
    if (free) await done;
  }

  /**
   * Gives up the lower limit after DuckDB ran out of memory under it: the whole limit from now on.
   * Answers whether there was one to give up, that is whether trying the failed work again can help.
   */
  async relieve(): Promise<boolean> {
    if (!this.low) return false;
    this.low = null;
    this.givenUp = true;
    await this.apply();
    return true;
  }

  private async enter(): Promise<void> {
    if (this.heavy++ === 0) await this.apply();
  }

  private async exit(): Promise<void> {
    if (--this.heavy === 0 && this.low) await this.apply();
  }

  /**
   * Sets the limit in force, under the write lock (no commit or trim beside it). Lowering it makes DuckDB
   * evict cached blocks down to it; if what is pinned does not fit, DuckDB refuses and the higher limit
   * stays, which costs memory but nothing else.
   */
  private async apply(): Promise<void> {
    await this.db.lock
      .run(async () => {
        if (this.db.closed) return;
        await this.db.w.run(`SET memory_limit = '${this.current()}'`).catch(() => undefined);
      })
      .catch(() => undefined);
  }
}

/** Whether `e` (or an error it was caused by) is DuckDB running out of its memory limit. */
export function outOfMemory(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x instanceof Error && depth < 5; x = x.cause, depth++)
    if (/Out of Memory Error|could not allocate block|failed to pin block/i.test(x.message)) return true;
  return false;
}
