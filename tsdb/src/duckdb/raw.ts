/**
 * Raw reads: pages of stored readings, a stream of them, and the newest values (kept in memory).
 */

import { isStoredParam } from '@kilowatch/core';
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
    /** Checks the store is open and waits until every acknowledged write can be read. */
    private readonly ready: () => Promise<void>,
  ) {}

  private storedParams(params: readonly string[] | undefined): string[] {
    if (!params) return [...STORED];
    for (const p of params) if (!isStoredParam(p)) throw rejected(`unknown parameter "${p}"`);
    return [...new Set(params)];
  }

  async readRaw(query: RawQuery): Promise<RawPage> {
    await this.ready();
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
    const dev = this.devices.idOf(query.deviceKey);
    if (dev === undefined || params.length === 0) return { items: [], nextCursor: null };
    const any = params.map((p) => `${q(p)} IS NOT NULL`).join(' OR ');
    const items: RawRow[] = [];
    let more = false;
    await eachChunk(
      this.db.r,
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

  async latest(deviceKey: string): Promise<LatestValues | null> {
    await this.ready();
    const dev = this.devices.idOf(deviceKey);
    const l = dev === undefined ? undefined : this.state.latest(dev);
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
}
