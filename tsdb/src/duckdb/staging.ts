/**
 * Staging: a batch is copied into a connection-local table holding only its columns (one memory copy
 * per column and data chunk), from which one statement merges it into `readings`; the newest values go
 * through the `lv` table the same way. Used by the write path and the bulk loader.
 */
import { DOUBLE, type DuckDBConnection, DuckDBDataChunk, type DuckDBType, INTEGER } from '@duckdb/node-api';
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

/** Staging tables of one connection, one per set of columns, created outside any transaction. */
export class StagingTables {
  private readonly names = new Map<string, string>();

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
    for (const name of this.names.values()) await this.conn.run(`DROP TABLE IF EXISTS temp.${name}`);
    this.names.clear();
  }

  private async create(name: string, cols: readonly number[]): Promise<void> {
    await this.conn.run(
      `CREATE OR REPLACE TEMP TABLE ${name} (device INTEGER, ts DOUBLE${cols.map((c) => `, ${q(STORED[c]!)} DOUBLE`).join('')})`,
    );
  }
}

/** Copies the batch (its rows' device ids in `ids`) into the staging table `stg`. */
export async function stage(
  conn: DuckDBConnection,
  stg: string,
  b: ColumnBatch,
  ids: Int32Array<ArrayBuffer>,
): Promise<void> {
  // Empty: every write clears what it staged before it commits (a rollback discards it).
  const appender = await conn.createAppender(stg, 'main', 'temp');
  const types: DuckDBType[] = [INTEGER, DOUBLE, ...b.cols.map(() => DOUBLE)];
  // One chunk, filled again for each slice: a data chunk's memory is native and freed only when the
  // JavaScript object is collected, which a small heap seldom does, so a chunk per slice held hundreds
  // of megabytes during a bulk load.
  const chunk = DuckDBDataChunk.create(types, Math.min(CHUNK_ROWS, b.rows));
  const raw = chunk.chunk;
  try {
    for (let off = 0; off < b.rows; off += CHUNK_ROWS) {
      const len = Math.min(CHUNK_ROWS, b.rows - off);
      if (off > 0) {
        chunk.reset();
        chunk.rowCount = len;
      }
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
  } finally {
    appender.closeSync();
  }
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
