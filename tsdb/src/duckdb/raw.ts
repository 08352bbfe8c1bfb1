/**
 * Raw reads: pages of stored readings, a stream of them, and the newest values (kept in memory).
 *
 * None of them waits for a checkpoint. The batches acknowledged from the write journal while one runs
 * (checkpoints.ts) are not in DuckDB yet; a page and the newest values lay them over what DuckDB has
 * committed, here in JavaScript, so both are exact the moment a write is acknowledged.
 */

import { isStoredParam } from '@kilowatch/core';
import type { ColumnBatch } from '../columns.ts';
import { checkTimeRange, type LatestValues, type RawPage, type RawQuery, type RawRow } from '../port.ts';
import { valueAt } from './chunks.ts';
import { type Db, eachChunk, rejected } from './db.ts';
import type { DeviceState } from './deviceState.ts';
import type { DeviceRegistry } from './devices.ts';
import { q, STORED } from './schema.ts';

const MAX_PAGE = 10_000;
/** `streamRaw`'s first window of time, and the widest it grows to over sparse data. */
const FIRST_WINDOW_MS = 86_400_000;
const MAX_WINDOW_MS = 512 * 86_400_000;

export class RawReader {
  constructor(
    private readonly db: Db,
    private readonly devices: DeviceRegistry,
    private readonly state: DeviceState,
    /** The journaled batches not yet applied to DuckDB, in arrival order (checkpoints.ts `pending`). */
    private readonly parked: () => readonly ColumnBatch[],
  ) {}

  private storedParams(params: readonly string[] | undefined): string[] {
    if (!params) return [...STORED];
    for (const p of params) if (!isStoredParam(p)) throw rejected(`unknown parameter "${p}"`);
    return [...new Set(params)];
  }

  async readRaw(query: RawQuery): Promise<RawPage> {
    this.db.assertOpen();
    checkTimeRange(query.from, query.to);
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > MAX_PAGE)
      throw rejected(`limit must be 1..${MAX_PAGE}`);
    const params = this.storedParams(query.params);
    let from = query.from;
    if (query.cursor) {
      const m = /^ts:(-?\d+)$/.exec(query.cursor);
      if (!m) throw rejected('invalid cursor');
      from = Math.max(from, Number(m[1]) + 1);
    }
    if (params.length === 0) return { items: [], nextCursor: null };
    // Taken before the query: a batch applied meanwhile is then either in this list or committed before
    // the query began (it leaves the list only once its commit is done).
    const parked = this.parked();
    const dev = this.devices.idOf(query.deviceKey);
    const items: RawRow[] = [];
    if (dev !== undefined) {
      const any = params.map((p) => `${q(p)} IS NOT NULL`).join(' OR ');
      await eachChunk(
        this.db.r,
        `SELECT ts::DOUBLE, ${params.map((p) => `${q(p)}::DOUBLE`).join(', ')} FROM readings
         WHERE device = ${dev} AND ts >= ${from} AND ts < ${query.to} AND (${any})
         ORDER BY ts LIMIT ${query.limit + 1}`,
        (cols, n) => {
          const ts = cols[0]!.values;
          for (let r = 0; r < n; r++) {
            const values: Record<string, number> = {};
            for (let i = 0; i < params.length; i++) {
              const v = valueAt(cols[i + 1]!, r);
              if (v !== null) values[params[i]!] = v;
            }
            items.push({ ts: ts[r]!, values });
          }
        },
      );
    }
    const page =
      parked.length > 0 ? overlay(items, parkedRows(parked, query.deviceKey, params, from, query.to)) : items;
    // The query's `limit + 1` rows and every journaled row of the range: no row left out could come
    // before the `limit + 1`-th of them.
    const more = page.length > query.limit;
    if (more) page.length = query.limit;
    const last = page[page.length - 1];
    return { items: page, nextCursor: more && last ? `ts:${last.ts}` : null };
  }

  /**
   * The range's readings in pages of `pageSize` (the last may be shorter). Each query reads a window of
   * time from where the last one ended, widened while windows come back short: a page's
   * `ORDER BY ts LIMIT` over the rest of the range would scan all of it again for every page — a year's
   * export of a meter read its year ~100 times over, and needed more memory than a small limit allows.
   */
  async *streamRaw(
    query: Omit<RawQuery, 'cursor' | 'limit'> & { pageSize?: number },
  ): AsyncIterable<RawRow[]> {
    checkTimeRange(query.from, query.to);
    const limit = Math.min(Math.max(query.pageSize ?? 5000, 1), MAX_PAGE);
    let page: RawRow[] = [];
    let from = query.from;
    let span = FIRST_WINDOW_MS;
    while (from < query.to) {
      const to = Math.min(query.to, from + span);
      const got: RawPage = await this.readRaw({
        ...query,
        from,
        to,
        cursor: null,
        limit: limit - page.length,
      });
      for (const row of got.items) page.push(row);
      if (page.length === limit) {
        yield page;
        page = [];
      }
      if (got.nextCursor) {
        from = got.items[got.items.length - 1]!.ts + 1;
      } else {
        from = to;
        if (span < MAX_WINDOW_MS) span *= 2;
      }
    }
    if (page.length > 0) yield page;
  }

  /** The newest values committed, with those of the journaled batches over them (as applying them will). */
  async latest(deviceKey: string): Promise<LatestValues | null> {
    this.db.assertOpen();
    const dev = this.devices.idOf(deviceKey);
    const stored = dev === undefined ? undefined : this.state.latest(dev);
    let at: Float64Array | undefined = stored?.ts;
    let val: Float64Array | undefined = stored?.v;
    let copied = false;
    for (const b of this.parked()) {
      const d = b.keys.indexOf(deviceKey);
      if (d < 0) continue;
      const nv = b.newest;
      for (let i = 0; i < nv.length; i += 4) {
        if (nv[i] !== d) continue;
        if (!copied) {
          // Copied before the first change: the committed values stay as they are.
          at = at ? Float64Array.from(at) : new Float64Array(STORED.length).fill(Number.NaN);
          val = val ? Float64Array.from(val) : new Float64Array(STORED.length);
          copied = true;
        }
        const c = nv[i + 1]!;
        // A later batch wins a tie, as when it is applied (deviceState.ts `putLatest`).
        if (!(at![c]! > nv[i + 2]!)) {
          at![c] = nv[i + 2]!;
          val![c] = nv[i + 3]!;
        }
      }
    }
    if (!at || !val) return null;
    let ts = Number.NEGATIVE_INFINITY;
    const values: Record<string, number> = {};
    for (let c = 0; c < STORED.length; c++) {
      const t = at[c]!;
      if (Number.isNaN(t)) continue;
      values[STORED[c]!] = val[c]!;
      if (t > ts) ts = t;
    }
    return Number.isFinite(ts) ? { ts, values } : null;
  }
}

/**
 * A device's journaled rows in [from, to) holding one of `params` at least, by timestamp: the values of
 * `params` they carry, a later batch's value winning (as when they are applied).
 */
function parkedRows(
  batches: readonly ColumnBatch[],
  deviceKey: string,
  params: readonly string[],
  from: number,
  to: number,
): Map<number, Record<string, number>> {
  const rows = new Map<number, Record<string, number>>();
  const wanted = new Set(params);
  for (const b of batches) {
    const d = b.keys.indexOf(deviceKey);
    if (d < 0 || b.minByDev[d]! >= to || b.maxByDev[d]! < from) continue;
    const cols: { j: number; name: string }[] = [];
    b.cols.forEach((c, j) => {
      if (wanted.has(STORED[c]!)) cols.push({ j, name: STORED[c]! });
    });
    if (cols.length === 0) continue;
    for (let r = 0; r < b.rows; r++) {
      const t = b.ts[r]!;
      if (b.dev[r] !== d || t < from || t >= to) continue;
      let values = rows.get(t);
      for (const { j, name } of cols) {
        if (((b.valid[j]![r >>> 5]! >>> (r & 31)) & 1) === 0) continue;
        if (!values) {
          values = {};
          rows.set(t, values);
        }
        values[name] = b.values[j]![r]!;
      }
    }
  }
  return rows;
}

/**
 * Stored rows (in time order) with journaled ones laid over them: a journaled value replaces the stored
 * one of its (timestamp, parameter) and keeps the others, as applying it will; in time order.
 */
function overlay(stored: RawRow[], parked: Map<number, Record<string, number>>): RawRow[] {
  if (parked.size === 0) return stored;
  const out: RawRow[] = [];
  for (const row of stored) {
    const over = parked.get(row.ts);
    if (over) {
      parked.delete(row.ts);
      out.push({ ts: row.ts, values: { ...row.values, ...over } });
    } else out.push(row);
  }
  for (const [ts, values] of parked) out.push({ ts, values });
  return out.sort((a, b) => a.ts - b.ts);
}
