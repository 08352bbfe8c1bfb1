/**
 * The embedded TelemetryStore on DuckDB: a facade over parts with one job each.
 *
 * - open.ts: the database, its connections, the schema and its migrations (schema.ts);
 * - devices.ts: the device registry (the integer id of each device key);
 * - deviceState.ts: what is kept in memory per device (newest timestamp and values, dirty mark);
 * - writer.ts: the write path (a batch committed on the write connection; staging.ts);
 * - checkpoints.ts: the checkpoint schedule, with the write journal (journal.ts) taking writes meanwhile;
 * - bulk.ts: the bulk loader (history in large transactions on a connection of its own);
 * - rollups.ts: the rollup refresher (counter steps in counters.ts);
 * - raw.ts, series.ts, energy.ts: the readers, on a connection of their own;
 * - trim.ts, limits.ts: DuckDB's memory: the idle trim of its cache, the lower limit of bulk work.
 *
 * Writes are serialized on one connection (the write lock, db.ts); queries run on a second one.
 */
import type { CounterRules } from '@kilowatch/core';
import { isMemorySize, memorySizeBytes } from '@kilowatch/core';
import { type ColumnBatch, checkBatch, columnize } from '../columns.ts';
import {
  checkTimeRange,
  type DeleteReadingsQuery,
  type EnergyQuery,
  type EnergyResult,
  type LatestValues,
  type RawPage,
  type RawQuery,
  type RawRow,
  type Reading,
  type RollupRunResult,
  rejectedQuery,
  type SeriesQuery,
  type SeriesResult,
  StoreError,
  type StoreHealth,
  type StoreMemory,
  type StoreMemoryLimits,
  type TelemetryStore,
  type WriteResult,
} from '../port.ts';
import { BulkLoader } from './bulk.ts';
import { Checkpoints, type WriteStats } from './checkpoints.ts';
import { Db, readRows } from './db.ts';
import { DeviceState } from './deviceState.ts';
import { DeviceRegistry } from './devices.ts';
import { EnergyReader } from './energy.ts';
import { MemoryLimits, outOfMemory } from './limits.ts';
import { openDatabase } from './open.ts';
import { RawReader } from './raw.ts';
import { RollupRefresher } from './rollups.ts';
import { SeriesReader } from './series.ts';
import { MemoryTrim, type TrimResult } from './trim.ts';
import { WritePath } from './writer.ts';

export interface DuckDbStoreOptions {
  /** Database file; in memory when omitted. */
  path?: string;
  /** Overrides of the counter rules (jitter tolerance, maximum plausible power) for every counter. */
  rules?: Partial<CounterRules>;
  /** Readings the write journal holds at most while a checkpoint runs (default 200,000). */
  journalMaxRows?: number;
  /**
   * The most memory DuckDB keeps for its caches and queries, as DuckDB reads it (`512MB`, `2GB`,
   * `1.5GiB`); past it, large operations spill to a temp folder beside the file. Unset: DuckDB's own
   * default, 80 % of the machine's memory — too greedy for a small home server running other things.
   */
  memoryLimit?: string;
  /**
   * What DuckDB may keep cached once the store has been idle for `idleTrimMs` (a file database only;
   * trim.ts): `64MB` gives the rest of a large query's cache back to the system. Unset: no trim.
   */
  idleMemoryLimit?: string;
  /** Milliseconds without a read or bulk load before the idle trim (default 15 s). */
  idleTrimMs?: number;
  /**
   * DuckDB's memory limit while bulk work runs (limits.ts): history bulk-loaded (`writeBulk`), a rollup
   * refresh of more than a day of history, a raw stream (`streamRaw`, an export). Below `memoryLimit`, it
   * lowers the process's peak during a backfill or an export; queries meanwhile work under it too. Unset
   * (or not below `memoryLimit`): `memoryLimit`.
   */
  bulkMemoryLimit?: string;
  /**
   * Tests only: awaited inside every checkpoint, after DuckDB's CHECKPOINT and before the batches
   * journaled meanwhile are applied — a checkpoint that lasts until the test lets it end.
   */
  holdCheckpoint?: () => Promise<void>;
}

/** Whether `text` is a size DuckDB's `memory_limit` takes: a number and a unit (`512MB`, `1.5GiB`). */
export { isMemorySize };

/** Readings the journal takes while a checkpoint runs; past it, writes wait for DuckDB (backpressure). */
const MAX_PARKED_ROWS = 200_000;

/**
 * Rollup buckets a refresh rewrites past which the store checkpoints and its cache is trimmed when idle
 * (a minute of 6 meters: ~1,300).
 */
const LARGE_REFRESH_BUCKETS = 50_000;

/** Time after a large refresh before its checkpoint, and between looks for a bulk load's end. */
const CHECKPOINT_DELAY_MS = 1_000;

/** History a refresh rewrites (the oldest dirty mark's age) past which it runs under `bulkMemoryLimit`. */
const HEAVY_REFRESH_MS = 86_400_000;

/** Idle time before DuckDB's cache is trimmed to `idleMemoryLimit`. */
const IDLE_TRIM_MS = 15_000;

export class DuckDbStore implements TelemetryStore {
  readonly engine = 'duckdb' as const;
  readonly capabilities = { columnWrites: true } as const;
  private readonly devicesOf = new DeviceRegistry();
  private readonly state = new DeviceState();
  private readonly writer: WritePath;
  private readonly checkpoints: Checkpoints;
  private readonly bulk: BulkLoader;
  private readonly rollups: RollupRefresher;
  private readonly raw: RawReader;
  private readonly seriesReader: SeriesReader;
  private readonly energyReader: EnergyReader;
  /**
   * The health probe's own connection: a connection runs one query at a time, so a probe on the read
   * connection would wait behind the longest read in progress and report a busy store as a slow one.
   */
  private probeConn: Awaited<ReturnType<Db['instance']['connect']>> | null = null;
  /** The idle trim of DuckDB's cache (trim.ts), when asked for. */
  private trimmer: MemoryTrim | null = null;
  /** The lower limit of bulk work — bulk loads, large refreshes, raw streams (limits.ts) — with a memory limit. */
  private limits: MemoryLimits | null = null;
  /** A large refresh ran: checkpoint once no bulk load runs (`checkpointSoon`). */
  private checkpointTimer: ReturnType<typeof setTimeout> | null = null;

  private constructor(
    private readonly db: Db,
    maxParkedRows: number,
    holdCheckpoint: (() => Promise<void>) | null,
  ) {
    const { devicesOf: devices, state } = this;
    this.writer = new WritePath(db, devices, state, (bytes) => this.checkpoints.committed(bytes));
    this.checkpoints = new Checkpoints(db, this.writer, maxParkedRows, holdCheckpoint);
    this.bulk = new BulkLoader(
      db,
      devices,
      state,
      this.writer,
      () => this.limits?.relieve() ?? Promise.resolve(false),
    );
    this.rollups = new RollupRefresher(db, state);
    // No read waits for a checkpoint (checkpoints.ts): series and energy a moment at most for the
    // batches journaled meanwhile, raw pages and newest values lay them over what DuckDB answers.
    const ready = async () => {
      db.assertOpen();
      await this.checkpoints.caughtUp();
    };
    this.raw = new RawReader(db, devices, state, () => this.checkpoints.pending());
    this.seriesReader = new SeriesReader(db, devices, ready);
    this.energyReader = new EnergyReader(db, devices, ready);
  }

  static async open(opts: DuckDbStoreOptions = {}): Promise<DuckDbStore> {
    const { instance, w, r, ck, rebuild } = await openDatabase(opts);
    const db = new Db(instance, w, r, ck, opts.rules);
    const store = new DuckDbStore(db, opts.journalMaxRows ?? MAX_PARKED_ROWS, opts.holdCheckpoint ?? null);
    await store.devicesOf.load(w);
    await store.state.load(w);
    if (opts.path) await store.checkpoints.openJournal(`${opts.path}.journal`);
    const limit = opts.memoryLimit?.trim();
    const bulkLimit = opts.bulkMemoryLimit?.trim();
    if (bulkLimit !== undefined && !isMemorySize(bulkLimit)) {
      await store.close();
      throw new StoreError(
        `the bulk memory limit must be a size such as 192MB, got "${bulkLimit}"`,
        'configuration',
      );
    }
    if (limit !== undefined) store.limits = new MemoryLimits(db, limit, bulkLimit);
    if (rebuild) await store.refreshRollups();
    const idle = opts.idleMemoryLimit?.trim();
    if (idle !== undefined && opts.path) {
      const problem = !isMemorySize(idle)
        ? `the idle memory limit must be a size such as 64MB, got "${opts.idleMemoryLimit}"`
        : limit === undefined
          ? 'an idle memory limit needs a memory limit to go back to'
          : null;
      if (problem) {
        await store.close();
        throw new StoreError(problem, 'configuration');
      }
      const limits = store.limits!;
      store.trimmer = new MemoryTrim(db, {
        limit: () => limits.current(),
        idleLimit: idle,
        idleMs: opts.idleTrimMs ?? IDLE_TRIM_MS,
      });
      store.trimmer.start();
    }
    return store;
  }

  /**
   * Trims DuckDB's cache to the idle memory limit now, unless a read or bulk load runs (trim.ts); the
   * store does this by itself after `idleTrimMs` without one.
   */
  trimMemory(): Promise<TrimResult> {
    return this.trimmer ? this.trimmer.trim() : Promise.resolve('small');
  }

  /** Bytes DuckDB holds for its cache and queries, by its own accounting (`memoryByTag`, summed). */
  async memoryUsage(): Promise<number> {
    return (await this.memoryByTag()).reduce((sum, m) => sum + m.memoryBytes, 0);
  }

  async memoryByTag(): Promise<StoreMemory[]> {
    this.db.assertOpen();
    const rows = await readRows(
      this.db.r,
      'SELECT tag, memory_usage_bytes::DOUBLE, temporary_storage_bytes::DOUBLE FROM duckdb_memory() ORDER BY tag',
    );
    return rows.map(([tag, memoryBytes, temporaryBytes]) => ({
      tag: String(tag),
      memoryBytes: Number(memoryBytes),
      temporaryBytes: Number(temporaryBytes),
    }));
  }

  /** DuckDB's memory limit in force and whether the bulk limit was given up (null without a limit). */
  memoryLimits(): StoreMemoryLimits | null {
    if (!this.limits) return null;
    return { inForceBytes: memorySizeBytes(this.limits.current()), bulkLimitGivenUp: this.limits.givenUp };
  }

  /** Runs a bulk load or a large refresh under the bulk memory limit, when there is one (limits.ts). */
  private heavy<T>(fn: () => Promise<T>): Promise<T> {
    return this.limits ? this.limits.during(fn) : fn();
  }

  /** Runs a read (or bulk load) so that the idle trim waits for it. */
  private during<T>(fn: () => Promise<T>): Promise<T> {
    return this.trimmer ? this.trimmer.during(fn) : fn();
  }

  /** The memory limit DuckDB works under, as DuckDB writes it (`1.0 GiB`). */
  async memoryLimit(): Promise<string> {
    this.db.assertOpen();
    const [row] = await readRows(this.db.r, `SELECT current_setting('memory_limit')`);
    return String(row?.[0]);
  }

  // ---------------------------------------------------------------- writes

  async write(readings: readonly Reading[]): Promise<WriteResult> {
    this.db.assertOpen();
    // Validated and laid out in columns before queueing for the write connection, so this work overlaps
    // with the commit of the batch ahead. A bad batch is refused whole.
    await this.checkpoints.write(columnize(readings));
    return { written: readings.length };
  }

  /**
   * A batch already laid out in columns (by `columnize`, possibly in another thread — the MQTT bridge
   * decodes and lays out in a worker): checked, then written as `write` would.
   */
  async writeColumns(batch: ColumnBatch): Promise<WriteResult> {
    this.db.assertOpen();
    checkBatch(batch);
    await this.checkpoints.write(batch);
    return { written: batch.rows };
  }

  /** History in large transactions beside the live writes (bulk.ts). */
  async writeBulk(batches: AsyncIterable<readonly Reading[] | ColumnBatch>): Promise<WriteResult> {
    this.db.assertOpen();
    return this.during(() => this.heavy(() => this.bulk.write(batches)));
  }

  /** Counters of the write path (for tests and metrics). */
  writeStats(): WriteStats {
    return this.checkpoints.stats();
  }

  /** Refreshes the rollups of every device written since the last refresh (rollups.ts). */
  async refreshRollups(now: number = Date.now()): Promise<RollupRunResult> {
    let oldest = now;
    for (const [id, from] of this.state.dirty)
      if (!this.state.bulkLoading.has(id)) oldest = Math.min(oldest, from);
    let result: RollupRunResult;
    if (now - oldest > HEAVY_REFRESH_MS && this.limits) {
      const limits = this.limits;
      try {
        result = await limits.during(() => this.rollups.refresh(now));
      } catch (e) {
        // Out of memory under the bulk limit: again under the whole limit, which the store keeps from now on.
        if (!(outOfMemory(e) && (await limits.relieve()))) throw e;
        result = await this.rollups.refresh(now);
      }
    } else result = await this.rollups.refresh(now);
    // A refresh after a backfill fills the cache up to the limit, and its rows stay in memory until a
    // checkpoint (checkpoints.ts `request`); the minute's refresh of live readings is trimmed at once
    // when nobody reads (trim.ts `refreshed`).
    if (result.buckets >= LARGE_REFRESH_BUCKETS) {
      this.checkpointSoon();
      this.trimmer?.touched();
    } else if (result.buckets > 0) this.trimmer?.refreshed();
    return result;
  }

  /**
   * Checkpoints `CHECKPOINT_DELAY_MS` after a large refresh, or once the bulk load running then is over: a
   * bulk load often follows such a refresh (the demo's two days, then its year), and a checkpoint beside
   * it would hold its commits back.
   */
  private checkpointSoon(): void {
    this.checkpointTimer ??= setTimeout(() => {
      this.checkpointTimer = null;
      if (this.db.closed) return;
      if (this.state.bulkLoading.size > 0) this.checkpointSoon();
      else this.checkpoints.request();
    }, CHECKPOINT_DELAY_MS);
    this.checkpointTimer.unref();
  }

  /**
   * Runs the checkpoint a large refresh asked for now rather than after its delay (unless a bulk load
   * runs: it then comes after it, as `checkpointSoon` has it), and waits until no checkpoint runs.
   * Afterwards the history is the file's compressed blocks, as after a restart, and reads no longer share
   * the machine with the checkpoint: a year of 20 meters takes 7–13 s to checkpoint on 2 cores, and a
   * one-year chart asked meanwhile answers in twice its time. Benches time answers from here.
   */
  async settle(): Promise<void> {
    if (this.checkpointTimer && this.state.bulkLoading.size === 0) {
      clearTimeout(this.checkpointTimer);
      this.checkpointTimer = null;
      this.checkpoints.request();
    }
    await this.checkpoints.running();
  }

  // ---------------------------------------------------------------- reads

  readRaw(query: RawQuery): Promise<RawPage> {
    return this.during(() => this.raw.readRaw(query));
  }

  streamRaw(query: Omit<RawQuery, 'cursor' | 'limit'> & { pageSize?: number }): AsyncIterable<RawRow[]> {
    // An export's stream reads every block once: under the bulk limit, it does not fill the cache.
    const raw = this.raw.streamRaw(query);
    const pages = this.limits ? this.limits.iterate(raw) : raw;
    return this.trimmer ? this.trimmer.iterate(pages) : pages;
  }

  latest(deviceKey: string): Promise<LatestValues | null> {
    return this.during(() => this.raw.latest(deviceKey));
  }

  series(query: SeriesQuery): Promise<SeriesResult> {
    return this.during(() => this.seriesReader.series(query));
  }

  seriesMany(queries: readonly SeriesQuery[]): Promise<SeriesResult[]> {
    return this.during(() => this.seriesReader.seriesMany(queries));
  }

  energy(query: EnergyQuery): Promise<EnergyResult> {
    return this.during(() => this.energyReader.read(query));
  }

  // ---------------------------------------------------------------- admin

  deleteDevice(deviceKey: string): Promise<void> {
    this.db.assertOpen();
    return this.db.lock.run(() => this.writer.deleteDevice(deviceKey));
  }

  /** A device's readings in [from, to); its rollups follow at the next refresh (writer.ts). */
  deleteReadings(query: DeleteReadingsQuery): Promise<void> {
    this.db.assertOpen();
    checkTimeRange(query.from, query.to);
    if (typeof query.deviceKey !== 'string' || query.deviceKey.length === 0)
      throw rejectedQuery('deviceKey is required');
    return this.db.lock.run(() => this.writer.deleteReadings(query.deviceKey, query.from, query.to));
  }

  /** Devices with readings: those DuckDB holds, and those of the batches journaled during a checkpoint. */
  async devices(): Promise<string[]> {
    this.db.assertOpen();
    const parked = this.checkpoints.pending();
    const found = await readRows(
      this.db.r,
      'SELECT k.key FROM rollup_state s JOIN device_keys k ON k.id = s.device WHERE s.newest IS NOT NULL ORDER BY k.key',
    );
    const keys = found.map((r) => r[0] as string);
    if (parked.length === 0) return keys;
    const all = new Set(keys);
    for (const b of parked)
      for (let d = 0; d < b.keys.length; d++) if (Number.isFinite(b.minByDev[d]!)) all.add(b.keys[d]!);
    return [...all].sort();
  }

  async health(): Promise<StoreHealth> {
    if (this.db.closed) return { ok: false, engine: 'duckdb', detail: 'closed' };
    const problem = this.checkpoints.problem();
    if (problem) return { ok: false, engine: 'duckdb', detail: problem };
    try {
      this.probeConn ??= await this.db.instance.connect();
      await this.probeConn.run('SELECT 1');
      return { ok: true, engine: 'duckdb' };
    } catch (e) {
      return { ok: false, engine: 'duckdb', detail: (e as Error).message };
    }
  }

  async close(): Promise<void> {
    const { db } = this;
    if (db.closed) return;
    this.trimmer?.stop();
    if (this.checkpointTimer) clearTimeout(this.checkpointTimer);
    this.checkpointTimer = null;
    await this.checkpoints.running();
    await db.lock.run(async () => {
      // What the journal holds is applied now, or kept for the next open if DuckDB refuses it.
      await this.checkpoints.applyParked();
      await this.writer.snapshotLatest().catch(() => undefined);
      this.writer.close();
      db.closed = true;
    });
    await this.checkpoints.running();
    await this.checkpoints.closeJournal();
    // The last checkpoint off the event loop (closing would otherwise take it synchronously).
    if (db.ck) await db.ck.run('CHECKPOINT').catch(() => undefined);
    this.bulk.close();
    this.probeConn?.closeSync();
    db.w.closeSync();
    db.r.closeSync();
    db.ck?.closeSync();
    db.instance.closeSync();
  }
}
