/**
 * Staging: a batch is copied into a connection-local table holding only its columns (one memory copy
 * per column and data chunk), from which one statement merges it into `readings`; the newest values go
 * through the `lv` table the same way. Used by the write path and the bulk loader.
 */
import {
  DOUBLE,
  type DuckDBAppender,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBType,
  INTEGER,
} from '@duckdb/node-api';
import bindings from '@duckdb/node-bindings';
import type { ColumnBatch } from '../columns.ts';
import { q, STORED } from './schema.ts';

const CHUNK_ROWS = 2048;
const LV_TYPES: DuckDBType[] = [INTEGER, INTEGER, DOUBLE, DOUBLE];
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The staged newest values with parameter names (`lv.col` is the position in `STORED`). */
export const LV = `(SELECT device, [${STORED.map((n) => `'${n}'`).join(', ')}][col + 1] AS param, ts::BIGINT AS ts, v FROM lv)`;

/** The staging table of newest values, (device, parameter position, ts, value). */
export const LV_DDL = 'CREATE OR REPLACE TEMP TABLE lv (device INTEGER, col INTEGER, ts DOUBLE, v DOUBLE)';

/**
 * One staging table's appender and data chunk, made once and used for every batch staged there. Both
 * hold native memory (a chunk of 2,048 rows of every column, ~0.7 MB for the widest table) that DuckDB
 * frees only when their JavaScript objects are collected, and the server's thread is collected seldom:
 * made per batch, they held ~150 MB at the peak of writing the demo year (bench/results/footprint.md).
 * The write path's tables live as long as the store, one per set of columns written, so their feeds do.
 */
interface Feed {
  /** The table's columns (catalogue positions, joined). */
  sig: string;
  appender: DuckDBAppender;
  chunk: DuckDBDataChunk;
}

/** Staging tables of one connection, one per set of columns, created outside any transaction. */
export class StagingTables {
  private readonly names = new Map<string, string>();
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly conn: DuckDBConnection,
    private readonly prefix: string,
  ) {}

  /** The table for a batch's columns (catalogue positions), created on first use. */
  async table(cols: readonly number[]): Promise<string> {
    const sig = cols.join(',');
    let name = this.names.get(sig);
    if (!name) {
      name = `${this.prefix}_${this.names.size}`;
      await this.create(name, cols);
      this.names.set(sig, name);
    }
    return name;
  }

  /**
   * The table for a batch's columns, created empty again. For rows appended outside a transaction (the
   * bulk loader): a temporary table keeps the blocks of rows deleted by a later transaction, so one
   * reused for a year of history grew by every row staged (about 1 GB spilled for the demo year).
   */
  async fresh(cols: readonly number[]): Promise<string> {
    const name = await this.table(cols);
    await this.create(name, cols);
    return name;
  }

  /**
   * Drops every table made here. A temporary table lives in memory (the idle trim cannot give it back),
   * and the bulk loader's last one kept ~15 MB after a load (`duckdb_memory()`'s IN_MEMORY_TABLE 51 →
   * 36 MB after 30 days of demo history) until the next one.
   */
  async dropAll(): Promise<void> {
    for (const name of this.names.values()) {
      this.forget(name);
      await this.conn.run(`DROP TABLE IF EXISTS temp.${name}`);
    }
    this.names.clear();
  }

  /**
   * Copies the batch (its rows' device ids in `ids`) into the staging table `stg` (one of these tables),
   * with the table's appender and chunk. After a failure the appender is closed, which appends what it
   * held: the caller rolls back or drops the table.
   */
  async stage(stg: string, b: ColumnBatch, ids: Int32Array<ArrayBuffer>): Promise<void> {
    const sig = b.cols.join(',');
    let feed = this.feeds.get(stg);
    if (!feed) {
      const types: DuckDBType[] = [INTEGER, DOUBLE, ...b.cols.map(() => DOUBLE)];
      const appender = await this.conn.createAppender(stg, 'main', 'temp');
      feed = { sig, appender, chunk: DuckDBDataChunk.create(types) };
      this.feeds.set(stg, feed);
    }
    // The chunk's columns are the table's: a batch of other columns would leave some of them stale.
    if (feed.sig !== sig) throw new Error(`staging table ${stg} holds columns ${feed.sig}, not ${sig}`);
    try {
      await fill(feed, b, ids);
    } catch (e) {
      this.forget(stg);
      throw e;
    }
  }

  /** Closes every table's appender, keeping the tables (before the connection closes). */
  release(): void {
    for (const name of [...this.feeds.keys()]) this.forget(name);
  }

  /** Closes a table's appender (before the table is made again or dropped). */
  private forget(name: string): void {
    const feed = this.feeds.get(name);
    if (!feed) return;
    this.feeds.delete(name);
    try {
      feed.appender.closeSync();
    } catch {
      // A failed append's rows are the caller's to discard; the appender is gone either way.
    }
  }

  private async create(name: string, cols: readonly number[]): Promise<void> {
    this.forget(name);
    await this.conn.run(
      `CREATE OR REPLACE TEMP TABLE ${name} (device INTEGER, ts DOUBLE${cols.map((c) => `, ${q(STORED[c]!)} DOUBLE`).join('')})`,
    );
  }
}

/** Fills the feed's chunk slice by slice from the batch and appends each slice. */
async function fill({ appender, chunk }: Feed, b: ColumnBatch, ids: Int32Array<ArrayBuffer>): Promise<void> {
  const raw = chunk.chunk;
  for (let off = 0; off < b.rows; off += CHUNK_ROWS) {
    const len = Math.min(CHUNK_ROWS, b.rows - off);
    // A reset marks every row valid again: a column with no gaps needs no bitmap of its own.
    chunk.reset();
    chunk.rowCount = len;
    bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 0), 0, ids.buffer, off * 4, len * 4);
    bindings.copy_data_to_vector(bindings.data_chunk_get_vector(raw, 1), 0, b.ts.buffer, off * 8, len * 8);
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
}

/** Appends (device, parameter position, ts, value) rows to the `lv` staging table. */
export async function appendLatest(
  conn: DuckDBConnection,
  dev: Int32Array<ArrayBuffer>,
  col: Int32Array<ArrayBuffer>,
  ts: Float64Array<ArrayBuffer>,
  v: Float64Array<ArrayBuffer>,
): Promise<void> {
  const n = dev.length;
  const appender = await conn.createAppender('lv', 'main', 'temp');
  const chunk = DuckDBDataChunk.create(LV_TYPES, Math.min(CHUNK_ROWS, n));
  const raw = chunk.chunk;
  try {
    for (let off = 0; off < n; off += CHUNK_ROWS) {
      const len = Math.min(CHUNK_ROWS, n - off);
      if (off > 0) {
        chunk.reset();
        chunk.rowCount = len;
      }
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
