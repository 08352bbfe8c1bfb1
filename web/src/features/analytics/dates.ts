/** Date inputs of the analytics sections: local `YYYY-MM-DD` days in the user's zone. */
import { addLocalDays } from '@kilowatch/core';
import type { HeatmapKind } from '../../api/analytics/get-heatmap.ts';
import { dayjs } from '../../lib/time.ts';
import { parseLocalDate } from '../../ranges/ranges.ts';

export interface DayRange {
  from: string;
  to: string;
}

/** From the first day's midnight to the end of the last day; null when a day is missing or reversed. */
export function rangeOfDays(r: DayRange, tz: string): { from: number; to: number } | null {
  const from = parseLocalDate(r.from, tz);
  const last = parseLocalDate(r.to, tz);
  if (from === null || last === null || last < from) return null;
  // The next local midnight (a DST day has 23 or 25 hours).
  return { from, to: addLocalDays(last, 1, tz) };
}

/** The last `days` days up to today. */
export function lastDays(days: number, tz: string, now = Date.now()): DayRange {
  const today = dayjs(now).tz(tz);
  return { from: today.subtract(days - 1, 'day').format('YYYY-MM-DD'), to: today.format('YYYY-MM-DD') };
}

/** A default period per heatmap kind: two weeks of hours, eight weeks, a year of months, a year of days. */
export const HEATMAP_DEFAULT_DAYS: Record<HeatmapKind, number> = {
  daily: 14,
  weekly: 56,
  monthly: 365,
  yearly: 365,
};
