/**
 * The write path: one batch (already laid out in columns and checked) committed on the write
 * connection, with the write lock held by the caller. The batch is appended in data chunks to a staging
 * table holding only its columns, then merged into `readings` in one transaction (restricted to the
 * batch's time range so zone maps prune old row groups) together with new device keys and the per-device
 * rollup dirty mark when it moves.
 *
 * The newest value of every (device, parameter) is kept in memory (deviceState.ts) and written to
 * `latest_values` by `snapshotLatest` before every checkpoint and at close, not in every commit: for a
 * steady stream that table churned more rows per commit than the batch had readings. A batch that lands
 * at or before a device's newest reading (late data, redeliveries) or that brings a new device still
 * updates `latest_values` in its own commit.
 *
 * The caller's batch is only read, never changed.
 */
import { counterBucketStart, fixedBucketStart } from '@kilowatch/core';
import type { ColumnBatch } from '../columns.ts';
import { ROLLUP_STEP_MS, StoreError } from '../port.ts';
import { type Db, readRows } from './db.ts';
import { type DeviceState, dirtyMarkSql, stateRowsSql } from './deviceState.ts';
import { DeviceRegistry } from './devices.ts';
import { q, READING_COLUMNS, STORED } from './schema.ts';
import { appendLatest, LV, LV_DDL, StagingTables } from './staging.ts';

export class WritePath {
  private readonly staging: StagingTables;
  private lvReady = false;

  constructor(
    private readonly db: Db,
    private readonly devices: DeviceRegistry,
    private readonly state: DeviceState,
    /** Told the bytes each commit wrote (the checkpoint schedule counts them). */
    private readonly committed: (bytes: number) => void,
  ) {
    this.staging = new StagingTables(db.w, 'stg');
  }

  private async ensureLv(): Promise<void> {
    if (this.lvReady) return;
    await this.db.exec(LV_DDL);
    this.lvReady = true;
  }

  /** Commits one batch (called with the write lock held). */
  async write(b: ColumnBatch): Promise<void> {
    const { db, state } = this;
    const { ids: idOf, fresh: newKeys } = this.devices.assign(b.keys);
    // A batch entirely after everything stored for its devices cannot collide: a plain append.
    const collide = idOf.some((id, d) => b.minByDev[d]! <= state.newestOf(id));
    const ids = new Int32Array(b.rows);
    for (let r = 0; r < b.rows; r++) ids[r] = idOf[b.dev[r]!]!;
    await this.ensureLv();
    const stg = await this.staging.table(b.cols);

    const cols = b.cols.map((c) => STORED[c]!);
    const colList = cols.map(q).join(', ');
    // The rest of the transaction goes to DuckDB as one multi-statement query.
    const sql: string[] = [];
    if (newKeys.length > 0) sql.push(DeviceRegistry.insertSql(newKeys));
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
    const devs = b.keys.map((_, d) => d);
    const fresh = devs.filter((d) => !state.stateRow.has(idOf[d]!));
    const moved = devs.filter(
      (d) => state.stateRow.has(idOf[d]!) && state.movesDirty(idOf[d]!, b.minByDev[d]!),
    );
    if (moved.length > 0) sql.push(dirtyMarkSql(moved.map((d) => [idOf[d]!, b.minByDev[d]!])));
    if (fresh.length > 0)
      sql.push(stateRowsSql(fresh.map((d) => [idOf[d]!, b.minByDev[d]!, b.maxByDev[d]!])));
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
    await db.exec('BEGIN TRANSACTION');
    try {
      await this.staging.stage(stg, b, ids);
      if (latestNow) await this.stageLatest(b, idOf);
      await db.exec(sql.join(';\n'));
    } catch (e) {
      await db.rollback();
      throw new StoreError(`write failed: ${(e as Error).message}`, 'unavailable', { cause: e });
    }
    this.devices.adopt(newKeys);
    state.committed(b, idOf);
    this.committed(b.rows * (b.cols.length + 2) * 8);
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
    await appendLatest(this.db.w, dev, col, ts, v);
  }

  /**
   * Writes the in-memory newest values to `latest_values` and each device's newest timestamp to
   * `rollup_state.newest`, in one transaction (called with the write lock held).
   */
  async snapshotLatest(): Promise<void> {
    const { db, state } = this;
    if (!state.latestChanged) return;
    const { dev, col, ts, v } = state.latestColumns();
    await this.ensureLv();
    await db.exec('BEGIN TRANSACTION');
    try {
      await appendLatest(db.w, dev, col, ts, v);
      const newest = [...state.newest].map(([id, n]) => `(${id}, ${n})`);
      await db.exec(
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
      state.latestChanged = false;
    } catch (e) {
      await db.rollback();
      throw new StoreError(`latest-values snapshot failed: ${(e as Error).message}`, 'unavailable', {
        cause: e,
      });
    }
  }

  /** Closes the staging tables' appenders (the store is closing; called with the write lock held). */
  close(): void {
    this.staging.release();
  }

  /**
   * Removes a device's readings in [from, to) and marks its rollups dirty from `from` (called with the
   * write lock held): the next refresh rebuilds them from what is left, as after a late write. The newest
   * values (and the device's newest timestamp) are read again from what is left when a deleted reading
   * held one of them.
   */
  async deleteReadings(deviceKey: string, from: number, to: number): Promise<void> {
    const { db, state } = this;
    const dev = this.devices.idOf(deviceKey);
    if (dev === undefined || from >= to) return;
    const latest = state.latest(dev);
    const touchesLatest =
      (state.newest.get(dev) ?? Number.NEGATIVE_INFINITY) >= from ||
      latest?.ts.some((t) => t >= from && t < to) === true;
    await db.exec('BEGIN TRANSACTION');
    try {
      // The rollup rows of every bucket a deleted reading lies in go too: the refresh rebuilds those that
      // still hold readings, and one past the device's newest reading left would otherwise stay.
      const start = counterBucketStart(from, ROLLUP_STEP_MS['15m']);
      const sql = [
        `DELETE FROM readings WHERE device = ${dev} AND ts >= ${from} AND ts < ${to}`,
        ...(['15m', '30m', '1h'] as const).map(
          (iv) =>
            `DELETE FROM rollup_${iv} WHERE device = ${dev} AND bucket >= ${fixedBucketStart(start, ROLLUP_STEP_MS[iv])} AND bucket < ${to}`,
        ),
        `DELETE FROM counter_events WHERE device = ${dev} AND at_ts > ${start} AND at_ts < ${to}`,
      ];
      if (state.stateRow.has(dev)) sql.push(dirtyMarkSql([[dev, from]]));
      sql.push('COMMIT');
      await db.exec(sql.join(';\n'));
    } catch (e) {
      await db.rollback();
      throw new StoreError(`delete failed: ${(e as Error).message}`, 'unavailable', { cause: e });
    }
    if (state.stateRow.has(dev)) state.markDirty(dev, from);
    if (!touchesLatest) return;
    const rows = await readRows(
      db.w,
      `SELECT param, max(ts)::DOUBLE, arg_max(v, ts) FROM (UNPIVOT (SELECT ${READING_COLUMNS} FROM readings WHERE device = ${dev})
        ON ${STORED.map(q).join(', ')} INTO NAME param VALUE v) GROUP BY param`,
    );
    state.resetLatest(dev);
    const col = new Map<string, number>(STORED.map((n, i) => [n, i]));
    let newest = Number.NEGATIVE_INFINITY;
    for (const [param, ts, v] of rows) {
      const c = col.get(param as string);
      if (c !== undefined) state.putLatest(dev, c, ts as number, v as number);
      newest = Math.max(newest, ts as number);
    }
    if (Number.isFinite(newest)) state.newest.set(dev, newest);
    else state.newest.delete(dev);
    state.latestChanged = true;
    await this.snapshotLatest();
    if (!Number.isFinite(newest) && state.stateRow.has(dev))
      await db.exec(`UPDATE rollup_state SET newest = NULL WHERE device = ${dev}`);
  }

  /** Removes a device's readings, rollups and state (called with the write lock held). */
  async deleteDevice(deviceKey: string): Promise<void> {
    const { db } = this;
    const dev = this.devices.idOf(deviceKey);
    if (dev === undefined) return;
    await db.exec('BEGIN TRANSACTION');
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
        await db.exec(`DELETE FROM ${t} WHERE device = ${dev}`);
      }
      await db.exec('COMMIT');
    } catch (e) {
      await db.rollback();
      throw new StoreError(`delete failed: ${(e as Error).message}`, 'unavailable', { cause: e });
    }
    this.state.forget(dev);
  }
}
