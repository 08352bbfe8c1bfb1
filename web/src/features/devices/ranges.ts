/**
 * Chart periods of the details pages: the simple chart (a start date plus 24 h), 7 and 30 days, a
 * year, and billing periods from the device's billing start and length (docs/domain.md §Billing).
 */
import {
  addLocalDays,
  addLocalMonths,
  DAY_MS,
  localParts,
  startOfLocalDay,
  zonedTimeToUtc,
} from '@kilowatch/core';

export type RangePreset = 'day' | 'week' | 'month' | 'year' | 'billing';
export type ChartInterval = '15m' | '30m' | '1h' | '1d';
export const CHART_INTERVALS: readonly ChartInterval[] = ['15m', '30m', '1h', '1d'];

export interface TimeRange {
  from: number;
  to: number;
}

/** `YYYY-MM-DD` at local midnight in `tz`. */
export function parseLocalDate(date: string, tz: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  return zonedTimeToUtc(Number(m[1]), Number(m[2]), Number(m[3]), 0, 0, 0, tz);
}

export function rangeFor(
  preset: Exclude<RangePreset, 'billing'>,
  now: number,
  tz: string,
  startDate?: string,
): TimeRange {
  switch (preset) {
    case 'day': {
      const from = (startDate ? parseLocalDate(startDate, tz) : null) ?? startOfLocalDay(now, tz);
      return { from, to: from + DAY_MS };
    }
    case 'week':
      return { from: addLocalDays(now, -6, tz), to: addLocalDays(now, 1, tz) };
    case 'month':
      return { from: addLocalDays(now, -29, tz), to: addLocalDays(now, 1, tz) };
    case 'year':
      return { from: addLocalMonths(now, -11, tz), to: addLocalMonths(now, 1, tz) };
  }
}

/** Periods of `months` months from the billing start, the newest (containing `now`) first. */
export function billingPeriods(
  billingStart: number,
  months: number,
  now: number,
  tz: string,
  count = 12,
): TimeRange[] {
  const len = Math.max(1, Math.floor(months));
  const start = startOfLocalDay(billingStart, tz);
  const s = localParts(start, tz);
  const at = (k: number) => {
    const d = new Date(Date.UTC(s.year, s.month - 1 + k * len, 1));
    const y = d.getUTCFullYear();
    const mo = d.getUTCMonth() + 1;
    const lastDay = new Date(Date.UTC(y, mo, 0)).getUTCDate();
    return zonedTimeToUtc(y, mo, Math.min(s.day, lastDay), 0, 0, 0, tz);
  };
  let k = 0;
  while (at(k + 1) <= now && k < 10_000) k++;
  const out: TimeRange[] = [];
  for (let i = k; i >= 0 && out.length < count; i--) out.push({ from: at(i), to: at(i + 1) });
  return out;
}

/** Energy buckets that suit the period: the chart interval for one day, days or months beyond. */
export function energyIntervalFor(
  range: TimeRange,
  interval: ChartInterval,
): '15m' | '30m' | '1h' | '1d' | '1mo' {
  const days = (range.to - range.from) / DAY_MS;
  if (days <= 2) return interval;
  if (days <= 62) return '1d';
  return '1mo';
}

/** The finest chart interval that keeps a series within the API's 100,000-point cap (docs/api.md). */
export function fitInterval(range: TimeRange, wanted: ChartInterval): ChartInterval {
  const steps: Record<ChartInterval, number> = {
    '15m': 900_000,
    '30m': 1_800_000,
    '1h': 3_600_000,
    '1d': DAY_MS,
  };
  const order = CHART_INTERVALS.slice(CHART_INTERVALS.indexOf(wanted));
  return order.find((i) => (range.to - range.from) / steps[i] <= 100_000) ?? '1d';
}
