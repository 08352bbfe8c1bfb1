/**
 * Calendar bucket starts (local days or months in a zone) with a per-year cache: core's
 * `calendarBucketStarts` asks Intl several times per bucket, which for a year of days costs more than
 * the rollup query itself. A local year's starts are computed once per zone and unit.
 */
import { localParts, localYearBucketStarts } from '@kilowatch/core';

type Unit = 'day' | 'month';

/** A local year's starts, from core's cache (shared with the API, which may have built them already). */
const yearStarts = (year: number, unit: Unit, tz: string): readonly number[] =>
  localYearBucketStarts(year, unit, tz);

/**
 * Starts of the buckets overlapping [from, to) (as `calendarBucketStarts`) and the end of the last one.
 * Empty when `to <= from`.
 */
export function calendarBuckets(
  from: number,
  to: number,
  unit: Unit,
  tz: string,
): { starts: number[]; end: number } {
  if (to <= from) return { starts: [], end: from };
  const first = localParts(from, tz).year;
  const last = localParts(to - 1, tz).year;
  const starts: number[] = [];
  let end = from;
  for (let y = first; y <= last + 1; y++) {
    for (const s of yearStarts(y, unit, tz)) {
      if (s >= to) {
        end = s;
        return { starts: trim(starts, from), end };
      }
      starts.push(s);
    }
  }
  return { starts: trim(starts, from), end };
}

/** Drops starts before the bucket that contains `from`. */
function trim(starts: number[], from: number): number[] {
  let i = 0;
  while (i + 1 < starts.length && starts[i + 1]! <= from) i++;
  return starts.slice(i);
}

/**
 * SQL giving the start of the bucket (of `starts`, the last ending at `end`) that holds the epoch
 * milliseconds in `col`, for values in [starts[0], end). Runs of equally long buckets (the 24-hour days
 * between clock changes) share one arithmetic branch, so a year of local days is about five `WHEN`s —
 * several times faster in DuckDB than an ASOF join against the list of starts.
 */
export function bucketStartSql(col: string, starts: readonly number[], end: number): string {
  const runs: { s: number; e: number; len: number }[] = [];
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i]!;
    const e = i + 1 < starts.length ? starts[i + 1]! : end;
    const run = runs[runs.length - 1];
    if (run && run.e === s && run.len === e - s) run.e = e;
    else runs.push({ s, e, len: e - s });
  }
  if (runs.length === 0) return 'NULL::BIGINT';
  return `CASE ${runs
    .map((r) => `WHEN ${col} < ${r.e} THEN ${r.s} + (${col} - ${r.s}) // ${r.len} * ${r.len}`)
    .join(' ')} END`;
}
