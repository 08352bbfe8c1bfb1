/**
 * The bulk loader: history in transactions of about `BULK_ROWS` rows on a connection of its own. That is
 * above DuckDB's row-group size, so the rows are compressed straight into the database file instead of
 * passing through the write-ahead log and a checkpoint (about 3× less work for the wide `readings`
 * table), and live writes on the write connection commit meanwhile. Around each transaction a short turn
 * on the write connection registers new devices and the rollup dirty mark before, and the dirty mark
 * again and the newest values after; a crash in between leaves at most a dirty mark with nothing behind it.
 *
 * The caller's batches are only read, never changed.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { type ColumnBatch, checkBatch, columnize } from '../columns.ts';
import { type Reading, StoreError, type WriteResult } from '../port.ts';
import type { Db } from './db.ts';
import { type DeviceState, dirtyMarkSql, stateRowsSql } from './deviceState.ts';
import type { DeviceRegistry } from './devices.ts';
import { outOfMemory } from './limits.ts';
import { q, STORED } from './schema.ts';
import { StagingTables } from './staging.ts';
import type { WritePath } from './writer.ts';

/**
 * Rows per bulk-load transaction: just above DuckDB's row-group size (122,880), so a transaction's rows
 * still go straight into the file as one row group. The staging table of a transaction is in memory,
 * holding every column any of its devices reports (~85 MB at 125,000 rows of the demo's six meters), and it
 * must fit under the bulk memory limit (192 MB by default) beside the live writes, queries and rollup work
 * meanwhile. At 250,000 rows (~170 MB) a busy machine (load ~7) ran out of memory under that limit: the
 * demo year failed once, gave the limit up and was written again under the whole one (peak RSS 791 MB
 * against 596 MB at this size, side by side; about 13 % less time for the year when nothing failed).
 */
const BULK_ROWS = 125_000;

/**
 * What the commit needs of a staged batch (its devices' ranges and newest values) and its devices' ids.
 * Not the columns: once staged they are DuckDB's, and holding a transaction's worth of them in
 * JavaScript as well cost ~100 MB during the demo year's load.
 */
interface Staged {
  b: Pick<ColumnBatch, 'keys' | 'minByDev' | 'maxByDev' | 'newest' | 'minTs' | 'maxTs'>;
  ids: readonly number[];
}

export class BulkLoader {
  /** Connection of the loads (opened on first use). */
  private conn: DuckDBConnection | null = null;

  constructor(
    private readonly db: Db,
    private readonly devices: DeviceRegistry,
    private readonly state: DeviceState,
    private readonly writer: WritePath,
    /** Gives up the store's bulk memory limit after DuckDB ran out of memory under it (limits.ts). */
    private readonly relieve: () => Promise<boolean>,
  ) {}

  async write(batches: AsyncIterable<readonly Reading[] | ColumnBatch>): Promise<WriteResult> {
    this.conn ??= await this.db.instance.connect();
    const conn = this.conn;
    const staging = new StagingTables(conn, 'bulk');
    /** Devices this load writes: the rollup refresh leaves them until it is over. */
    const loading = new Set<number>();
    const { bulkLoading } = this.state;
    let written = 0;
    let group: { stg: string; sig: string; cols: number[]; rows: number; batches: Staged[] } | null = null;
    const flush = async () => {
      if (!group) return;
      const g = group;
      group = null;
      await this.commit(conn, g.stg, g.cols, g.batches);
    };
    try {
      for await (const item of batches) {
        this.db.assertOpen();
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
          const stg = await staging.fresh(b.cols);
          group = { stg, sig, cols: b.cols, rows: 0, batches: [] };
        }
        const ids = await this.db.lock.run(() => this.devices.register(this.db, b.keys));
        for (const id of ids) {
          if (loading.has(id)) continue;
          loading.add(id);
          bulkLoading.set(id, (bulkLoading.get(id) ?? 0) + 1);
        }
        const rowIds = new Int32Array(b.rows);
        for (let r = 0; r < b.rows; r++) rowIds[r] = ids[b.dev[r]!]!;
        await staging.stage(group.stg, b, rowIds);
        const { keys, minByDev, maxByDev, newest, minTs, maxTs } = b;
        group.batches.push({ b: { keys, minByDev, maxByDev, newest, minTs, maxTs }, ids });
        group.rows += b.rows;
        if (group.rows >= BULK_ROWS) await flush();
      }
      await flush();
    } catch (e) {
      await conn.run('ROLLBACK').catch(() => undefined);
      // Out of memory under the bulk limit: the store gives that limit up (limits.ts), so running the
      // same load again (it keeps what is stored) completes it under the whole one.
      if (outOfMemory(e)) await this.relieve();
      if (e instanceof StoreError) throw e;
      throw new StoreError(`bulk write failed: ${(e as Error).message}`, 'unavailable', { cause: e });
    } finally {
      await staging.dropAll().catch(() => undefined);
      for (const id of loading) {
        const n = (bulkLoading.get(id) ?? 1) - 1;
        if (n > 0) bulkLoading.set(id, n);
        else bulkLoading.delete(id);
      }
    }
    return { written };
  }

  private async commit(
    conn: DuckDBConnection,
    stg: string,
    cols: readonly number[],
    batches: readonly Staged[],
  ): Promise<void> {
    const { db, state } = this;
    // Per device: time range; per (device, parameter): newest value.
    const range = new Map<number, [number, number]>();
    const newest = new Map<string, [number, number, number, number]>();
    let minTs = Number.POSITIVE_INFINITY;
    let maxTs = Number.NEGATIVE_INFINITY;
    for (const { b, ids } of batches) {
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
    const marks = [...range].map(([id, [mn]]) => [id, mn] as const);
    // Before: the dirty mark (and a state row for a new device, listed once its newest is set after).
    // `newest` moves past the range in memory at once, so a live write inside it takes the merging path.
    await db.lock.run(async () => {
      db.assertOpen();
      const sql: string[] = [];
      const known = marks.filter(([id]) => state.stateRow.has(id));
      const fresh = marks.filter(([id]) => !state.stateRow.has(id));
      if (known.length > 0) sql.push(dirtyMarkSql(known));
      if (fresh.length > 0) sql.push(stateRowsSql(fresh.map(([id, mn]) => [id, mn, null])));
      await db.exec(sql.join(';\n'));
      for (const [id, [mn, mx]] of range) {
        state.stateRow.add(id);
        state.markDirty(id, mn);
        state.raiseNewest(id, mx);
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
      await conn.run('COMMIT');
    } catch (e) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
    // After: the dirty mark again — a rollup refresh that ran while the transaction was open saw none of
    // its rows and cleared the first mark — then the newest values in memory, and a snapshot of them with
    // each device's newest timestamp (consistent with the live writes meanwhile, which are in memory too).
    await db.lock.run(async () => {
      if (db.closed) return;
      await db.exec(dirtyMarkSql(marks));
      for (const [id, mn] of marks) state.markDirty(id, mn);
      for (const [id, c, t, v] of newest.values()) state.putLatest(id, c, t, v);
      state.latestChanged = true;
      await this.writer.snapshotLatest();
    });
  }

  close(): void {
    this.conn?.closeSync();
  }
}
