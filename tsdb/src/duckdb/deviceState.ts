/**
 * What the store keeps in memory per device id: the newest timestamp stored, the rollup dirty mark, the
 * newest value of every parameter, whether `rollup_state` has a row for it, and whether a bulk load is
 * writing it. The statements that move the dirty mark in the file live here too, in one place.
 *
 * The newest values are written to `latest_values` as a snapshot (writer.ts), not in every commit; on
 * open, whatever was written after a device's snapshot (`ts > newest`) is read back from `readings`.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ColumnBatch } from '../columns.ts';
import { readRows } from './db.ts';
import { q, READING_COLUMNS, STORED } from './schema.ts';

/** Newest value per parameter (`STORED` order; timestamp NaN when never seen). */
export interface LatestEntry {
  ts: Float64Array;
  v: Float64Array;
}

/**
 * The statement lowering `rollup_state.dirty_from` to each device's earliest written timestamp (marks:
 * device id and timestamp); empty when there are none.
 */
export function dirtyMarkSql(marks: readonly (readonly [number, number])[]): string {
  if (marks.length === 0) return '';
  return `UPDATE rollup_state SET dirty_from = least(coalesce(dirty_from, v.mn), v.mn)
         FROM (VALUES ${marks.map(([id, mn]) => `(${id}, ${mn})`).join(', ')}) v(d, mn)
         WHERE device = v.d`;
}

/** The statement adding `rollup_state` rows: device id, dirty mark and newest timestamp (or none). */
export function stateRowsSql(rows: readonly (readonly [number, number, number | null])[]): string {
  return `INSERT INTO rollup_state VALUES ${rows.map(([id, mn, mx]) => `(${id}, ${mn}, ${mx ?? 'NULL'})`).join(', ')}`;
}

export class DeviceState {
  /** Newest timestamp stored per device id: a batch entirely after it cannot collide. */
  readonly newest = new Map<number, number>();
  /** `rollup_state.dirty_from` per device id (absent when clean), so a commit writes it only when it moves. */
  readonly dirty = new Map<number, number>();
  /** Device ids with a `rollup_state` row. */
  readonly stateRow = new Set<number>();
  /** Device ids a bulk load is writing (count of loads): the rollup refresh leaves them for after it. */
  readonly bulkLoading = new Map<number, number>();
  private readonly latestOf = new Map<number, LatestEntry>();
  /** Whether the newest values hold anything the last snapshot does not. */
  latestChanged = false;

  /** The newest timestamp stored for a device (−∞ when none). */
  newestOf(id: number): number {
    return this.newest.get(id) ?? Number.NEGATIVE_INFINITY;
  }

  /** Raises a device's newest timestamp to `ts` if it is later. */
  raiseNewest(id: number, ts: number): void {
    if (ts > this.newestOf(id)) this.newest.set(id, ts);
  }

  /** Whether a write from `from` lowers (or sets) the device's dirty mark. */
  movesDirty(id: number, from: number): boolean {
    return !(from >= (this.dirty.get(id) ?? Number.NaN));
  }

  /** Lowers (or sets) the device's dirty mark to `from` in memory. */
  markDirty(id: number, from: number): void {
    if (this.movesDirty(id, from)) this.dirty.set(id, from);
  }

  latest(id: number): LatestEntry | undefined {
    return this.latestOf.get(id);
  }

  latestEntry(id: number): LatestEntry {
    let l = this.latestOf.get(id);
    if (!l) {
      l = { ts: new Float64Array(STORED.length).fill(Number.NaN), v: new Float64Array(STORED.length) };
      this.latestOf.set(id, l);
    }
    return l;
  }

  /** Takes a newest value unless a later one is known (`ties`: also unless an equally new one is). */
  putLatest(id: number, c: number, ts: number, v: number, ties = true): void {
    const l = this.latestEntry(id);
    if (ties ? !(l.ts[c]! > ts) : !(l.ts[c]! >= ts)) {
      l.ts[c] = ts;
      l.v[c] = v;
    }
  }

  /** A committed batch (its devices as `idOf`): newest timestamps, dirty marks and newest values. */
  committed(b: ColumnBatch, idOf: readonly number[]): void {
    b.keys.forEach((_, d) => {
      const id = idOf[d]!;
      this.stateRow.add(id);
      this.raiseNewest(id, b.maxByDev[d]!);
      this.markDirty(id, b.minByDev[d]!);
    });
    const nv = b.newest;
    for (let i = 0; i < nv.length; i += 4) this.putLatest(idOf[nv[i]!]!, nv[i + 1]!, nv[i + 2]!, nv[i + 3]!);
    this.latestChanged = true;
  }

  /** The stored parameters a device has ever reported, in `STORED` order. */
  params(id: number): string[] {
    const l = this.latestOf.get(id);
    return l ? STORED.filter((_, c) => !Number.isNaN(l.ts[c]!)) : [];
  }

  /** Every known newest value as (device, parameter position, ts, value) columns. */
  latestColumns(): {
    dev: Int32Array<ArrayBuffer>;
    col: Int32Array<ArrayBuffer>;
    ts: Float64Array<ArrayBuffer>;
    v: Float64Array<ArrayBuffer>;
  } {
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
    return {
      dev: Int32Array.from(dev),
      col: Int32Array.from(colIdx),
      ts: Float64Array.from(ts),
      v: Float64Array.from(v),
    };
  }

  /** Forgets a device's newest values (they are read again after some of its readings were deleted). */
  resetLatest(id: number): void {
    this.latestOf.delete(id);
    this.latestChanged = true;
  }

  /** A deleted device. */
  forget(id: number): void {
    this.newest.delete(id);
    this.stateRow.delete(id);
    this.latestOf.delete(id);
    this.dirty.delete(id);
    this.latestChanged = true;
  }

  /** The state the file holds, with what was committed after each device's last snapshot. */
  async load(conn: DuckDBConnection): Promise<void> {
    for (const [id, newest, dirtyFrom] of await readRows(
      conn,
      'SELECT device, newest::DOUBLE, dirty_from::DOUBLE FROM rollup_state',
    )) {
      this.stateRow.add(id as number);
      if (newest !== null) this.newest.set(id as number, newest as number);
      if (dirtyFrom !== null) this.dirty.set(id as number, dirtyFrom as number);
    }
    const col = new Map<string, number>(STORED.map((n, i) => [n, i]));
    const put = (dev: number, param: string, ts: number, v: number) => {
      const c = col.get(param);
      if (c !== undefined) this.putLatest(dev, c, ts, v, false);
    };
    for (const [dev, param, ts, v] of await readRows(
      conn,
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
      const found = await readRows(
        conn,
        `SELECT param, max(ts)::DOUBLE, arg_max(v, ts) FROM (UNPIVOT (SELECT ${READING_COLUMNS} FROM readings WHERE ${where})
          ON ${STORED.map(q).join(', ')} INTO NAME param VALUE v) GROUP BY param`,
      );
      for (const [param, ts, v] of found) {
        put(id, param as string, ts as number, v as number);
        this.raiseNewest(id, ts as number);
        this.latestChanged = true;
      }
    }
  }
}
