/**
 * The checkpoint schedule and the write journal around it. The store checkpoints itself every 16 MiB
 * written, on a connection of its own. DuckDB's own automatic checkpoint would run inside the commit that
 * crosses its threshold and hold every write behind it; its threshold is raised to a safety net instead
 * (open.ts). While a checkpoint runs, writes are made durable in a journal file beside the database
 * (journal.ts), acknowledged, and applied in order when it ends, so no commit waits for it.
 *
 * No read waits for it either (a checkpoint after the demo year's rollups takes 7–100 s on a busy small
 * machine): DuckDB answers queries on the read connection beside a CHECKPOINT, from its last committed
 * state. A read waits `READ_WAIT_MS` at most for the journaled batches to be applied (`caughtUp`), then
 * answers without them; the raw reader lays them over its answers itself (`pending`, raw.ts).
 */
import { type ColumnBatch, columnize, concatBatches, readingsOf } from '../columns.ts';
import { StoreError } from '../port.ts';
import type { Db } from './db.ts';
import { Journal } from './journal.ts';
import type { WritePath } from './writer.ts';

/** Bytes committed between checkpoints (DuckDB's default threshold is 16 MiB of WAL). */
const CHECKPOINT_BYTES = 16 * 1024 * 1024;
/** Readings applied together from the journal in one transaction. */
const APPLY_READINGS = 20_000;
/**
 * How long a series or energy read waits for the journaled batches to be applied (the end of a short
 * checkpoint) before it answers from what DuckDB has committed.
 */
export const READ_WAIT_MS = 100;

/** A journaled batch waiting for DuckDB. */
interface Parked {
  batch: ColumnBatch;
}

export interface WriteStats {
  checkpointing: boolean;
  journaledBatches: number;
  pendingBatches: number;
  pendingRows: number;
}

export class Checkpoints {
  private walBytes = 0;
  /** The checkpoint running (or the journal being applied), if any. */
  private checkpoint: Promise<void> | null = null;
  /** Write journal (file databases): takes the writes that arrive while a checkpoint runs. */
  private journal: Journal | null = null;
  /** From a checkpoint's scheduling until what arrived meanwhile is applied: writes go to the journal. */
  private parking = false;
  /** Journaled batches not yet applied to DuckDB, in arrival order. */
  private readonly parked: Parked[] = [];
  private parkedRows = 0;
  /** Set when the journal was full: writes queue for DuckDB, in order, until the journal is applied. */
  private overflow = false;
  private journaledBatches = 0;
  private applyError: string | null = null;

  constructor(
    private readonly db: Db,
    private readonly writer: WritePath,
    /** Readings the journal takes while a checkpoint runs; past it, writes wait for DuckDB (backpressure). */
    private readonly maxParkedRows: number,
    /**
     * Awaited inside every checkpoint, after DuckDB's CHECKPOINT, before the journaled batches are
     * applied (tests: a checkpoint that lasts until the test lets it end).
     */
    private readonly hold: (() => Promise<void>) | null = null,
  ) {}

  /** Writes a checked batch: to the journal while a checkpoint runs, else committed in turn. */
  async write(batch: ColumnBatch): Promise<void> {
    if (batch.rows === 0) return;
    if (this.parking && this.journal && !this.overflow) {
      if (this.parkedRows + batch.rows <= this.maxParkedRows) {
        await this.park(batch, this.journal);
        return;
      }
      // Full: this write and every later one until the journal is applied wait for DuckDB, in order
      // (none may be applied ahead of an earlier one).
      this.overflow = true;
    }
    await this.db.lock.run(async () => {
      this.db.assertOpen();
      try {
        await this.writer.write(batch);
      } catch (e) {
        if (e instanceof StoreError) throw e;
        throw new StoreError(`write failed: ${(e as Error).message}`, 'unavailable', { cause: e });
      }
    });
  }

  /** Applies what the journal still holds (a crash before it was applied), then empties it. */
  async openJournal(path: string): Promise<void> {
    let opened: Awaited<ReturnType<typeof Journal.open>>;
    try {
      opened = await Journal.open(path);
    } catch (e) {
      throw new StoreError(
        `cannot open the write journal ${path}: ${(e as Error).message}`,
        'configuration',
        {
          cause: e,
        },
      );
    }
    await this.db.lock.run(async () => {
      for (const b of opened.pending) if (b.rows > 0) await this.writer.write(b);
    });
    // Always emptied: a torn record at the end (no complete one before it) must not stay in front of
    // the next appends, or a later replay would stop at it.
    await opened.journal.clear();
    this.journal = opened.journal;
  }

  /** A write while a checkpoint runs: durable in the journal, acknowledged, applied when it ends. */
  private async park(batch: ColumnBatch, journal: Journal): Promise<void> {
    const entry: Parked = { batch };
    this.parked.push(entry);
    this.parkedRows += batch.rows;
    try {
      await journal.append(batch);
    } catch (e) {
      // Not durable, so not acknowledged: the sender tries again (applying it anyway is harmless).
      const i = this.parked.indexOf(entry);
      if (i >= 0) {
        this.parked.splice(i, 1);
        this.parkedRows -= batch.rows;
      }
      throw new StoreError(`write journal failed: ${(e as Error).message}`, 'unavailable', {
        cause: e,
      });
    }
    this.journaledBatches++;
  }

  /**
   * Applies the journaled batches in order (holding the write lock), then lets writes commit directly
   * again and empties the journal. A batch DuckDB refuses stays first in line and in the journal; the
   * store tries again a second later, and writes keep going to the journal until it is full.
   */
  async applyParked(): Promise<void> {
    while (this.parked.length > 0) {
      // Consecutive batches (small ones, acknowledged one by one while the checkpoint ran) go to DuckDB
      // together, in arrival order: joined column by column when each device only moves forward, else
      // laid out again from their readings (a repeated (device, ts) merges, the later one winning).
      let take = 1;
      let n = this.parked[0]!.batch.rows;
      while (take < this.parked.length && n + this.parked[take]!.batch.rows <= APPLY_READINGS) {
        n += this.parked[take]!.batch.rows;
        take++;
      }
      const group = this.parked.slice(0, take);
      const b =
        take === 1
          ? group[0]!.batch
          : (concatBatches(group.map((p) => p.batch)) ??
            columnize(group.flatMap((p) => readingsOf(p.batch))));
      try {
        await this.writer.write(b);
      } catch (e) {
        this.applyError = (e as Error).message;
        if (!this.db.closed) setTimeout(() => this.retryApply(), 1000).unref();
        return;
      }
      // By identity: a batch whose journal append failed meanwhile has already left the line.
      for (const p of group) {
        const i = this.parked.indexOf(p);
        if (i >= 0) {
          this.parked.splice(i, 1);
          this.parkedRows -= p.batch.rows;
        }
      }
    }
    this.applyError = null;
    this.parking = false;
    this.overflow = false;
    await this.journal?.clear().catch(() => undefined);
  }

  private retryApply(): void {
    if (this.db.closed || this.checkpoint || this.parked.length === 0) return;
    this.checkpoint = this.db.lock
      .run(() => this.applyParked())
      .finally(() => {
        this.checkpoint = null;
      });
  }

  /**
   * Waits until the journaled batches are applied (the checkpoint ends), `maxMs` at most, and answers
   * whether they are: past it, a read answers from what DuckDB has committed.
   */
  async caughtUp(maxMs = READ_WAIT_MS): Promise<boolean> {
    const running = this.checkpoint;
    if (this.parked.length === 0 || !running) return this.parked.length === 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      running.catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, maxMs);
      }),
    ]);
    clearTimeout(timer);
    return this.parked.length === 0;
  }

  /** The journaled batches not yet applied to DuckDB, in arrival order (a batch leaves once committed). */
  pending(): ColumnBatch[] {
    return this.parked.length === 0 ? [] : this.parked.map((p) => p.batch);
  }

  /** The checkpoint in progress, if any, to wait for. */
  running(): Promise<void> | null {
    return this.checkpoint;
  }

  /** Why journaled readings are not applied yet, if DuckDB refused them. */
  problem(): string | null {
    return this.applyError
      ? `${this.parkedRows} journaled readings not yet applied: ${this.applyError}`
      : null;
  }

  /** Counters of the write path (for tests and metrics). */
  stats(): WriteStats {
    return {
      checkpointing: this.parking,
      journaledBatches: this.journaledBatches,
      pendingBatches: this.parked.length,
      pendingRows: this.parkedRows,
    };
  }

  /**
   * Counts bytes committed since the last checkpoint and, past `CHECKPOINT_BYTES`, checkpoints on a
   * connection of its own while writes go on.
   */
  committed(bytes: number): void {
    this.walBytes += bytes;
    if (this.walBytes >= CHECKPOINT_BYTES) this.request();
  }

  /**
   * Checkpoints now, as if the threshold had been crossed, unless one is running. After a large rollup
   * refresh: its rows were written to the database file but stay DuckDB's in-memory table segments (and
   * spill to its temporary file) until a checkpoint, hundreds of megabytes after a year of history, and
   * the little WAL such a write leaves would not reach the threshold for hours.
   */
  request(): void {
    const ck = this.db.ck;
    if (!ck || this.checkpoint || this.db.closed) return;
    this.walBytes = 0;
    // From here until the checkpoint is over and what arrived meanwhile is applied, writes go to the
    // journal and are acknowledged from there (see journal.ts): no commit waits for the checkpoint.
    this.parking = this.journal !== null;
    // The newest-values snapshot goes first (queued behind the writes, on the write connection), so
    // the checkpoint carries it and recovery on open has little to read back. The checkpoint holds the
    // write lock: a commit would wait for it anyway.
    this.checkpoint = this.db.lock
      .run(async () => {
        if (!this.db.closed) {
          await this.writer.snapshotLatest().catch(() => undefined);
          // A checkpoint refused while a transaction is open (a bulk load) is tried again later.
          await ck.run('CHECKPOINT').catch(() => {
            this.walBytes = CHECKPOINT_BYTES / 2;
          });
          await this.hold?.().catch(() => undefined);
        }
        await this.applyParked();
      })
      .finally(() => {
        this.checkpoint = null;
      });
  }

  /** Closes the journal (what it holds stays for the next open). */
  async closeJournal(): Promise<void> {
    await this.journal?.close().catch(() => undefined);
  }
}
