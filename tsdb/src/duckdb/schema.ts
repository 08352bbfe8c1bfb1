/**
 * The DuckDB layout of Kilowatch telemetry, generated from the parameter catalogue.
 *
 * - `device_keys(id, key)`: a small integer per device key (a dictionary), so scans compare integers.
 * - `readings(device, ts, <one DOUBLE column per catalogue parameter>)`: wide and columnar — a query reads
 *   only the columns it names. `ts` is BIGINT epoch milliseconds (UTC). No index: idempotency on
 *   (device, ts) is kept by the write path, and DuckDB's zone maps on `ts` prune row groups.
 * - `rollup_15m`, `rollup_30m`, `rollup_1h`: one row per (device, param, bucket) the device reported,
 *   with `sum`, `cnt`, `min`, `max` for stored and combined parameters and, for counters, the bucket's
 *   energy plus first/last register value and time, the baseline after the bucket, and reset/implausible
 *   counts.
 * - `counter_events(device, counter, kind, at_ts, from_ts, delta)`: resets and implausible jumps.
 * - `latest_values(device, param, ts, v)`: the newest value of every parameter, kept at write time.
 * - `rollup_state(device, dirty_from, newest)`: the earliest timestamp written since the last refresh
 *   (null when clean) and the newest reading, persisted so a restart keeps pending rollup work.
 */
import { COMBINED_PARAMS, COUNTER_NAMES, PARAM_NAMES, PARAMS } from '@kilowatch/core';

export const STORED = PARAM_NAMES;
export const COUNTERS = COUNTER_NAMES;
/** Combined (all-phase) parameters: their per-reading value is computed from the phases. */
export const COMBINED = COMBINED_PARAMS;
/** Every name a gauge-style aggregate (sum/count/min/max) is kept for. */
export const AGG_NAMES: readonly string[] = [...PARAM_NAMES, ...COMBINED_PARAMS.map((c) => c.name)];

const SAFE = /^[a-z][a-z0-9_]*$/;
for (const n of AGG_NAMES) {
  if (!SAFE.test(n)) throw new Error(`catalogue name ${n} is not a plain SQL identifier`);
}

export const q = (name: string): string => `"${name}"`;

/** SQL expression of a parameter's value per reading (stored column, or combined from the phases). */
export function valueExpr(name: string, alias = ''): string {
  const a = alias ? `${alias}.` : '';
  const comb = COMBINED.find((c) => c.name === name);
  if (!comb) return `${a}${q(name)}`;
  const parts = comb.of.map((p) => `${a}${q(p)}`);
  const anyPresent = parts.map((p) => `${p} IS NOT NULL`).join(' OR ');
  const total = parts.map((p) => `coalesce(${p}, 0)`).join(' + ');
  if (comb.combine === 'sum') return `(CASE WHEN ${anyPresent} THEN ${total} END)`;
  const count = parts.map((p) => `(${p} IS NOT NULL)::INTEGER`).join(' + ');
  return `(CASE WHEN ${anyPresent} THEN (${total}) / (${count}) END)`;
}

/**
 * One row per (device, param, bucket) — only for parameters the device reported in the bucket, so a
 * meter sending a third of the catalogue costs a third. `sum`, `cnt`, `min`, `max` for every stored and
 * combined parameter (counters too: their register values); for counters also the bucket's energy `e`,
 * first/last register value and time, the baseline after the bucket, and reset/implausible counts.
 */
function rollupTable(name: string): string {
  return `CREATE TABLE IF NOT EXISTS ${name} (
    device INTEGER NOT NULL, param VARCHAR NOT NULL, bucket BIGINT NOT NULL,
    sum DOUBLE, cnt BIGINT, min DOUBLE, max DOUBLE,
    e DOUBLE, first DOUBLE, first_ts BIGINT, last DOUBLE, last_ts BIGINT, base DOUBLE,
    resets INTEGER, impl INTEGER)`;
}

export const SCHEMA_VERSION = 1;

/**
 * What brings a file written with an earlier catalogue up to this one: a column for each parameter the
 * catalogue has gained since (`existing` are the `readings` columns the file has). Readings stored before
 * simply have no value for it. A parameter the catalogue no longer names keeps its column, which nothing
 * reads any more (every query names its columns).
 */
export function catalogueMigration(existing: ReadonlySet<string>): string[] {
  return STORED.filter((p) => !existing.has(p)).map((p) => `ALTER TABLE readings ADD COLUMN ${q(p)} DOUBLE`);
}

/** The `readings` columns a query over every stored parameter reads (never `SELECT *`: see above). */
export const READING_COLUMNS = `device, ts, ${STORED.map(q).join(', ')}`;

/**
 * Version of the rule the rollups were computed by, kept in `meta` as `rollup_version` (absent: 1). A file
 * whose rollups are older is rebuilt from its readings on open.
 * - 1: counter steps bucketed `[start, end)` (a reading on an edge opened the next bucket).
 * - 2: counter buckets `(start, end]` (core `counterInstant`): a reading on an edge closes the bucket
 *   that ends there.
 */
export const ROLLUP_VERSION = 2;

export const SCHEMA: readonly string[] = [
  'CREATE TABLE IF NOT EXISTS meta (k VARCHAR NOT NULL, v VARCHAR)',
  'CREATE TABLE IF NOT EXISTS device_keys (id INTEGER PRIMARY KEY, key VARCHAR NOT NULL UNIQUE)',
  `CREATE TABLE IF NOT EXISTS readings (device INTEGER NOT NULL, ts BIGINT NOT NULL, ${PARAMS.map((p) => `${q(p.name)} DOUBLE`).join(', ')})`,
  rollupTable('rollup_15m'),
  rollupTable('rollup_30m'),
  rollupTable('rollup_1h'),
  'CREATE TABLE IF NOT EXISTS latest_values (device INTEGER NOT NULL, param VARCHAR NOT NULL, ts BIGINT NOT NULL, v DOUBLE NOT NULL)',
  'CREATE TABLE IF NOT EXISTS counter_events (device INTEGER NOT NULL, counter VARCHAR NOT NULL, kind VARCHAR NOT NULL, at_ts BIGINT NOT NULL, from_ts BIGINT NOT NULL, delta DOUBLE NOT NULL)',
  // No key constraint: the write path knows which devices have a row (an index would slow every commit).
  'CREATE TABLE IF NOT EXISTS rollup_state (device INTEGER NOT NULL, dirty_from BIGINT, newest BIGINT)',
];
