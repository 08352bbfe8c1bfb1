/**
 * The measurement schema (influx/README.md §Schema) and the reads every part of the engine shares.
 */
import type { RawRow } from '@kilowatch/tsdb';
import type { InfluxClient, QuerySeries } from './client.ts';
import { ident, literal, timeLiteral } from './lineProtocol.ts';

/** Raw readings: tag `device`, one float field per catalogue parameter, ms timestamps. */
export const READINGS = 'readings';
export const ROLLUP_MEASUREMENT = { '15m': 'rollup_15m', '30m': 'rollup_30m', '1h': 'rollup_1h' } as const;
/**
 * Energy per local day of a zone (tags `device`, `tz`): `<c>_e` and `<c>_ev` per counter, point time = the
 * local midnight. Kept for the zones the store is configured with, so daily and monthly energy reads one
 * point per day instead of 24 hourly ones, and never touches the gauge fields.
 */
export const ROLLUP_DAY = 'rollup_1d';
/** Zones whose day rollups are complete (tag `tz`, field `built`). */
export const DAY_STATE = 'rollup_days';
/** One point per write batch and device: which range a refresh must recompute. */
export const DIRTY = 'rollup_dirty';
/** The rule the stored rollups were computed by (field `version`); see `ROLLUP_VERSION`. */
export const ROLLUP_VERSION_MEASUREMENT = 'rollup_version';
/**
 * Version of the counter rule the rollups follow. A database whose `rollup_version` is older (or absent)
 * gets its rollups dropped and recomputed from the readings before they answer.
 * - 1: counter steps bucketed `[start, end)`.
 * - 2: counter buckets `(start, end]` (core `counterInstant`): a reading on an edge closes the bucket
 *   that ends there.
 */
export const ROLLUP_VERSION = 2;
/** Refresh progress: the marker cursor and the watermark. */
export const STATE = 'rollup_state';

export type Row = Record<string, number | string | boolean | null>;

/** The rows of one statement's series as objects keyed by column. */
export function rowsOf(series: QuerySeries[] | undefined): Row[] {
  const out: Row[] = [];
  for (const s of series ?? []) {
    for (const v of s.values) {
      const row: Row = { ...s.tags };
      s.columns.forEach((c, i) => {
        row[c] = v[i] ?? null;
      });
      out.push(row);
    }
  }
  return out;
}

export function deviceWhere(deviceKey: string, from?: number, to?: number): string {
  let w = `"device" = ${literal(deviceKey)}`;
  if (from !== undefined) w += ` AND time >= ${timeLiteral(from)}`;
  if (to !== undefined) w += ` AND time < ${timeLiteral(to)}`;
  return w;
}

export function fieldList(fields: readonly string[]): string {
  return fields.length === 0 ? '*' : fields.map(ident).join(', ');
}

/** Raw rows in time order; `device` and null columns left out. */
export function toRawRows(rows: Row[]): RawRow[] {
  const out: RawRow[] = [];
  for (const r of rows) {
    const values: Record<string, number> = {};
    let any = false;
    for (const [k, v] of Object.entries(r)) {
      if (k === 'time' || k === 'device' || typeof v !== 'number') continue;
      values[k] = v;
      any = true;
    }
    if (any) out.push({ ts: r.time as number, values });
  }
  return out;
}

/** Every raw row of a device in [from, to), read in pages so a long range never is one response. */
export async function readRawRange(
  client: InfluxClient,
  deviceKey: string,
  from: number,
  to: number,
  fields: readonly string[],
  pageSize = 10_000,
): Promise<RawRow[]> {
  const out: RawRow[] = [];
  let after = from - 1;
  for (;;) {
    const [res] = await client.query(
      `SELECT ${fieldList(fields)} FROM ${READINGS} WHERE ${deviceWhere(deviceKey, after + 1, to)} ORDER BY time ASC LIMIT ${pageSize}`,
    );
    const rows = rowsOf(res?.series);
    for (const r of toRawRows(rows)) out.push(r);
    if (rows.length < pageSize) return out;
    after = rows[rows.length - 1]!.time as number;
  }
}

/** Each counter's last reading before `before` (the baseline of the first bucket). */
export async function lastBefore(
  client: InfluxClient,
  deviceKey: string,
  counters: readonly string[],
  before: number,
): Promise<Map<string, { ts: number; value: number } | null>> {
  const out = new Map<string, { ts: number; value: number } | null>();
  if (counters.length === 0) return out;
  const stmts = counters.map(
    (c) => `SELECT last(${ident(c)}) FROM ${READINGS} WHERE ${deviceWhere(deviceKey, undefined, before)}`,
  );
  const results = await client.query(stmts.join('; '));
  counters.forEach((c, i) => {
    const row = rowsOf(results[i]?.series)[0];
    const v = row?.last;
    out.set(c, row && typeof v === 'number' ? { ts: row.time as number, value: v } : null);
  });
  return out;
}
