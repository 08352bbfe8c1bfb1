/**
 * Local days and months as buckets (docs/domain.md §Time): their starts from core's per-year cache, the runs
 * of equally long days between clock changes, and which rollup a calendar bucket is summed from. The stores
 * render these to SQL or InfluxQL; they compute none of it themselves.
 */
import { HOUR_MS, localParts, localYearBucketStarts, offsetMinutes, type YearlyUnit } from '../time.ts';

export interface CalendarBuckets {
  /** Starts of the local days or months overlapping [from, to), as `calendarBucketStarts` (a fresh array). */
  starts: number[];
  /** End of the last one (`from` when there are none). */
  end: number;
  /** Every start and the end lie on a whole UTC hour, so hourly rollups nest in these buckets. */
  wholeHours: boolean;
}

/**
 * Local days or months overlapping [from, to), built from the local years' cached starts (computing them
 * asks Intl several times a bucket: for a year of days that costs more than the query it serves). Empty when
 * `to <= from`.
 */
export function calendarBuckets(from: number, to: number, unit: YearlyUnit, tz: string): CalendarBuckets {
  const starts: number[] = [];
  if (!(to > from)) return { starts, end: from, wholeHours: true };
  let holding: number | undefined; // start of the bucket holding `from`
  for (let year = localParts(from, tz).year; ; year++) {
    for (const s of localYearBucketStarts(year, unit, tz)) {
      if (s <= from) holding = s;
      else {
        if (starts.length === 0 && holding !== undefined) starts.push(holding);
        if (s >= to) return { starts, end: s, wholeHours: onWholeHours(starts) && onWholeHours([s]) };
        starts.push(s);
      }
    }
  }
}

/** True when every instant lies on a whole UTC hour. */
function onWholeHours(instants: readonly number[]): boolean {
  return instants.every((t) => t % HOUR_MS === 0);
}

/** The rollups a longer bucket can be summed from: hours where they nest in it, quarters everywhere. */
export type FineRollup = '1h' | '15m';

/**
 * The rollup calendar buckets are summed from: whole hours when every boundary lies on a whole UTC hour
 * (zones with a whole-hour offset), else 15 minutes, which nest in the local days of :30 and :45 zones too.
 */
export function fineRollup(b: { starts: readonly number[]; end: number }): FineRollup {
  return onWholeHours(b.starts) && onWholeHours([b.end]) ? '1h' : '15m';
}

/** The same rule for the local hours, days and months of a zone at an instant, judged by its offset then. */
export function fineRollupAt(tz: string, at: number): FineRollup {
  return offsetMinutes(at, tz) % 60 === 0 ? '1h' : '15m';
}

/** Consecutive buckets of one length: `count` buckets of `step` ms from `from` to `to`. */
export interface EqualRun {
  from: number;
  to: number;
  step: number;
  count: number;
}

/**
 * Runs of consecutive buckets of equal length (the 24-hour local days between two clock changes); a bucket
 * of a length of its own (a 23- or 25-hour day, a month) is a run of one. A year of local days is about five
 * runs, so an engine answers it with a handful of arithmetic branches or `GROUP BY time()` statements.
 */
export function equalLengthRuns(b: { starts: readonly number[]; end: number }): EqualRun[] {
  const runs: EqualRun[] = [];
  for (let i = 0; i < b.starts.length; i++) {
    const from = b.starts[i]!;
    const to = i + 1 < b.starts.length ? b.starts[i + 1]! : b.end;
    const run = runs[runs.length - 1];
    if (run && run.to === from && run.step === to - from) {
      run.to = to;
      run.count++;
    } else runs.push({ from, to, step: to - from, count: 1 });
  }
  return runs;
}
