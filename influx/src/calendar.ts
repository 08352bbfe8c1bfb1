/**
 * Local days and months of a zone with a per-year cache. Core's `calendarBucketStarts` asks Intl several
 * times per bucket: for 90 days that costs more than reading the day rollups of 20 devices, and a daily
 * answer would spend most of its time there. A local year's starts (and whether all of them fall on
 * whole hours) are computed once per zone and unit.
 */
import { localParts, localYearBucketStarts, offsetMinutes } from '@kilowatch/core';

type Unit = 'day' | 'month';

interface Year {
  starts: readonly number[];
  /** Every start is at a whole-hour offset (hourly rollups fit these buckets). */
  wholeHours: boolean;
}

const cache = new Map<string, Year>();
const MAX_ENTRIES = 512;

function yearOf(year: number, unit: Unit, tz: string): Year {
  const key = `${unit}|${tz}|${year}`;
  let y = cache.get(key);
  if (!y) {
    const starts = localYearBucketStarts(year, unit, tz);
    y = { starts, wholeHours: starts.every((t) => offsetMinutes(t, tz) % 60 === 0) };
    if (cache.size >= MAX_ENTRIES) cache.clear();
    cache.set(key, y);
  }
  return y;
}

export interface CalendarBuckets {
  /** Starts of the local days or months overlapping [from, to), as core's `calendarBucketStarts`. */
  starts: number[];
  /** End of the last one. */
  end: number;
  /** Every start and the end lie at whole-hour offsets (conservative: judged per local year). */
  wholeHours: boolean;
}

/** Local days or months overlapping [from, to) (`from < to`). */
export function calendarBuckets(from: number, to: number, unit: Unit, tz: string): CalendarBuckets {
  const starts: number[] = [];
  let wholeHours = true;
  let holding: number | undefined; // start of the bucket holding `from`
  for (let year = localParts(from, tz).year; ; year++) {
    const y = yearOf(year, unit, tz);
    wholeHours &&= y.wholeHours;
    for (const s of y.starts) {
      if (s <= from) holding = s;
      else if (s >= to) {
        if (starts.length === 0 && holding !== undefined) starts.push(holding);
        return { starts, end: s, wholeHours };
      } else {
        if (starts.length === 0 && holding !== undefined) starts.push(holding);
        starts.push(s);
      }
    }
  }
}
