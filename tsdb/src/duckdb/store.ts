/**
 * The embedded TelemetryStore on DuckDB (schema in schema.ts, counter steps in counters.ts).
 *
 * Writes are serialized on one connection: a batch is appended in data chunks to a connection-local
 * staging table holding only the batch's columns, then merged into `readings` in one transaction
 * (restricted to the batch's time range so zone maps prune old row groups) together with the
 * per-device rollup dirty mark when it moves. Queries run on a second connection.
 *
 * The newest value of every (device, parameter) lives in memory and is written to `latest_values` as a
 * snapshot (with each device's newest timestamp in `rollup_state.newest`) before every checkpoint and at
 * close, not in every commit: for a steady stream that table churned more rows per commit than the batch
 * had readings. A batch that lands at or before a device's newest reading (late data, redeliveries) or
 * that brings a new device still updates `latest_values` in its own commit. On open, whatever was written
 * after a device's snapshot (`ts > newest`) is read back from `readings`, so a crash loses nothing.
 *
 * The store checkpoints itself every 16 MiB written. While a checkpoint runs, writes are acknowledged from
 * a journal file beside the database and applied when it ends (journal.ts), so no commit waits for it.
 */
import {
  DOUBLE,
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBInstance,
  type DuckDBType,
  type DuckDBValue,
  INTEGER,
} from '@duckdb/node-api';
import bindings from '@duckdb/node-bindings';
import {
  bucketIndexOf,
  CALENDAR_UNIT_OF,
  type CounterRules,
  calendarBuckets,
  combinedParamDef,
  counterBucketStart,
  counterInstantSql,
  counterRules,
  DEFAULT_TIMEZONE,
  fineRollup,
  fixedBucketStart,
  fixedBucketStarts,
  isCalendarInterval,
  isMemorySize,
  isQueryableParam,
  isRollupInterval,
  isStoredParam,
  isValidTimeZone,
  paramDef,
  sumSeries,
} from '@kilowatch/core';
import { type ColumnBatch, checkBatch, columnize, concatBatches, readingsOf } from '../columns.ts';
import {
  checkTimeRange,
  type EnergyInterval,
  type EnergyQuery,
  type EnergyResult,
  type LatestValues,
  type RawPage,
  type RawQuery,
  type RawRow,
  type Reading,
  ROLLUP_STEP_MS,
  type RollupInterval,
  type RollupRunResult,
  type SeriesInterval,
  type SeriesQuery,
  type SeriesResult,
  type Stat,
  StoreError,
  type StoreHealth,
  seriesStats,
  type TelemetryStore,
  type WriteResult,
} from '../port.ts';
import { bucketStartSql } from './calendar.ts';
import { assertDoubleColumns, type DoubleColumn, doubleColumns, valueAt } from './chunks.ts';
import { counterStepsSql } from './counters.ts';
import { Journal } from './journal.ts';
import { Mutex } from './mutex.ts';
import {
  AGG_NAMES,
  COUNTERS,
  catalogueMigration,
  q,
  READING_COLUMNS,
  ROLLUP_VERSION,
  SCHEMA,
  SCHEMA_VERSION,
  STORED,
  valueExpr,
} from './schema.ts';

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
}

/** Whether `text` is a size DuckDB's `memory_limit` takes: a number and a unit (`512MB`, `1.5GiB`). */
export { isMemorySize };

const STEP_15M = ROLLUP_STEP_MS['15m'];
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));
const CHUNK_ROWS = 2048;
const LV_TYPES: DuckDBType[] = [INTEGER, INTEGER, DOUBLE, DOUBLE];
/** The staged newest values with parameter names (`lv.col` is the position in `STORED`). */
const LV = `(SELECT device, [${STORED.map((n) => `'${n}'`).join(', ')}][col + 1] AS param, ts::BIGINT AS ts, v FROM lv)`;
/** Bytes committed between checkpoints (DuckDB's default threshold is 16 MiB of WAL). */
const CHECKPOINT_BYTES = 16 * 1024 * 1024;
const MAX_PAGE = 10_000;
/** Readings the journal takes while a checkpoint runs; past it, writes wait for DuckDB (backpressure). */
const MAX_PARKED_ROWS = 200_000;
/**
 * History per rollup-refresh window (whole hours). Each window costs a counter-step statement per group
 * of devices, so short windows are paid for in CPU: the demo year's refresh took 105.6 CPU-s in 30-day
 * windows and 67.8 CPU-s in one window, at the same peak RSS (1.68 vs 1.73 GB, the bulk load's own peak;
 * `pnpm bench backfill --loader --days 365`, bench/results/backfill.md). A year per window keeps the
 * per-window dirty marks and transactions for longer histories without that cost.
 */
const REFRESH_WINDOW_MS = 366 * 86_400_000;
/** How far before a refresh's start the counters' seeds are looked for first (see `seeds`). */
const SEED_LOOKBACK_MS = 2 * 86_400_000;
/** Devices of the same kind refreshed in one statement (see `refreshGroups`). */
const REFRESH_GROUP = 4;
const COUNTER_SET: ReadonlySet<string> = new Set(COUNTERS);
/** Rows per bulk-load transaction: above DuckDB's row-group size (122,880). */
const BULK_ROWS = 250_000;

type Row = DuckDBValue[];

/** A journaled batch waiting for DuckDB. */
interface Parked {
  batch: ColumnBatch;
}

/** Readings applied together from the journal in one transaction. */
const APPLY_READINGS = 20_000;

function rejected(message: string): StoreError {
  return new StoreError(message, 'rejected');
}

function asNum(v: DuckDBValue): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return Number(v);
}

/** One (device, parameter) a series read fills, and the answers' stat arrays it fills. */
interface SeriesSlot {
  dev: number;
  param: string;
  outs: readonly SeriesResult['series'][string][];
}

export class DuckDbStore implements TelemetryStore {
  readonly engine = 'duckdb' as const;
  readonly capabilities = { columnWrites: true } as const;
  private readonly lock = new Mutex();
  private readonly ids = new Map<string, number>();
  private readonly keys = new Map<number, string>();
  /** Newest timestamp stored per device id: a batch entirely after it cannot collide. */
  private readonly newest = new Map<number, number>();
  /** Newest value per device id and parameter (`STORED` order; timestamp NaN when never seen). */
  private readonly latestOf = new Map<number, { ts: Float64Array; v: Float64Array }>();
  /** `rollup_state.dirty_from` per device id (absent when clean), so a commit writes it only when it moves. */
  private readonly dirty = new Map<number, number>();
  /** Whether `latestOf` holds anything the last snapshot does not. */
  private latestChanged = false;
  /** Device ids with a `rollup_state` row. */
  private readonly stateRow = new Set<number>();
  /** Device ids a bulk load is writing (count of loads): the rollup refresh leaves them for after it. */
  private readonly bulkLoading = new Map<number, number>();
  /** Connection of `writeBulk` (opened on first use). */
  private bulkConn: DuckDBConnection | null = null;
  /**
   * The health probe's own connection: a connection runs one query at a time, so a probe on the read
   * connection would wait behind the longest read in progress and report a busy store as a slow one.
   */
  private probeConn: DuckDBConnection | null = null;
  private readonly staging = new Map<string, string>();
  private lvReady = false;
  private walBytes = 0;
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
  private readonly maxParkedRows: number;
  private journaledBatches = 0;
  private applyError: string | null = null;
  private closed = false;
  private readonly rulesOf: (counter: string) => CounterRules;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly w: DuckDBConnection,
    private readonly r: DuckDBConnection,
    /** Checkpoints run here, beside the writes (file databases only). */
    private readonly ck: DuckDBConnection | null,
    rules: Partial<CounterRules> | undefined,
    maxParkedRows: number,
  ) {
    this.rulesOf = (c) => counterRules(c, rules ?? {});
    this.maxParkedRows = maxParkedRows;
  }

  static async open(opts: DuckDbStoreOptions = {}): Promise<DuckDbStore> {
    const limit = opts.memoryLimit?.trim();
    if (limit !== undefined && !isMemorySize(limit)) {
      throw new StoreError(
        `the DuckDB memory limit must be a size such as 512MB or 2GB, got "${opts.memoryLimit}"`,
        'configuration',
      );
    }
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(
        opts.path ?? ':memory:',
        limit === undefined ? undefined : { memory_limit: limit },
      );
    } catch (e) {
      throw new StoreError(
        `cannot open DuckDB at ${opts.path ?? ':memory:'}: ${(e as Error).message}`,
        'configuration',
        {
          cause: e,
        },
      );
    }
    const w = await instance.connect();
    const r = await instance.connect();
    const ck = opts.path ? await instance.connect() : null;
    // Checkpoints are started by the store on `ck` (see `written`); DuckDB's automatic one, run inside
    // a commit, stays only as a safety net for a WAL that grew anyway.
    if (ck) await w.run(`SET checkpoint_threshold = '256MB'`);
    for (const sql of SCHEMA) await w.run(sql);
    const columns = (
      await w.runAndReadAll(
        `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'readings'`,
      )
    ).getRows();
    for (const sql of catalogueMigration(new Set(columns.map(([c]) => c as string)))) await w.run(sql);
    const version = (
      await w.runAndReadAll(`SELECT v FROM meta WHERE k = 'schema_version'`)
    ).getRows()[0]?.[0];
    if (version === undefined) {
      await w.run(`INSERT INTO meta VALUES ('schema_version', '${SCHEMA_VERSION}'), ('watermark', NULL)`);
    } else if (version !== String(SCHEMA_VERSION)) {
      w.closeSync();
      r.closeSync();
      ck?.closeSync();
      instance.closeSync();
      throw new StoreError(
        `${opts.path} holds schema version ${version}; this build reads version ${SCHEMA_VERSION}`,
        'configuration',
      );
    }
    const rollupVersion = (
      await w.runAndReadAll(`SELECT v FROM meta WHERE k = 'rollup_version'`)
    ).getRows()[0]?.[0];
    let rebuild = false;
    if (rollupVersion === undefined && version === undefined) {
      await w.run(`INSERT INTO meta VALUES ('rollup_version', '${ROLLUP_VERSION}')`);
    } else if (Number(rollupVersion ?? 1) < ROLLUP_VERSION) {
      // Rollups computed by an older rule: dropped, and every device marked dirty from its first
      // reading, so they are recomputed before the store answers (below).
      await w.run('BEGIN TRANSACTION');
      for (const t of ['rollup_15m', 'rollup_30m', 'rollup_1h', 'counter_events'])
        await w.run(`DELETE FROM ${t}`);
      await w.run(`UPDATE rollup_state SET dirty_from = f.first FROM
        (SELECT device, min(ts) AS first FROM readings GROUP BY device) f WHERE rollup_state.device = f.device`);
      await w.run(`DELETE FROM meta WHERE k = 'rollup_version'`);
      await w.run(`INSERT INTO meta VALUES ('rollup_version', '${ROLLUP_VERSION}')`);
      await w.run('COMMIT');
      rebuild = true;
    }
    const built = (
      await w.runAndReadAll(`SELECT count(*) FROM meta WHERE k = 'latest_values'`)
    ).getRows()[0]?.[0];
    if (Number(built) === 0) {
      await w.run('BEGIN TRANSACTION');
      await w.run(`INSERT INTO latest_values SELECT device, param, max(ts), arg_max(v, ts)
        FROM (UNPIVOT (SELECT ${READING_COLUMNS} FROM readings) ON ${STORED.map(q).join(', ')} INTO NAME param VALUE v) GROUP BY ALL`);
      await w.run(`INSERT INTO meta VALUES ('latest_values', 'built')`);
      await w.run('COMMIT');
    }
    const store = new DuckDbStore(instance, w, r, ck, opts.rules, opts.journalMaxRows ?? MAX_PARKED_ROWS);
    await store.load();
    if (opts.path) await store.openJournal(`${opts.path}.journal`);
    if (rebuild) await store.refreshRollups();
    return store;
  }

  private async load(): Promise<void> {
    for (const [id, key] of await this.rows(this.w, 'SELECT id, key FROM device_keys')) {
      this.ids.set(key as string, id as number);
      this.keys.set(id as number, key as string);
    }
    for (const [id, newest, dirtyFrom] of await this.rows(
      this.w,
      'SELECT device, newest::DOUBLE, dirty_from::DOUBLE FROM rollup_state',
    )) {
      this.stateRow.add(id as number);
      if (newest !== null) this.newest.set(id as number, newest as number);
      if (dirtyFrom !== null) this.dirty.set(id as number, dirtyFrom as number);
    }
    const col = new Map<string, number>(STORED.map((n, i) => [n, i]));
    const put = (dev: number, param: string, ts: number, v: number) => {
      const c = col.get(param);
      if (c === undefined) return;
      const l = this.latestEntry(dev);
      if (!(l.ts[c]! >= ts)) {
        l.ts[c] = ts;
        l.v[c] = v;
      }
    };
    for (const [dev, param, ts, v] of await this.rows(
      this.w,
      'SELECT device, param, ts::DOUBLE, v FROM latest_values',
    )) {
      put(dev as number, param as string, ts as number, v as number);
    }
    // Readings committed after a device's last snapshot: their newest values and timestamp.
    // Every device with a state row: after its snapshot's newest, or all of it when a bulk load was
    // interrupted before its first newest was recorded. (A device without a row was never written or
    // was deleted.)
    for (const id of this.stateRow) {
      const after = this.newest.get(id);
      const where = after === undefined ? `device = ${id}` : `device = ${id} AND ts > ${after}`;
      const rows = await this.rows(
        this.w,
        `SELECT param, max(ts)::DOUBLE, arg_max(v, ts) FROM (UNPIVOT (SELECT ${READING_COLUMNS} FROM readings WHERE ${where})
          ON ${STORED.map(q).join(', ')} INTO NAME param VALUE v) GROUP BY param`,
      );
      for (const [param, ts, v] of rows) {
        put(id, param as string, ts as number, v as number);
        if ((ts as number) > (this.newest.get(id) ?? Number.NEGATIVE_INFINITY))
          this.newest.set(id, ts as number);
        this.latestChanged = true;
      }
    }
  }

  private latestEntry(dev: number): { ts: Float64Array; v: Float64Array } {
    let l = this.latestOf.get(dev);
    if (!l) {
      l = { ts: new Float64Array(STORED.length).fill(Number.NaN), v: new Float64Array(STORED.length) };
      this.latestOf.set(dev, l);
    }
    return l;
  }

  /**
   * Writes the in-memory newest values to `latest_values` and each device's newest timestamp to
   * `rollup_state.newest`, in one transaction (called with the write lock held).
   */
  private async snapshotLatest(): Promise<void> {
    if (!this.latestChanged) return;
    const dev: number[] = [];
    const colIdx: number[] = [];
    const ts: number[] = [];
    const v: number[] = [];
    for (const [id, l] of this.latestOf) {
      for (let c = 0; c < STORED.length; c++) {
        if (Number.isNaN(l.ts[c]!)) continue;
        dev.push(id);
        colIdx.push(c);
        ts.push(l.ts[c]!);
        v.push(l.v[c]!);
      }
    }
    await this.ensureLv();
    await this.exec('BEGIN TRANSACTION');
    try {
      await this.appendLatest(
        Int32Array.from(dev),
        Int32Array.from(colIdx),
        Float64Array.from(ts),
        Float64Array.from(v),
      );
      const newest = [...this.newest].map(([id, n]) => `(${id}, ${n})`);
      await this.exec(
        [
          'DELETE FROM latest_values',
          `INSERT INTO latest_values SELECT * FROM ${LV}`,
          'DELETE FROM lv',
          ...(newest.length > 0
            ? [
                `UPDATE rollup_state SET newest = v.n FROM (VALUES ${newest.join(', ')}) v(d, n) WHERE device = v.d`,
              ]
            : []),
          'COMMIT',
        ].join(';\n'),
      );
      this.latestChanged = false;
    } catch (e) {
      await this.w.run('ROLLBACK').catch(() => undefined);
      throw new StoreError(`latest-values snapshot failed: ${(e as Error).message}`, 'unavailable', {
        cause: e,
      });
    }
  }

  private async rows(conn: DuckDBConnection, sql: string): Promise<Row[]> {
    try {
      const reader = await conn.runAndReadAll(sql);
      return reader.getRows();
    } catch (e) {
      throw new StoreError(`DuckDB query failed: ${(e as Error).message}`, 'internal', { cause: e });
    }
  }

  /** Runs a query whose columns are all DOUBLE and hands each result chunk's columns to `visit`. */
  private async eachChunk(
    conn: DuckDBConnection,
    sql: string,
    visit: (cols: DoubleColumn[], rowCount: number) => void,
  ): Promise<void> {
    let result: Awaited<ReturnType<DuckDBConnection['run']>>;
    try {
      result = await conn.run(sql);
    } catch (e) {
      throw new StoreError(`DuckDB query failed: ${(e as Error).message}`, 'internal', { cause: e });
    }
    assertDoubleColumns(
      Array.from({ length: result.columnCount }, (_, j) => result.columnTypeId(j)),
      sql,
    );
    for (let c = 0; c < result.chunkCount; c++) {
      const chunk = result.getChunk(c);
      visit(doubleColumns(chunk), chunk.rowCount);
    }
  }

  private async exec(sql: string): Promise<void> {
    await this.w.run(sql);
  }

  /** The memory limit DuckDB works under, as DuckDB writes it (`1.0 GiB`). */
  async memoryLimit(): Promise<string> {
    this.assertOpen();
    const [row] = await this.rows(this.r, `SELECT current_setting('memory_limit')`);
    return String(row?.[0]);
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('the store is closed', 'unavailable');
  }

  // ---------------------------------------------------------------- writes

  async write(readings: readonly Reading[]): Promise<WriteResult> {
    this.assertOpen();
    // Validated and laid out in columns before queueing for the write connection, so this work overlaps
    // with the commit of the batch ahead. A bad batch is refused whole.
    await this.writeLaidOut(columnize(readings));
    return { written: readings.length };
  }

  /**
   * A batch already laid out in columns (by `columnize`, possibly in another thread — the MQTT bridge
   * decodes and lays out in a worker): checked, then written as `write` would.
   */
  async writeColumns(batch: ColumnBatch): Promise<WriteResult> {
    this.assertOpen();
    checkBatch(batch);
    await this.writeLaidOut(batch);
    return { written: batch.rows };
  }

  private async writeLaidOut(batch: ColumnBatch): Promise<void> {
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
    await this.lock.run(async () => {
      this.assertOpen();
      try {
        await this.writeLocked(batch);
      } catch (e) {
        if (e instanceof StoreError) throw e;
        throw new StoreError(`write failed: ${(e as Error).message}`, 'unavailable', { cause: e });
      }
    });
  }

  /** Applies what the journal still holds (a crash before it was applied), then empties it. */
  private async openJournal(path: string): Promise<void> {
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
    await this.lock.run(async () => {
      for (const b of opened.pending) if (b.rows > 0) await this.writeLocked(b);
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
  private async applyParked(): Promise<void> {
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
        await this.writeLocked(b);
      } catch (e) {
        this.applyError = (e as Error).message;
        if (!this.closed) setTimeout(() => this.retryApply(), 1000).unref();
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
    if (this.closed || this.checkpoint || this.parked.length === 0) return;
    this.checkpoint = this.lock
      .run(() => this.applyParked())
      .finally(() => {
        this.checkpoint = null;
      });
  }

  /** Reads see every acknowledged write: journaled batches are applied first (after the checkpoint). */
  private async applied(): Promise<void> {
    if (this.parked.length > 0) await this.checkpoint;
  }

  /** Counters of the write path (for tests and metrics). */
  writeStats(): {
    checkpointing: boolean;
    journaledBatches: number;
    pendingBatches: number;
    pendingRows: number;
  } {
    return {
      checkpointing: this.parking,
      journaledBatches: this.journaledBatches,
      pendingBatches: this.parked.length,
      pendingRows: this.parkedRows,
    };
  }

  /** Staging table for a set of columns (and the newest-values table), created outside any transaction. */
  private async stagingTable(cols: readonly number[]): Promise<string> {
    await this.ensureLv();
    const sig = cols.join(',');
    let name = this.staging.get(sig);
    if (!name) {
      name = `stg_${this.staging.size}`;
      await this.exec(
        `CREATE OR REPLACE TEMP TABLE ${name} (device INTEGER, ts DOUBLE${cols.map((c) => `, ${q(STORED[c]!)} DOUBLE`).join('')})`,
      );
      this.staging.set(sig, name);
    }
    return name;
  }

  private async ensureLv(): Promise<void> {
    if (this.lvReady) return;
    await this.exec('CREATE OR REPLACE TEMP TABLE lv (device INTEGER, col INTEGER, ts DOUBLE, v DOUBLE)');
    this.lvReady = true;
  }

  /** Copies the batch into the staging table: one memory copy per column and data chunk. */
  private async stage(
    stg: string,
    b: ColumnBatch,
    ids: Int32Array<ArrayBuffer>,
    conn: DuckDBConnection = this.w,
  ): Promise<void> {
    // Empty: every write clears what it staged before it commits (a rollback discards it).
    const appender = await conn.createAppender(stg, 'main', 'temp');
    const types: DuckDBType[] = [INTEGER, DOUBLE, ...b.cols.map(() => DOUBLE)];
    try {
      for (let off = 0; off < b.rows; off += CHUNK_ROWS) {
        const len = Math.min(CHUNK_ROWS, b.rows - off);
        const chunk = DuckDBDataChunk.create(types, len);
        const raw = chunk.chunk;
        bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 0), 0, ids.buffer, off * 4, len * 4);
        bindings.copy_data_to_vector(
          bindings.data_chunk_get_vector(raw, 1),
          0,
          b.ts.buffer,
          off * 8,
          len * 8,
        );
        for (let c = 0; c < b.cols.length; c++) {
          const v = bindings.data_chunk_get_vector(raw, c + 2);
          bindings.copy_data_to_vector(v, 0, b.values[c]!.buffer, off * 8, len * 8);
          if (!b.full[c]) {
            bindings.vector_ensure_validity_writable(v);
            // Chunks start on a multiple of 64 rows, so the bitmap slice starts on a word.
            bindings.copy_data_to_vector_validity(v, 0, b.valid[c]!.buffer, off / 8, Math.ceil(len / 64) * 8);
          }
        }
        appender.appendDataChunk(chunk);
        // Large batches (backfills) must not hold the event loop (the API may share the process): the
        // appender's flush is synchronous, so it flushes every few chunks and lets the loop run.
        if (off + CHUNK_ROWS < b.rows && (off / CHUNK_ROWS) % 4 === 3) {
          appender.flushSync();
          await yieldToEventLoop();
        }
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  /** The batch's newest value per (device, parameter), for `latest_values`. */
  private async stageLatest(b: ColumnBatch, idOf: readonly number[]): Promise<void> {
    // All numbers (the parameter as its catalogue position): filled as columns, no per-row calls.
    const nv = b.newest;
    const n = nv.length / 4;
    const dev = new Int32Array(n);
    const col = new Int32Array(n);
    const ts = new Float64Array(n);
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      dev[i] = idOf[nv[4 * i]!]!;
      col[i] = nv[4 * i + 1]!;
      ts[i] = nv[4 * i + 2]!;
      v[i] = nv[4 * i + 3]!;
    }
    await this.appendLatest(dev, col, ts, v);
  }

  /** Appends (device, parameter position, ts, value) rows to the `lv` staging table. */
  private async appendLatest(
    dev: Int32Array<ArrayBuffer>,
    col: Int32Array<ArrayBuffer>,
    ts: Float64Array<ArrayBuffer>,
    v: Float64Array<ArrayBuffer>,
  ): Promise<void> {
    const n = dev.length;
    const appender = await this.w.createAppender('lv', 'main', 'temp');
    try {
      for (let off = 0; off < n; off += CHUNK_ROWS) {
        const len = Math.min(CHUNK_ROWS, n - off);
        const chunk = DuckDBDataChunk.create(LV_TYPES, len);
        const raw = chunk.chunk;
        bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 0), 0, dev.buffer, off * 4, len * 4);
        bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 1), 0, col.buffer, off * 4, len * 4);
        bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 2), 0, ts.buffer, off * 8, len * 8);
        bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 3), 0, v.buffer, off * 8, len * 8);
        appender.appendDataChunk(chunk);
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  private async writeLocked(b: ColumnBatch): Promise<void> {
    const newKeys: [string, number][] = [];
    let nextId = this.nextId();
    const idOf = b.keys.map((key) => {
      let id = this.ids.get(key);
      if (id === undefined) {
        id = nextId++;
        newKeys.push([key, id]);
      }
      return id;
    });
    // A batch entirely after everything stored for its devices cannot collide: a plain append.
    const collide = idOf.some((id, d) => b.minByDev[d]! <= (this.newest.get(id) ?? Number.NEGATIVE_INFINITY));
    const ids = new Int32Array(b.rows);
    for (let r = 0; r < b.rows; r++) ids[r] = idOf[b.dev[r]!]!;
    const stg = await this.stagingTable(b.cols);

    const cols = b.cols.map((c) => STORED[c]!);
    const colList = cols.map(q).join(', ');
    // The rest of the transaction goes to DuckDB as one multi-statement query.
    const sql: string[] = [];
    if (newKeys.length > 0) {
      sql.push(
        `INSERT INTO device_keys VALUES ${newKeys.map(([key, id]) => `(${id}, '${key.replaceAll("'", "''")}')`).join(', ')}`,
      );
    }
    if (collide) {
      // Re-sent or late readings: each (device, ts) already stored takes the values the batch carries
      // and keeps the others; the rest is appended. Restricted to the batch's time range (zone maps).
      const range = `BETWEEN ${b.minTs} AND ${b.maxTs}`;
      sql.push(
        `UPDATE readings SET ${cols.map((c) => `${q(c)} = coalesce(s.${q(c)}, readings.${q(c)})`).join(', ')}
         FROM ${stg} s WHERE readings.device = s.device AND readings.ts = s.ts::BIGINT AND readings.ts ${range}`,
        `INSERT INTO readings (device, ts, ${colList})
         SELECT s.device, s.ts::BIGINT, ${cols.map((c) => `s.${q(c)}`).join(', ')} FROM ${stg} s
         ANTI JOIN (SELECT device, ts FROM readings WHERE ts ${range}) r ON r.device = s.device AND r.ts = s.ts::BIGINT`,
      );
    } else {
      sql.push(
        `INSERT INTO readings (device, ts, ${colList}) SELECT device, ts::BIGINT, ${colList} FROM ${stg}`,
      );
    }
    // The dirty mark: the earliest timestamp written since the last refresh, per device — written only
    // when it moves (the first batch after a refresh, or late data).
    const range = (d: number) => `(${idOf[d]}, ${b.minByDev[d]}, ${b.maxByDev[d]})`;
    const fresh = b.keys.map((_, d) => d).filter((d) => !this.stateRow.has(idOf[d]!));
    const moved = b.keys
      .map((_, d) => d)
      .filter(
        (d) => this.stateRow.has(idOf[d]!) && !(b.minByDev[d]! >= (this.dirty.get(idOf[d]!) ?? Number.NaN)),
      );
    if (moved.length > 0) {
      sql.push(
        `UPDATE rollup_state SET dirty_from = least(coalesce(dirty_from, v.mn), v.mn)
         FROM (VALUES ${moved.map((d) => `(${idOf[d]}, ${b.minByDev[d]})`).join(', ')}) v(d, mn)
         WHERE device = v.d`,
      );
    }
    if (fresh.length > 0) sql.push(`INSERT INTO rollup_state VALUES ${fresh.map(range).join(', ')}`);
    // Newest values: in memory (snapshotted later), and in this commit only for what recovery on open
    // would not find after a device's snapshot — late data, and a device's first batch.
    const latestNow = collide || fresh.length > 0;
    if (latestNow) {
      sql.push(
        `DELETE FROM latest_values USING ${LV} lv WHERE latest_values.device = lv.device AND latest_values.param = lv.param AND latest_values.ts <= lv.ts`,
        `INSERT INTO latest_values SELECT lv.* FROM ${LV} lv ANTI JOIN latest_values l ON l.device = lv.device AND l.param = lv.param`,
        'DELETE FROM lv',
      );
    }
    sql.push(`DELETE FROM ${stg}`, 'COMMIT');
    // Staged inside the transaction: appends to its local storage cost the event loop a fraction of
    // a committed append, and a rollback leaves the staging tables empty.
    await this.exec('BEGIN TRANSACTION');
    try {
      await this.stage(stg, b, ids);
      if (latestNow) await this.stageLatest(b, idOf);
      await this.exec(sql.join(';\n'));
    } catch (e) {
      await this.w.run('ROLLBACK').catch(() => undefined);
      throw new StoreError(`write failed: ${(e as Error).message}`, 'unavailable', { cause: e });
    }
    for (const [key, id] of newKeys) {
      this.ids.set(key, id);
      this.keys.set(id, key);
    }
    b.keys.forEach((_, d) => {
      const id = idOf[d]!;
      const mx = b.maxByDev[d]!;
      this.stateRow.add(id);
      if (mx > (this.newest.get(id) ?? Number.NEGATIVE_INFINITY)) this.newest.set(id, mx);
      const mn = b.minByDev[d]!;
      if (!(mn >= (this.dirty.get(id) ?? Number.NaN))) this.dirty.set(id, mn);
    });
    const nv = b.newest;
    for (let i = 0; i < nv.length; i += 4) {
      const l = this.latestEntry(idOf[nv[i]!]!);
      const c = nv[i + 1]!;
      const t = nv[i + 2]!;
      if (!(l.ts[c]! > t)) {
        l.ts[c] = t;
        l.v[c] = nv[i + 3]!;
      }
    }
    this.latestChanged = true;
    this.written(b.rows * (b.cols.length + 2) * 8);
  }

  // ---------------------------------------------------------------- bulk load

  /**
   * History in transactions of about `BULK_ROWS` rows on a connection of its own. That is above DuckDB's
   * row-group size, so the rows are compressed straight into the database file instead of passing
   * through the write-ahead log and a checkpoint (about 3× less work for the wide `readings` table), and
   * live writes on the write connection commit meanwhile. Around each transaction a short turn on the
   * write connection registers new devices and the rollup dirty mark before, and the dirty mark again
   * and the newest values after; a crash in between leaves at most a dirty mark with nothing behind it.
   */
  async writeBulk(batches: AsyncIterable<readonly Reading[] | ColumnBatch>): Promise<WriteResult> {
    this.assertOpen();
    this.bulkConn ??= await this.instance.connect();
    const conn = this.bulkConn;
    const staging = new Map<string, string>();
    /** Devices this load writes: the rollup refresh leaves them until it is over. */
    const loading = new Set<number>();
    let written = 0;
    let group: { stg: string; sig: string; cols: number[]; rows: number; batches: ColumnBatch[] } | null =
      null;
    const flush = async () => {
      if (!group) return;
      const g = group;
      group = null;
      await this.bulkCommit(conn, g.stg, g.cols, g.batches);
    };
    try {
      for await (const item of batches) {
        this.assertOpen();
        // Readings, or readings already laid out in columns (in another thread).
        let b: ColumnBatch;
        if (Array.isArray(item)) {
          b = columnize(item as readonly Reading[]);
          written += item.length;
        } else {
          b = item as ColumnBatch;
          checkBatch(b);
          written += b.rows;
        }
        if (b.rows === 0) continue;
        const sig = b.cols.join(',');
        if (group && group.sig !== sig) await flush();
        if (!group) {
          let stg = staging.get(sig);
          if (!stg) {
            stg = `bulk_${staging.size}`;
            await conn.run(
              `CREATE OR REPLACE TEMP TABLE ${stg} (device INTEGER, ts DOUBLE${b.cols.map((c) => `, ${q(STORED[c]!)} DOUBLE`).join('')})`,
            );
            staging.set(sig, stg);
          }
          await conn.run(`DELETE FROM ${stg}`);
          group = { stg, sig, cols: b.cols, rows: 0, batches: [] };
        }
        const ids = await this.lock.run(() => this.registerDevices(b.keys));
        for (const id of ids) {
          if (loading.has(id)) continue;
          loading.add(id);
          this.bulkLoading.set(id, (this.bulkLoading.get(id) ?? 0) + 1);
        }
        const rowIds = new Int32Array(b.rows);
        for (let r = 0; r < b.rows; r++) rowIds[r] = ids[b.dev[r]!]!;
        await this.stage(group.stg, b, rowIds, conn);
        (b as ColumnBatch & { ids?: number[] }).ids = ids;
        group.batches.push(b);
        group.rows += b.rows;
        if (group.rows >= BULK_ROWS) await flush();
      }
      await flush();
    } catch (e) {
      await conn.run('ROLLBACK').catch(() => undefined);
      if (e instanceof StoreError) throw e;
      throw new StoreError(`bulk write failed: ${(e as Error).message}`, 'unavailable', { cause: e });
    } finally {
      for (const id of loading) {
        const n = (this.bulkLoading.get(id) ?? 1) - 1;
        if (n > 0) this.bulkLoading.set(id, n);
        else this.bulkLoading.delete(id);
      }
    }
    return { written };
  }

  /** Ids for device keys, new ones committed to `device_keys` at once (called with the write lock held). */
  private async registerDevices(keys: readonly string[]): Promise<number[]> {
    const fresh: [string, number][] = [];
    let nextId = this.nextId();
    const ids = keys.map((key) => {
      let id = this.ids.get(key);
      if (id === undefined) {
        id = nextId++;
        fresh.push([key, id]);
      }
      return id;
    });
    if (fresh.length > 0) {
      await this.exec(
        `INSERT INTO device_keys VALUES ${fresh.map(([key, id]) => `(${id}, '${key.replaceAll("'", "''")}')`).join(', ')}`,
      );
      for (const [key, id] of fresh) {
        this.ids.set(key, id);
        this.keys.set(id, key);
      }
    }
    return ids;
  }

  private async bulkCommit(
    conn: DuckDBConnection,
    stg: string,
    cols: readonly number[],
    batches: readonly (ColumnBatch & { ids?: number[] })[],
  ): Promise<void> {
    // Per device: time range; per (device, parameter): newest value.
    const range = new Map<number, [number, number]>();
    const newest = new Map<string, [number, number, number, number]>();
    let minTs = Number.POSITIVE_INFINITY;
    let maxTs = Number.NEGATIVE_INFINITY;
    for (const b of batches) {
      const ids = b.ids!;
      b.keys.forEach((_, d) => {
        const id = ids[d]!;
        const rg = range.get(id);
        range.set(
          id,
          rg
            ? [Math.min(rg[0], b.minByDev[d]!), Math.max(rg[1], b.maxByDev[d]!)]
            : [b.minByDev[d]!, b.maxByDev[d]!],
        );
      });
      for (let i = 0; i < b.newest.length; i += 4) {
        const id = ids[b.newest[i]!]!;
        const c = b.newest[i + 1]!;
        const k = `${id}:${c}`;
        const prev = newest.get(k);
        if (!prev || b.newest[i + 2]! >= prev[2]) newest.set(k, [id, c, b.newest[i + 2]!, b.newest[i + 3]!]);
      }
      minTs = Math.min(minTs, b.minTs);
      maxTs = Math.max(maxTs, b.maxTs);
    }
    // Before: the dirty mark (and a state row for a new device, listed once its newest is set after).
    // `newest` moves past the range in memory at once, so a live write inside it takes the merging path.
    await this.lock.run(async () => {
      this.assertOpen();
      const sql: string[] = [];
      const known = [...range].filter(([id]) => this.stateRow.has(id));
      const fresh = [...range].filter(([id]) => !this.stateRow.has(id));
      if (known.length > 0) {
        sql.push(`UPDATE rollup_state SET dirty_from = least(coalesce(dirty_from, v.mn), v.mn)
          FROM (VALUES ${known.map(([id, [mn]]) => `(${id}, ${mn})`).join(', ')}) v(d, mn) WHERE device = v.d`);
      }
      if (fresh.length > 0)
        sql.push(
          `INSERT INTO rollup_state VALUES ${fresh.map(([id, [mn]]) => `(${id}, ${mn}, NULL)`).join(', ')}`,
        );
      await this.exec(sql.join(';\n'));
      for (const [id, [mn, mx]] of range) {
        this.stateRow.add(id);
        if (!(mn >= (this.dirty.get(id) ?? Number.NaN))) this.dirty.set(id, mn);
        if (mx > (this.newest.get(id) ?? Number.NEGATIVE_INFINITY)) this.newest.set(id, mx);
      }
    });
    const colList = cols.map((c) => q(STORED[c]!)).join(', ');
    await conn.run('BEGIN TRANSACTION');
    try {
      await conn.run(
        `INSERT INTO readings (device, ts, ${colList})
         SELECT s.device, s.ts::BIGINT, ${cols.map((c) => `s.${q(STORED[c]!)}`).join(', ')} FROM ${stg} s
         ANTI JOIN (SELECT device, ts FROM readings WHERE ts BETWEEN ${minTs} AND ${maxTs}) r
           ON r.device = s.device AND r.ts = s.ts::BIGINT`,
      );
      await conn.run(`DELETE FROM ${stg}`);
      await conn.run('COMMIT');
    } catch (e) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
    // After: the dirty mark again — a rollup refresh that ran while the transaction was open saw none of
    // its rows and cleared the first mark — then the newest values in memory, and a snapshot of them with
    // each device's newest timestamp (consistent with the live writes meanwhile, which are in memory too).
    await this.lock.run(async () => {
      if (this.closed) return;
      await this.exec(`UPDATE rollup_state SET dirty_from = least(coalesce(dirty_from, v.mn), v.mn)
        FROM (VALUES ${[...range].map(([id, [mn]]) => `(${id}, ${mn})`).join(', ')}) v(d, mn) WHERE device = v.d`);
      for (const [id, [mn]] of range) if (!(mn >= (this.dirty.get(id) ?? Number.NaN))) this.dirty.set(id, mn);
      for (const [id, c, t, v] of newest.values()) {
        const l = this.latestEntry(id);
        if (!(l.ts[c]! > t)) {
          l.ts[c] = t;
          l.v[c] = v;
        }
      }
      this.latestChanged = true;
      await this.snapshotLatest();
    });
  }

  private nextId(): number {
    let max = 0;
    for (const id of this.ids.values()) if (id > max) max = id;
    return max + 1;
  }

  /**
   * Counts bytes committed since the last checkpoint and, past `CHECKPOINT_BYTES`, checkpoints on a
   * connection of its own while writes go on. DuckDB's own automatic checkpoint would run inside the
   * commit that crosses its threshold and hold every write behind it; its threshold is raised to a
   * safety net instead (see `open`).
   */
  private written(bytes: number): void {
    this.walBytes += bytes;
    if (!this.ck || this.checkpoint || this.walBytes < CHECKPOINT_BYTES) return;
    const ck = this.ck;
    this.walBytes = 0;
    // From here until the checkpoint is over and what arrived meanwhile is applied, writes go to the
    // journal and are acknowledged from there (see journal.ts): no commit waits for the checkpoint.
    this.parking = this.journal !== null;
    // The newest-values snapshot goes first (queued behind the writes, on the write connection), so
    // the checkpoint carries it and recovery on open has little to read back. The checkpoint holds the
    // write lock: a commit would wait for it anyway.
    this.checkpoint = this.lock
      .run(async () => {
        if (!this.closed) {
          await this.snapshotLatest().catch(() => undefined);
          // A checkpoint refused while a transaction is open (a bulk load) is tried again later.
          await ck.run('CHECKPOINT').catch(() => {
            this.walBytes = CHECKPOINT_BYTES / 2;
          });
        }
        await this.applyParked();
      })
      .finally(() => {
        this.checkpoint = null;
      });
  }

  // ---------------------------------------------------------------- rollups

  /**
   * Refreshes every dirty device together (one statement per step for all of them, so the counter-step
   * query is planned once, not once per device), in windows of `REFRESH_WINDOW_MS` of history, each in
   * its own turn on the write connection and its own transaction: writes (ingest acknowledgements) wait
   * for one window at most, and a year of history is never held in one transaction's memory. Devices a
   * bulk load is writing are left for the refresh after it (their marks stay).
   */
  async refreshRollups(now: number = Date.now()): Promise<RollupRunResult> {
    this.assertOpen();
    // The marks being refreshed: taken off the in-memory map (the file keeps them until the refresh has
    // passed them), so a write meanwhile shows up there again and is left dirty for the next refresh.
    const run = await this.lock.run(async () => {
      const rows = await this.rows(
        this.w,
        'SELECT device, dirty_from::DOUBLE FROM rollup_state WHERE dirty_from IS NOT NULL ORDER BY device',
      );
      const devs: { dev: number; start: number }[] = [];
      for (const [dev, from] of rows) {
        const id = dev as number;
        if (this.bulkLoading.has(id)) continue;
        this.dirty.delete(id);
        // The earliest bucket the write touches: a counter reading closes the quarter before it
        // ((start, end]), which starts no later than the quarter a gauge sample falls in.
        devs.push({ dev: id, start: counterBucketStart(from as number, STEP_15M) });
      }
      return devs;
    });
    let buckets = 0;
    if (run.length > 0) {
      const first = Math.min(...run.map((d) => d.start));
      const last = Math.max(...run.map((d) => this.newest.get(d.dev) ?? d.start));
      let progress = first;
      try {
        for (let a = fixedBucketStart(first, REFRESH_WINDOW_MS); ; a += REFRESH_WINDOW_MS) {
          const b = a + REFRESH_WINDOW_MS;
          // The last window is open-ended: it takes whatever was written after the list was taken.
          const end = b > last ? null : b;
          const part = run
            .filter((d) => d.start < b && (this.newest.get(d.dev) ?? Number.NEGATIVE_INFINITY) >= a)
            .map((d) => ({ dev: d.dev, start: Math.max(d.start, a) }));
          const groups = this.refreshGroups(part);
          for (const group of groups) {
            buckets += await this.lock.run(async () => {
              if (this.closed) return 0;
              return this.refreshWindow(group, end);
            });
          }
          await this.lock.run(async () => {
            if (this.closed) return;
            await this.markProgress(run, end);
            progress = end ?? Number.POSITIVE_INFINITY;
          });
          if (end === null || this.closed) break;
        }
      } finally {
        // What is not refreshed yet (a failure, a shutdown) stays dirty in memory as it is in the file.
        for (const { dev } of run) {
          if (progress === Number.POSITIVE_INFINITY) continue;
          const mark = this.dirty.get(dev);
          if (!(progress >= (mark ?? Number.NaN))) this.dirty.set(dev, progress);
        }
      }
    }
    const watermark = fixedBucketStart(now, STEP_15M);
    await this.lock.run(async () => {
      if (!this.closed) await this.exec(`UPDATE meta SET v = '${watermark}' WHERE k = 'watermark'`);
    });
    return { buckets, watermark };
  }

  /**
   * Devices refreshed together: those reporting the same parameters (the counter-step query computes
   * every counter of the group for every row, so devices of different kinds go apart), at most
   * `REFRESH_GROUP` at a time.
   */
  private refreshGroups<T extends { dev: number }>(part: readonly T[]): T[][] {
    const bySig = new Map<string, T[][]>();
    for (const p of part) {
      const l = this.latestOf.get(p.dev);
      const sig = l ? STORED.filter((_, c) => !Number.isNaN(l.ts[c]!)).join(',') : '';
      const chunks = bySig.get(sig) ?? [];
      const lastChunk = chunks.at(-1);
      if (lastChunk && lastChunk.length < REFRESH_GROUP) lastChunk.push(p);
      else chunks.push([p]);
      bySig.set(sig, chunks);
    }
    return [...bySig.values()].flat();
  }

  /**
   * The file's dirty marks once history before `upTo` is refreshed (null: all of it), keeping what a write
   * since the refresh began marked.
   */
  private async markProgress(run: readonly { dev: number }[], upTo: number | null): Promise<void> {
    const mark = (dev: number) => {
      const m = this.dirty.get(dev);
      return upTo === null ? (m ?? 'NULL::BIGINT') : Math.min(upTo, m ?? upTo);
    };
    await this.exec(
      `UPDATE rollup_state SET dirty_from = v.m FROM (VALUES ${run
        .map(({ dev }) => `(${dev}, ${mark(dev)})`)
        .join(', ')}) v(d, m) WHERE device = v.d`,
    );
  }

  /**
   * Baseline and last register value per (device, counter) at the end of the rolled-up history before
   * each device's start (the counter buckets before it hold the readings up to and including it), into
   * the temp table `seeds`. The last `SEED_LOOKBACK_MS` are looked at first; only a counter not found
   * there (a new device, a long gap) makes the scan go back further.
   */
  private async seeds(
    part: readonly { dev: number; start: number }[],
    counters: readonly string[],
    expected: number,
  ): Promise<void> {
    const list = counters.map((c) => `'${c}'`).join(', ');
    const scan = (bounded: boolean, missing: string) => `SELECT device, param AS counter, max(last_ts) AS ts,
        arg_max(base, last_ts) AS b, arg_max(last, last_ts) AS l
      FROM rollup_15m WHERE (${part
        .map(
          ({ dev, start }) =>
            `(device = ${dev} AND bucket < ${start}${bounded ? ` AND bucket >= ${start - SEED_LOOKBACK_MS}` : ''})`,
        )
        .join(' OR ')}) AND last_ts IS NOT NULL AND param IN (${list})${missing}
      GROUP BY device, param`;
    await this.exec(`CREATE OR REPLACE TEMP TABLE seeds AS ${scan(true, '')}`);
    const [found] = await this.rows(this.w, 'SELECT count(*)::DOUBLE FROM seeds');
    if (Number(found?.[0]) < expected) {
      await this.exec(
        `INSERT INTO seeds ${scan(
          false,
          ' AND NOT EXISTS (SELECT 1 FROM seeds s WHERE s.device = rollup_15m.device AND s.counter = rollup_15m.param)',
        )}`,
      );
    }
  }

  /**
   * One window of the refresh for several devices: each from its own start (a 15-minute bucket start) to
   * `end` (a whole hour; null: no end). Gauges fill the buckets with readings in [start, end); counters
   * with the steps of the readings in (start, end], each in the bucket it closes (core `counterInstant`).
   */
  private async refreshWindow(
    part: readonly { dev: number; start: number }[],
    end: number | null,
  ): Promise<number> {
    const each = (f: (dev: number, start: number) => string) =>
      `(${part.map(({ dev, start }) => `(${f(dev, start)})`).join(' OR ')})`;
    const lo = Math.min(...part.map((p) => p.start));
    const upTo = (col: string, incl: boolean) =>
      end === null ? '' : ` AND ${col} ${incl ? '<=' : '<'} ${end}`;
    const where = `ts >= ${lo}${upTo('ts', false)} AND ${each((d, s) => `device = ${d} AND ts >= ${s}`)}`;
    const counterWhere = `ts > ${lo}${upTo('ts', true)} AND ${each((d, s) => `device = ${d} AND ts > ${s}`)}`;
    const counterBucket = `${counterInstantSql('ts')} // ${STEP_15M} * ${STEP_15M}`;
    // Parameters the devices have ever reported (kept at write time): no scan of the range to find them;
    // one absent from the range (or from one of the devices) only yields empty aggregates, left out.
    const present = new Set<string>();
    /** (device, counter) pairs the devices have: the seeds expected. */
    let pairs = 0;
    for (const { dev } of part) {
      const l = this.latestOf.get(dev);
      if (!l) continue;
      STORED.forEach((p, c) => {
        if (Number.isNaN(l.ts[c]!)) return;
        present.add(p);
        if (COUNTER_SET.has(p)) pairs++;
      });
    }
    const aggNames = AGG_NAMES.filter((n) => {
      const comb = combinedParamDef(n);
      return comb ? comb.of.some((p) => present.has(p)) : present.has(n);
    });
    const counters = COUNTERS.filter((c) => present.has(c));
    let n = 0;
    await this.exec('BEGIN TRANSACTION');
    try {
      await this.exec(
        `DELETE FROM rollup_15m WHERE bucket >= ${lo} AND ${each((d, s) => `device = ${d} AND bucket >= ${s}`)}${upTo('bucket', false)}`,
      );
      await this.exec(
        `DELETE FROM counter_events WHERE at_ts > ${lo} AND ${each((d, s) => `device = ${d} AND at_ts > ${s}`)}${upTo('at_ts', true)}`,
      );
      if (aggNames.length > 0) {
        // Aggregate wide (one pass over the readings), then unpivot the few aggregated rows.
        const wide = `SELECT device, ts // ${STEP_15M} * ${STEP_15M} AS bucket, ${aggNames
          .map((a) => {
            const e = valueExpr(a);
            return `sum(${e}) AS "${a}__s", count(${e}) AS "${a}__c", min(${e}) AS "${a}__mi", max(${e}) AS "${a}__ma"`;
          })
          .join(', ')} FROM readings WHERE ${where} GROUP BY ALL`;
        const g = `SELECT device, param, bucket, sum, cnt, min, max FROM (UNPIVOT (${wide}) ON ${aggNames
          .map((a) => `("${a}__s", "${a}__c", "${a}__mi", "${a}__ma") AS "${a}"`)
          .join(', ')} INTO NAME param VALUE sum, cnt, min, max) WHERE cnt > 0`;
        let sql: string;
        if (counters.length > 0) {
          await this.seeds(part, counters, pairs);
          const steps = counterStepsSql({
            where: counterWhere,
            counters,
            rules: this.rulesOf,
            seeds: `SELECT device, counter, ts, b AS v, 0 AS ord FROM seeds
              UNION ALL SELECT device, counter, ts, l AS v, 1 AS ord FROM seeds`,
          });
          await this.exec(`CREATE OR REPLACE TEMP TABLE steps AS ${steps}`);
          sql = `
            WITH g AS (${g}),
            c AS (
              SELECT device, counter AS param, ${counterBucket} AS bucket,
                sum(delta) AS e, arg_min(v, ts) AS first, min(ts) AS first_ts, arg_max(v, ts) AS last,
                max(ts) AS last_ts, arg_max(m, ts) AS base,
                count_if(kind = 'reset') AS resets, count_if(kind = 'implausible') AS impl
              FROM steps WHERE seed = 0 GROUP BY ALL
            )
            SELECT coalesce(g.device, c.device) AS d, coalesce(g.param, c.param) AS p,
              coalesce(g.bucket, c.bucket) AS b, g.sum, g.cnt, g.min, g.max,
              c.e, c.first, c.first_ts, c.last, c.last_ts, c.base, c.resets, c.impl
            FROM g FULL JOIN c ON g.device = c.device AND g.param = c.param AND g.bucket = c.bucket
            ORDER BY d, p, b`;
        } else {
          sql = `SELECT device, param, bucket, sum, cnt, min, max, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
            FROM (${g}) ORDER BY device, param, bucket`;
        }
        const ins = await this.w.run(`INSERT INTO rollup_15m ${sql}`);
        n += Number(ins.rowsChanged);
        if (counters.length > 0) {
          await this.exec(
            `INSERT INTO counter_events SELECT device, counter, kind, ts, pts, v - pb FROM steps
             WHERE seed = 0 AND kind IN ('reset', 'implausible')`,
          );
          await this.exec('DROP TABLE steps; DROP TABLE seeds');
        }
      }
      // 30m from 15m, 1h from 30m (each half the rows of the finer one).
      for (const [iv, finer] of [
        ['30m', '15m'],
        ['1h', '30m'],
      ] as const) {
        const step = ROLLUP_STEP_MS[iv];
        const from = each((d, s) => `device = ${d} AND bucket >= ${fixedBucketStart(s, step)}`);
        await this.exec(`DELETE FROM rollup_${iv} WHERE ${from}${upTo('bucket', false)}`);
        const res = await this.w.run(`
          INSERT INTO rollup_${iv}
          SELECT device, param, bucket // ${step} * ${step} AS b,
            sum(sum), sum(cnt), min(min), max(max),
            sum(e), arg_min(first, first_ts), min(first_ts), arg_max(last, last_ts), max(last_ts),
            arg_max(base, last_ts), sum(resets), sum(impl)
          FROM rollup_${finer} WHERE ${from}${upTo('bucket', false)} GROUP BY device, param, b ORDER BY device, param, b`);
        n += Number(res.rowsChanged);
      }
      await this.exec('COMMIT');
    } catch (e) {
      await this.w.run('ROLLBACK').catch(() => undefined);
      throw new StoreError(`rollup refresh failed: ${(e as Error).message}`, 'internal', { cause: e });
    }
    return n;
  }

  // ---------------------------------------------------------------- raw reads

  private checkRange(from: number, to: number): void {
    checkTimeRange(from, to);
  }

  private storedParams(params: readonly string[] | undefined): string[] {
    if (!params) return [...STORED];
    for (const p of params) if (!isStoredParam(p)) throw rejected(`unknown parameter "${p}"`);
    return [...new Set(params)];
  }

  async readRaw(query: RawQuery): Promise<RawPage> {
    this.assertOpen();
    await this.applied();
    this.checkRange(query.from, query.to);
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE)
      throw rejected(`limit must be 1..${MAX_PAGE}`);
    const params = this.storedParams(query.params);
    let from = query.from;
    if (query.cursor) {
      const m = /^ts:(-?\d+)$/.exec(query.cursor);
      if (!m) throw rejected('invalid cursor');
      from = Math.max(from, Number(m[1]) + 1);
    }
    const dev = this.ids.get(query.deviceKey);
    if (dev === undefined || params.length === 0) return { items: [], nextCursor: null };
    const any = params.map((p) => `${q(p)} IS NOT NULL`).join(' OR ');
    const items: RawRow[] = [];
    let more = false;
    await this.eachChunk(
      this.r,
      `SELECT ts::DOUBLE, ${params.map((p) => `${q(p)}::DOUBLE`).join(', ')} FROM readings
       WHERE device = ${dev} AND ts >= ${from} AND ts < ${query.to} AND (${any})
       ORDER BY ts LIMIT ${query.limit + 1}`,
      (cols, n) => {
        const ts = cols[0]!.values;
        for (let r = 0; r < n; r++) {
          if (items.length === query.limit) {
            more = true;
            return;
          }
          const values: Record<string, number> = {};
          for (let i = 0; i < params.length; i++) {
            const v = valueAt(cols[i + 1]!, r);
            if (v !== null) values[params[i]!] = v;
          }
          items.push({ ts: ts[r]!, values });
        }
      },
    );
    const last = items[items.length - 1];
    return { items, nextCursor: more && last ? `ts:${last.ts}` : null };
  }

  async *streamRaw(
    query: Omit<RawQuery, 'cursor' | 'limit'> & { pageSize?: number },
  ): AsyncIterable<RawRow[]> {
    let cursor: string | null = null;
    const limit = Math.min(Math.max(query.pageSize ?? 5000, 1), MAX_PAGE);
    for (;;) {
      const page: RawPage = await this.readRaw({ ...query, cursor, limit });
      if (page.items.length > 0) yield page.items;
      if (!page.nextCursor) return;
      cursor = page.nextCursor;
    }
  }

  async latest(deviceKey: string): Promise<LatestValues | null> {
    this.assertOpen();
    await this.applied();
    const dev = this.ids.get(deviceKey);
    const l = dev === undefined ? undefined : this.latestOf.get(dev);
    if (!l) return null;
    let ts = Number.NEGATIVE_INFINITY;
    const values: Record<string, number> = {};
    for (let c = 0; c < STORED.length; c++) {
      const at = l.ts[c]!;
      if (Number.isNaN(at)) continue;
      values[STORED[c]!] = l.v[c]!;
      if (at > ts) ts = at;
    }
    return Number.isFinite(ts) ? { ts, values } : null;
  }

  // ---------------------------------------------------------------- bucketed queries

  private buckets(
    interval: Exclude<SeriesInterval, 'raw'> | EnergyInterval,
    from: number,
    to: number,
    tz: string,
  ): { starts: number[]; end: number } {
    if (isCalendarInterval(interval)) return calendarBuckets(from, to, CALENDAR_UNIT_OF[interval], tz);
    const step = ROLLUP_STEP_MS[interval];
    const starts = fixedBucketStarts(from, to, step);
    return { starts, end: starts.length ? starts[starts.length - 1]! + step : from };
  }

  private checkTz(tz: string | undefined): string {
    const z = tz ?? DEFAULT_TIMEZONE;
    if (!isValidTimeZone(z)) throw rejected(`unknown time zone "${z}"`);
    return z;
  }

  private static readonly MAX_BUCKETS = 200_000;

  /** A series query checked and given its empty answer (every bucket `null`). */
  private prepareSeries(query: SeriesQuery): {
    params: string[];
    stats: Stat[];
    dev: number | undefined;
    tz: string;
    series: SeriesResult['series'];
  } {
    this.checkRange(query.from, query.to);
    const tz = this.checkTz(query.tz);
    const params = [...new Set(query.params)];
    for (const p of params) if (!isQueryableParam(p)) throw rejected(`unknown parameter "${p}"`);
    const stats = seriesStats(query.stats);
    if (query.interval !== 'raw' && !isRollupInterval(query.interval) && query.interval !== '1d')
      throw rejected(`unknown interval "${query.interval}"`);
    return { params, stats, dev: this.ids.get(query.deviceKey), tz, series: {} };
  }

  private bucketsOf(query: SeriesQuery, tz: string): { starts: number[]; end: number } {
    const b = this.buckets(query.interval as Exclude<SeriesInterval, 'raw'>, query.from, query.to, tz);
    if (b.starts.length > DuckDbStore.MAX_BUCKETS)
      throw rejected('too many buckets; choose a coarser interval');
    return b;
  }

  private static emptySeries(
    params: readonly string[],
    stats: readonly Stat[],
    buckets: number,
  ): SeriesResult['series'] {
    const series: SeriesResult['series'] = {};
    for (const p of params)
      series[p] = Object.fromEntries(stats.map((s) => [s, new Array(buckets).fill(null)]));
    return series;
  }

  async series(query: SeriesQuery): Promise<SeriesResult> {
    this.assertOpen();
    await this.applied();
    const { params, stats, dev, tz } = this.prepareSeries(query);
    const base = { interval: query.interval, from: query.from, to: query.to, tz };

    if (query.interval === 'raw') {
      const series: SeriesResult['series'] = {};
      for (const p of params) series[p] = Object.fromEntries(stats.map((s) => [s, []]));
      if (dev === undefined || params.length === 0) return { ...base, t: [], series };
      const exprs = params.map((p) => valueExpr(p));
      const t: number[] = [];
      const vals: (number | null)[][] = params.map(() => []);
      await this.eachChunk(
        this.r,
        `SELECT * FROM (SELECT ts::DOUBLE AS ts, ${exprs.map((e, i) => `(${e})::DOUBLE AS v${i}`).join(', ')}
           FROM readings WHERE device = ${dev} AND ts >= ${query.from} AND ts < ${query.to})
         WHERE ${params.map((_, i) => `v${i} IS NOT NULL`).join(' OR ')} ORDER BY ts`,
        (cols, n) => {
          const tv = cols[0]!.values;
          for (let r = 0; r < n; r++) t.push(tv[r]!);
          for (let i = 0; i < params.length; i++) {
            const c = cols[i + 1]!;
            const out = vals[i]!;
            for (let r = 0; r < n; r++) out.push(valueAt(c, r));
          }
        },
      );
      params.forEach((p, i) => {
        for (const s of stats) series[p]![s] = vals[i]!;
      });
      return { ...base, t, series };
    }

    const { starts, end } = this.bucketsOf(query, tz);
    const series = DuckDbStore.emptySeries(params, stats, starts.length);
    if (dev === undefined || params.length === 0 || starts.length === 0)
      return { ...base, t: starts, series };
    const slots = params.map((p) => ({ dev, param: p, outs: [series[p]!] }));
    if (query.source === 'raw') await this.seriesFromRaw(query.interval, starts, end, slots);
    else await this.seriesFromRollups(query.interval, starts, end, slots);
    return { ...base, t: starts, series };
  }

  /**
   * Several devices' series in one query when they share range, interval, zone and source (a
   * comparison's members): one scan of the rollup table (or of the raw readings) instead of one per
   * member. Anything else goes one by one.
   */
  async seriesMany(queries: readonly SeriesQuery[]): Promise<SeriesResult[]> {
    const first = queries[0];
    const shared =
      first !== undefined &&
      first.interval !== 'raw' &&
      queries.every(
        (q) =>
          q.from === first.from &&
          q.to === first.to &&
          q.interval === first.interval &&
          (q.tz ?? DEFAULT_TIMEZONE) === (first.tz ?? DEFAULT_TIMEZONE) &&
          q.source === first.source,
      );
    if (!shared) return Promise.all(queries.map((q) => this.series(q)));
    const interval = first.interval as Exclude<SeriesInterval, 'raw'>;
    this.assertOpen();
    await this.applied();
    const prepared = queries.map((q) => this.prepareSeries(q));
    const tz = prepared[0]!.tz;
    const { starts, end } = this.bucketsOf(first, tz);
    const slots = new Map<string, { dev: number; param: string; outs: SeriesResult['series'][string][] }>();
    for (const p of prepared) {
      p.series = DuckDbStore.emptySeries(p.params, p.stats, starts.length);
      if (p.dev === undefined || starts.length === 0) continue;
      for (const param of p.params) {
        const key = `${p.dev}:${param}`;
        const slot = slots.get(key) ?? { dev: p.dev, param, outs: [] };
        slot.outs.push(p.series[param]!);
        slots.set(key, slot);
      }
    }
    if (slots.size > 0) {
      if (first.source === 'raw') await this.seriesFromRaw(interval, starts, end, [...slots.values()]);
      else await this.seriesFromRollups(interval, starts, end, [...slots.values()]);
    }
    return prepared.map((p) => ({
      interval: first.interval,
      from: first.from,
      to: first.to,
      tz,
      t: starts,
      series: p.series,
    }));
  }

  /** The slots' parameters and devices, and each slot by key (device × parameters + parameter position). */
  private static slotIndex(slots: readonly SeriesSlot[]) {
    const params = [...new Set(slots.map((s) => s.param))];
    const devs = [...new Set(slots.map((s) => s.dev))];
    const slotOf = new Map(slots.map((s, i) => [s.dev * params.length + params.indexOf(s.param), i]));
    return { params, devs, slotOf };
  }

  /** Where each slot's avg, min and max go (a slot may feed several answers asking the same). */
  private static targetsOf(slots: readonly SeriesSlot[]) {
    return slots.map((slot) => ({
      avg: slot.outs.flatMap((o) => (o.avg ? [o.avg] : [])),
      min: slot.outs.flatMap((o) => (o.min ? [o.min] : [])),
      max: slot.outs.flatMap((o) => (o.max ? [o.max] : [])),
    }));
  }

  /**
   * Buckets aggregated from raw readings (`source: 'raw'`) for (device, parameter) slots, in one query:
   * one row per (device, bucket) with avg, min, max of each parameter.
   */
  private async seriesFromRaw(
    interval: Exclude<SeriesInterval, 'raw'>,
    starts: readonly number[],
    end: number,
    slots: readonly SeriesSlot[],
  ): Promise<void> {
    const s0 = starts[0]!;
    const { params, devs, slotOf } = DuckDbStore.slotIndex(slots);
    const inner = `SELECT device, ts, ${params.map((p) => `${valueExpr(p)} AS ${q(p)}`).join(', ')} FROM readings
      WHERE device IN (${devs.join(', ')}) AND ts >= ${s0} AND ts < ${end}`;
    const targets = DuckDbStore.targetsOf(slots);
    // Only the statistics some answer asks for are computed: a comparison wants averages alone.
    const aggs: string[] = [];
    const colOf = params.map((p) => {
      const asked = targets.filter((_, i) => slots[i]!.param === p);
      const col = { avg: -1, min: -1, max: -1 };
      for (const st of ['avg', 'min', 'max'] as const) {
        if (!asked.some((t) => t[st].length > 0)) continue;
        col[st] = 2 + aggs.length;
        aggs.push(st === 'avg' ? `sum(${q(p)}) / nullif(count(${q(p)}), 0)` : `${st}(${q(p)})`);
      }
      return col;
    });
    if (aggs.length === 0) return;
    const bucket =
      interval === '1d'
        ? bucketStartSql('ts', starts, end)
        : `ts // ${ROLLUP_STEP_MS[interval]} * ${ROLLUP_STEP_MS[interval]}`;
    const sql = `SELECT device::DOUBLE, (${bucket})::DOUBLE AS b, ${aggs.join(', ')} FROM (${inner}) x GROUP BY device, b`;
    const step = interval === '1d' ? 0 : ROLLUP_STEP_MS[interval];
    const index = new Map(step === 0 ? starts.map((s, i) => [s, i]) : []);
    await this.eachChunk(this.r, sql, (cols, n) => {
      const dv = cols[0]!.values;
      const bv = cols[1]!.values;
      for (let r = 0; r < n; r++) {
        const t = bv[r]!;
        let i = step > 0 ? (t - s0) / step : -1;
        if (starts[i] !== t) i = index.get(t) ?? -1;
        if (i < 0) continue;
        const dev = dv[r]!;
        for (let k = 0; k < params.length; k++) {
          const slot = slotOf.get(dev * params.length + k);
          if (slot === undefined) continue;
          const tg = targets[slot]!;
          const col = colOf[k]!;
          for (const out of tg.avg) out[i] = valueAt(cols[col.avg]!, r);
          for (const out of tg.min) out[i] = valueAt(cols[col.min]!, r);
          for (const out of tg.max) out[i] = valueAt(cols[col.max]!, r);
        }
      }
    });
  }

  /**
   * Buckets from rollups for (device, parameter) slots, all in one query. Column vectors are read in
   * place (no row arrays): a year of hourly buckets is 8,760 rows per slot, each row coming back as
   * bucket, slot key (device × parameters + parameter position), then avg, min, max; calendar days are
   * summed from the fine rollup in SQL, one row per (slot, day).
   */
  private async seriesFromRollups(
    interval: Exclude<SeriesInterval, 'raw'>,
    starts: readonly number[],
    end: number,
    slots: readonly SeriesSlot[],
  ): Promise<void> {
    const s0 = starts[0]!;
    const { params, devs, slotOf } = DuckDbStore.slotIndex(slots);
    const inList = params.map((p) => `'${p}'`).join(', ');
    const key = `(device * ${params.length} + list_position([${inList}], param) - 1)::DOUBLE`;
    const where = `WHERE device IN (${devs.join(', ')}) AND param IN (${inList}) AND bucket >= ${s0} AND bucket < ${end}`;
    const step = interval === '1d' ? 0 : ROLLUP_STEP_MS[interval];
    const targets = DuckDbStore.targetsOf(slots);
    // Local days (23–25 h across DST) are summed from the finest rollup whose grid they start on, in SQL:
    // a run-length CASE maps each fine bucket to its day, so only one row per (member, day) comes back.
    const sql =
      interval === '1d'
        ? `SELECT (${bucketStartSql('bucket', starts, end)})::DOUBLE AS b, ${key} AS k, sum(sum) / nullif(sum(cnt), 0),
             min(min), max(max) FROM rollup_${fineRollup({ starts, end })} ${where} AND cnt > 0 GROUP BY b, k`
        : `SELECT bucket::DOUBLE, ${key}, sum / nullif(cnt, 0), min, max FROM rollup_${interval} ${where}`;
    const index = new Map(step === 0 ? starts.map((s, i) => [s, i]) : []);
    await this.eachChunk(this.r, sql, (cols, n) => {
      const [bc, kc, av, miv, mav] = cols as [
        DoubleColumn,
        DoubleColumn,
        DoubleColumn,
        DoubleColumn,
        DoubleColumn,
      ];
      const bv = bc.values;
      const kv = kc.values;
      for (let r = 0; r < n; r++) {
        const b = bv[r]!;
        const i = step > 0 ? (b - s0) / step : (index.get(b) ?? -1);
        const slot = slotOf.get(kv[r]!);
        if (slot === undefined || !(i >= 0 && i < starts.length && (i | 0) === i)) continue;
        const t = targets[slot]!;
        if (t.avg.length > 0) {
          const v = valueAt(av, r);
          for (const out of t.avg) out[i] = v;
        }
        if (t.min.length > 0) {
          const v = valueAt(miv, r);
          for (const out of t.min) out[i] = v;
        }
        if (t.max.length > 0) {
          const v = valueAt(mav, r);
          for (const out of t.max) out[i] = v;
        }
      }
    });
  }

  async energy(query: EnergyQuery): Promise<EnergyResult> {
    this.assertOpen();
    await this.applied();
    this.checkRange(query.from, query.to);
    const tz = this.checkTz(query.tz);
    if (!['15m', '30m', '1h', '1d', '1mo'].includes(query.interval))
      throw rejected(`unknown interval "${query.interval}"`);
    const requested = [...new Set(query.counters)];
    const stored = new Set<string>();
    for (const c of requested) {
      const def = paramDef(c);
      const comb = combinedParamDef(c);
      if (def?.kind === 'counter') stored.add(c);
      else if (comb?.kind === 'counter') for (const p of comb.of) stored.add(p);
      else throw rejected(`"${c}" is not an energy counter`);
    }
    const counters = COUNTERS.filter((c) => stored.has(c));
    const { starts, end } = this.buckets(query.interval, query.from, query.to, tz);
    if (starts.length > DuckDbStore.MAX_BUCKETS)
      throw rejected('too many buckets; choose a coarser interval');
    const perCounter = new Map<string, (number | null)[]>(
      counters.map((c) => [c, new Array(starts.length).fill(null)]),
    );
    const result: EnergyResult = {
      interval: query.interval,
      tz,
      t: starts,
      energy: {},
      implausible: [],
      resets: [],
    };
    const dev = this.ids.get(query.deviceKey);
    if (dev !== undefined && starts.length > 0 && counters.length > 0) {
      const s0 = starts[0]!;
      const calendar = query.interval === '1d' || query.interval === '1mo';
      const index = new Map(query.source === 'raw' ? starts.map((s, i) => [s, i]) : []);
      let rows: Row[];
      let events: Row[];
      if (query.source === 'raw') {
        // Counter buckets are (start, end]: the readings up to `end` count, each step in the bucket its
        // reading closes; one exactly on `s0` only sets the baseline.
        const steps = counterStepsSql({
          where: `device = ${dev} AND ts <= ${end}`,
          counters,
          rules: this.rulesOf,
        });
        const at = counterInstantSql('ts');
        const bucketed = calendar
          ? `SELECT ${bucketStartSql(at, starts, end)} AS b, counter, sum(delta) AS e FROM st
             WHERE ts > ${s0} GROUP BY ALL`
          : `SELECT ${at} // ${ROLLUP_STEP_MS[query.interval as RollupInterval]} * ${ROLLUP_STEP_MS[query.interval as RollupInterval]} AS b, counter, sum(delta) AS e
             FROM st WHERE ts > ${s0} GROUP BY ALL`;
        const all = await this.rows(
          this.r,
          `WITH st AS MATERIALIZED (${steps})
           SELECT 0 AS k, b::DOUBLE, counter, e, NULL::VARCHAR, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE FROM (${bucketed})
           UNION ALL
           SELECT 1 AS k, NULL::DOUBLE, counter, NULL::DOUBLE, kind, ts::DOUBLE, pts::DOUBLE, v - pb FROM st
           WHERE seed = 0 AND ts > ${s0} AND kind IN ('reset', 'implausible')
           ORDER BY k, 6, counter`,
        );
        rows = all.filter((r) => r[0] === 0).map((r) => [r[1]!, r[2]!, r[3]!]);
        events = all.filter((r) => r[0] === 1).map((r) => [r[2]!, r[4]!, r[5]!, r[6]!, r[7]!]);
      } else {
        const table = calendar ? fineRollup({ starts, end }) : (query.interval as RollupInterval);
        const inList = counters.map((c) => `'${c}'`).join(', ');
        // The counter comes back as its position in `counters` (no string per row).
        const pos = (col: string) => `(list_position([${inList}], ${col}) - 1)::DOUBLE`;
        // Local days and months add up the fine rows in JS: a year of hours is 8,760 rows a counter, and
        // folding them by a binary search over the starts cost less than bucketing them in SQL.
        const sql = `SELECT bucket::DOUBLE AS b, ${pos('param')}, e FROM rollup_${table}
             WHERE device = ${dev} AND param IN (${inList}) AND bucket >= ${s0} AND bucket < ${end}`;
        const arrays = counters.map((c) => perCounter.get(c)!);
        const step = calendar ? 0 : ROLLUP_STEP_MS[query.interval as RollupInterval];
        await this.eachChunk(this.r, sql, (cols, n) => {
          const [bc, kc, ec] = cols as [DoubleColumn, DoubleColumn, DoubleColumn];
          const bv = bc.values;
          const kv = kc.values;
          for (let r = 0; r < n; r++) {
            const t = bv[r]!;
            const arr = arrays[kv[r]!];
            if (!arr) continue;
            if (calendar) {
              const e = valueAt(ec, r);
              const i = bucketIndexOf(starts, t);
              if (e !== null && i >= 0) arr[i] = (arr[i] ?? 0) + e;
              continue;
            }
            let i = (t - s0) / step;
            if (starts[i] !== t) i = index.get(t) ?? -1;
            if (i >= 0) arr[i] = valueAt(ec, r);
          }
        });
        rows = [];
        events =
          query.events === false
            ? []
            : await this.rows(
                this.r,
                `SELECT counter, kind, at_ts::DOUBLE, from_ts::DOUBLE, delta FROM counter_events
           WHERE device = ${dev} AND at_ts > ${s0} AND at_ts <= ${end} AND counter IN (${counters.map((c) => `'${c}'`).join(', ')})
           ORDER BY at_ts, counter`,
              );
      }
      for (const [b, c, e] of rows) {
        const i = index.get(b as number);
        const arr = perCounter.get(c as string);
        if (i === undefined || !arr) continue;
        arr[i] = asNum(e!);
      }
      for (const [c, kind, at, from, delta] of events) {
        if ((at as number) > end) continue;
        if (kind === 'reset') result.resets.push({ counter: c as string, at: at as number });
        else
          result.implausible.push({
            counter: c as string,
            from: from as number,
            to: at as number,
            delta: delta as number,
          });
      }
    }
    for (const c of requested) {
      const comb = combinedParamDef(c);
      result.energy[c] =
        paramDef(c) !== undefined
          ? perCounter.get(c)!
          : sumSeries(comb!.of.map((p) => perCounter.get(p) ?? new Array(starts.length).fill(null)));
    }
    return result;
  }

  // ---------------------------------------------------------------- admin

  deleteDevice(deviceKey: string): Promise<void> {
    this.assertOpen();
    return this.lock.run(async () => {
      const dev = this.ids.get(deviceKey);
      if (dev === undefined) return;
      await this.exec('BEGIN TRANSACTION');
      try {
        for (const t of [
          'readings',
          'rollup_15m',
          'rollup_30m',
          'rollup_1h',
          'counter_events',
          'latest_values',
          'rollup_state',
        ]) {
          await this.exec(`DELETE FROM ${t} WHERE device = ${dev}`);
        }
        await this.exec('COMMIT');
      } catch (e) {
        await this.w.run('ROLLBACK').catch(() => undefined);
        throw new StoreError(`delete failed: ${(e as Error).message}`, 'unavailable', { cause: e });
      }
      this.newest.delete(dev);
      this.stateRow.delete(dev);
      this.latestOf.delete(dev);
      this.dirty.delete(dev);
      this.latestChanged = true;
    });
  }

  async devices(): Promise<string[]> {
    this.assertOpen();
    await this.applied();
    const rows = await this.rows(
      this.r,
      'SELECT k.key FROM rollup_state s JOIN device_keys k ON k.id = s.device WHERE s.newest IS NOT NULL ORDER BY k.key',
    );
    return rows.map((r) => r[0] as string);
  }

  async health(): Promise<StoreHealth> {
    if (this.closed) return { ok: false, engine: 'duckdb', detail: 'closed' };
    if (this.applyError)
      return {
        ok: false,
        engine: 'duckdb',
        detail: `${this.parkedRows} journaled readings not yet applied: ${this.applyError}`,
      };
    try {
      this.probeConn ??= await this.instance.connect();
      await this.probeConn.run('SELECT 1');
      return { ok: true, engine: 'duckdb' };
    } catch (e) {
      return { ok: false, engine: 'duckdb', detail: (e as Error).message };
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.checkpoint;
    await this.lock.run(async () => {
      // What the journal holds is applied now, or kept for the next open if DuckDB refuses it.
      await this.applyParked();
      await this.snapshotLatest().catch(() => undefined);
      this.closed = true;
    });
    await this.checkpoint;
    await this.journal?.close().catch(() => undefined);
    // The last checkpoint off the event loop (closing would otherwise take it synchronously).
    if (this.ck) await this.ck.run('CHECKPOINT').catch(() => undefined);
    this.bulkConn?.closeSync();
    this.probeConn?.closeSync();
    this.w.closeSync();
    this.r.closeSync();
    this.ck?.closeSync();
    this.instance.closeSync();
  }
}
