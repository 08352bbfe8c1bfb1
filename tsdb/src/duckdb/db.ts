/**
 * What every part of the DuckDB store shares: the database and its connections, the write lock, the
 * closed flag and the counter rules; plus the query helpers that turn DuckDB failures into `StoreError`s
 * and the checks of a query's range, zone and buckets that the series and energy readers both apply.
 */
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import {
  CALENDAR_UNIT_OF,
  type CounterRules,
  calendarBuckets,
  counterRules,
  DEFAULT_TIMEZONE,
  fixedBucketStarts,
  isCalendarInterval,
  isValidTimeZone,
} from '@kilowatch/core';
import { type EnergyInterval, ROLLUP_STEP_MS, type SeriesInterval, StoreError } from '../port.ts';
import { assertDoubleColumns, type DoubleColumn, doubleColumns } from './chunks.ts';
import { Mutex } from './mutex.ts';

export type Row = DuckDBValue[];

/** The most buckets one answer may hold. */
export const MAX_BUCKETS = 200_000;

export function rejected(message: string): StoreError {
  return new StoreError(message, 'rejected');
}

export function asNum(v: DuckDBValue): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  return Number(v);
}

/** The database, its connections and the state every part of the store reads. */
export class Db {
  /** Serializes the write connection: commits, snapshots, checkpoints and rollup windows. */
  readonly lock = new Mutex();
  closed = false;
  readonly rulesOf: (counter: string) => CounterRules;

  constructor(
    readonly instance: DuckDBInstance,
    /** Writes (serialized by `lock`). */
    readonly w: DuckDBConnection,
    /** Queries. */
    readonly r: DuckDBConnection,
    /** Checkpoints run here, beside the writes (file databases only). */
    readonly ck: DuckDBConnection | null,
    rules: Partial<CounterRules> | undefined,
  ) {
    this.rulesOf = (c) => counterRules(c, rules ?? {});
  }

  assertOpen(): void {
    if (this.closed) throw new StoreError('the store is closed', 'unavailable');
  }

  /** Runs statements on the write connection. */
  async exec(sql: string): Promise<void> {
    await this.w.run(sql);
  }

  /** Rolls back the write connection's transaction, if one is open. */
  async rollback(): Promise<void> {
    await this.w.run('ROLLBACK').catch(() => undefined);
  }
}

export async function readRows(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  try {
    const reader = await conn.runAndReadAll(sql);
    return reader.getRows();
  } catch (e) {
    throw new StoreError(`DuckDB query failed: ${(e as Error).message}`, 'internal', { cause: e });
  }
}

/** Runs a query whose columns are all DOUBLE and hands each result chunk's columns to `visit`. */
export async function eachChunk(
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

/** The zone a query names (the default when none), checked. */
export function checkTz(tz: string | undefined): string {
  const z = tz ?? DEFAULT_TIMEZONE;
  if (!isValidTimeZone(z)) throw rejected(`unknown time zone "${z}"`);
  return z;
}

/** Bucket starts of a range and the end of the last bucket: fixed steps, or local days and months. */
export function buckets(
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
