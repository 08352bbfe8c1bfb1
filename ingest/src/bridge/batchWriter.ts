/**
 * The batch writer: decoded units wait in a line, in arrival order, and are committed to the store in
 * batches (group commit), then acknowledged. It keeps the in-flight window: once `maxInFlight` messages
 * wait unacknowledged, the transport is held (it reads nothing more) until a commit frees room.
 *
 * An idle writer gives the first reading `flushIntervalMs` to gather company; while a batch commits,
 * what arrives gathers behind it and is written the moment it finishes, whatever its size — so a batch
 * holds about one commit's worth of readings and waits for at most one commit ahead of it. A full batch
 * does not wait: it is handed to the store at once (up to `MAX_WRITES` writes in flight), so its
 * validation and layout overlap the commit ahead while the store keeps commits in order. When no company
 * can come (`noCompany`: every sender waits for its acknowledgement), the batch is written at once.
 */
import { type ColumnBatch, StoreError, type TelemetryStore, type WriteResult } from '@kilowatch/tsdb';
import { columnize, concatBatches, readingsOf } from '@kilowatch/tsdb/columns';
import type { DeadLetterStore } from '../deadLetters.ts';
import type { IngestMetrics } from '../metrics.ts';
import type { UnitLine } from './decodePipeline.ts';
import { type IngestLogger, sleep } from './logger.ts';
import { newUnit, type Unit, unitReadings } from './units.ts';

/** Store writes in flight at once: one committing, the next validated and queued behind it. */
const MAX_WRITES = 2;

export interface BatchWriterOptions {
  store: TelemetryStore;
  /** The store's columnar write, when it declares one (`columnWriter`). */
  writeColumns: ((batch: ColumnBatch) => Promise<WriteResult>) | null;
  /** Readings per store write. */
  batchSize: number;
  /** How long the first reading of an idle writer waits for company. */
  flushIntervalMs: number;
  /** Messages received and not yet acknowledged before the transport is held. */
  maxInFlight: number;
  /** True when no more messages can arrive until some are acknowledged: write at once. */
  noCompany: () => boolean;
  /** A batch is committed: its readings go live (before they are acknowledged). */
  committed: (batch: readonly Unit[]) => void;
  /** Acknowledges a batch's messages (committed, or given up on and dead-lettered). */
  acknowledge: (batch: readonly Unit[]) => void;
  metrics: IngestMetrics;
  deadLetters: DeadLetterStore;
  log: IngestLogger;
}

export class BatchWriter implements UnitLine {
  private readonly pending: Unit[] = [];
  private pendingReadings = 0;
  private inFlightMessages = 0;
  /** The transport's way to read on, held while the in-flight window is full. */
  private held: (() => void) | null = null;
  /** Store writes in flight (at most `MAX_WRITES`). */
  private readonly writes = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  /** Set when a stop gave up waiting: retries end and nothing more is acknowledged. */
  private abandoned = false;
  /** The store's last write error, until a write commits again (health reports it). */
  private problem: string | null = null;
  /** When a write failure was last logged, and which: a store down for an hour is not 700 log lines. */
  private lastFailureLog = { at: -Infinity, message: '' };

  constructor(private readonly o: BatchWriterOptions) {}

  get inFlight(): number {
    return this.inFlightMessages;
  }

  /** Whether units wait, decode or are being written. */
  get busy(): boolean {
    return this.pending.length > 0 || this.writes.size > 0;
  }

  /** Why the store refuses writes right now, or null. */
  writeProblem(): string | null {
    return this.problem;
  }

  enqueue(u: Unit): void {
    this.pending.push(u);
    if (u.ready) this.pendingReadings += u.count;
  }

  attach(ack: () => void): boolean {
    const last = this.pending[this.pending.length - 1];
    if (last) {
      last.acks.push(ack);
      return true;
    }
    if (this.writes.size === 0) return false;
    // Behind the writes in flight: an empty unit, committed (with nothing to store) right after them.
    const u = newUnit(performance.now(), '');
    u.acks.push(ack);
    u.ready = true;
    this.pending.push(u);
    return true;
  }

  decoded(u: Unit): void {
    u.ready = true;
    this.pendingReadings += u.count;
    this.gauges();
    this.pump();
  }

  /**
   * A message has joined the line: counted in flight, and the transport reads on (`resume`) unless the
   * window is full.
   */
  admitted(resume: () => void): void {
    this.inFlightMessages++;
    this.gauges();
    this.pump();
    if (this.inFlightMessages >= this.o.maxInFlight) {
      this.o.metrics.paused.set(1);
      this.held = resume;
    } else {
      resume();
    }
  }

  gauges(): void {
    this.o.metrics.bufferMessages.set(this.inFlightMessages);
    this.o.metrics.bufferReadings.set(this.pendingReadings);
  }

  /**
   * Writes everything pending now and resolves once nothing is pending, decoding or being written.
   * `decoding` sends what waits for the decode thread and resolves when it is back.
   */
  async settle(decoding: () => Promise<void>): Promise<void> {
    while (this.busy && !this.abandoned) {
      const decoded = decoding();
      this.pump(true);
      await Promise.all([...this.writes, decoded]);
    }
  }

  /** Gives up: retries end and nothing more is acknowledged (the broker redelivers it). */
  abandon(): void {
    this.abandoned = true;
  }

  /** Decoded units from the head of the line, up to a batch of readings (a unit is never split). */
  private takeBatch(): Unit[] {
    const batch: Unit[] = [];
    let n = 0;
    while (this.pending.length > 0 && (this.pending[0] as Unit).ready) {
      const next = this.pending[0] as Unit;
      if (batch.length > 0 && n + next.count > this.o.batchSize) break;
      this.pending.shift();
      batch.push(next);
      n += next.count;
    }
    this.pendingReadings -= n;
    return batch;
  }

  /** Oldest pending message has waited the idle time bound. */
  private due(): boolean {
    return (
      this.pending.length > 0 && performance.now() - (this.pending[0] as Unit).at >= this.o.flushIntervalMs
    );
  }

  private headReady(): boolean {
    return this.pending.length > 0 && (this.pending[0] as Unit).ready && !this.abandoned;
  }

  /** Starts the writes that are due (see the note at the top). */
  private pump(force = false, afterCommit = false): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    while (this.headReady() && this.writes.size < MAX_WRITES) {
      const ready =
        force ||
        this.pendingReadings >= this.o.batchSize ||
        (this.writes.size === 0 && (afterCommit || this.due() || this.o.noCompany()));
      if (!ready) break;
      const write: Promise<void> = this.commit(this.takeBatch())
        .catch((e) => this.o.log.error({ err: e }, 'ingest writer failed'))
        .finally(() => {
          this.writes.delete(write);
          this.pump(false, true);
        });
      this.writes.add(write);
    }
    // A unit still being decoded pumps again when it is back.
    if (!this.timer && this.writes.size === 0 && this.headReady()) {
      const wait = Math.max(0, (this.pending[0] as Unit).at + this.o.flushIntervalMs - performance.now());
      this.timer = setTimeout(() => this.pump(), wait);
    }
  }

  /**
   * The store's write of a batch of units: columns when any unit was decoded in the worker thread (the
   * units joined column by column, or laid out again when a device's readings do not move forward
   * from one to the next), else the readings.
   */
  private storeWrite(units: readonly Unit[]): () => Promise<unknown> {
    const writeColumns = this.o.writeColumns;
    if (!units.some((u) => u.columns) || !writeColumns) {
      const readings = units.flatMap((u) => u.readings);
      return () => this.o.store.write(readings);
    }
    const parts = units.flatMap((u) =>
      u.columns ? [u.columns] : u.readings.length > 0 ? [columnize(u.readings)] : [],
    );
    const columns =
      (parts.length === 1 ? parts[0]! : concatBatches(parts)) ??
      columnize(units.flatMap((u) => (u.columns ? readingsOf(u.columns) : u.readings)));
    return () => writeColumns(columns);
  }

  /**
   * Writes one batch, retrying with backoff while the store is unavailable or misconfigured. A
   * configuration error (database missing, credentials refused) is the deployment's, not the readings':
   * they wait, unacknowledged, until it is fixed. Anything else the store refuses for good is the batch's
   * own: after two more tries it goes to the dead letters.
   */
  private async writeBatch(units: readonly Unit[]): Promise<'committed' | 'rejected' | 'abandoned'> {
    const { log, metrics } = this.o;
    let write: () => Promise<unknown>;
    try {
      write = this.storeWrite(units);
    } catch (e) {
      // Laying the readings out refused them (the store would have, the same way).
      log.error({ err: e }, 'store rejected a batch; dead-lettering it');
      return 'rejected';
    }
    let attempt = 0;
    for (;;) {
      if (this.abandoned) return 'abandoned';
      const t0 = performance.now();
      try {
        await write();
        metrics.writeLatency.observe((performance.now() - t0) / 1000);
        if (this.problem !== null) {
          this.problem = null;
          this.lastFailureLog = { at: -Infinity, message: '' };
          log.info('store writes commit again');
        }
        return 'committed';
      } catch (e) {
        const storeError = e instanceof StoreError ? e : null;
        const held = storeError?.kind === 'configuration';
        const retryable = !storeError || storeError.retryable || held;
        if (!retryable && attempt >= 2) {
          log.error({ err: e }, 'store rejected a batch; dead-lettering it');
          return 'rejected';
        }
        const message = e instanceof Error ? e.message : String(e);
        this.problem = message;
        metrics.retried.inc();
        const delay = Math.min(held ? 10_000 : 5000, 100 * 2 ** Math.min(attempt, 7));
        const now = performance.now();
        if (message !== this.lastFailureLog.message || now - this.lastFailureLog.at >= 60_000) {
          this.lastFailureLog = { at: now, message };
          const what = held
            ? 'store refuses writes until its configuration is fixed; readings wait unacknowledged'
            : 'store write failed';
          (held ? log.error : log.warn).call(log, { err: e, attempt: attempt + 1, retryInMs: delay }, what);
        }
        attempt++;
        await sleep(delay);
      }
    }
  }

  /** Commits one batch, then publishes and acknowledges it (or dead-letters it when refused). */
  private async commit(batch: Unit[]): Promise<void> {
    const { metrics } = this.o;
    const count = batch.reduce((n, u) => n + u.count, 0);
    const result = count > 0 ? await this.writeBatch(batch) : 'committed';
    if (result === 'abandoned') return;
    if (result === 'committed') {
      if (count > 0) {
        metrics.batches.inc();
        metrics.stored.inc(count);
      }
      // Live first, then the acknowledgements: a process killed in between has its batch redelivered
      // (stored again, harmlessly) rather than acknowledged and never published live.
      this.o.committed(batch);
    } else {
      metrics.dropped.inc(count, { reason: 'store-rejected' });
      for (const u of batch) {
        if (u.count === 0) continue;
        metrics.rejected.inc(u.withReadings, { reason: 'store-rejected' });
        this.o.deadLetters.add(
          `store/${u.deviceKey}`,
          'store-rejected',
          'the store refused the batch',
          JSON.stringify(unitReadings(u)),
        );
      }
    }
    if (!this.abandoned) this.o.acknowledge(batch);
    this.inFlightMessages -= batch.reduce((n, u) => n + u.messages, 0);
    this.gauges();
    this.release();
  }

  private release(): void {
    if (this.held && this.inFlightMessages < this.o.maxInFlight) {
      const resume = this.held;
      this.held = null;
      this.o.metrics.paused.set(0);
      resume();
    }
  }
}
