/**
 * Chart periods shared by the device pages, the data log and the analytics screens: one day from a start
 * date, presets up to a year ending today, a custom range of local days, and billing periods from the
 * device's billing start and length (docs/domain.md §Billing). Day ends are the next local midnight, so a
 * DST day has its 23 or 25 hours.
 */
import {
  addLocalDays,
  addLocalMonths,
  billingPeriodsUpTo,
  DAY_MS,
  type EnergyInterval,
  localDateString,
  MAX_POINTS_PER_SERIES,
  NOMINAL_STEP_MS,
  SERIES_INTERVALS,
  type SeriesInterval,
  startOfLocalDay,
  zonedTimeToUtc,
} from '@kilowatch/core';

export type RangePreset = 'day' | 'week' | 'month' | 'year' | 'billing';
/** The series intervals of core's catalogue a chart offers (raw readings are the data log's). */
export type ChartInterval = Exclude<SeriesInterval, 'raw'>;
export const CHART_INTERVALS: readonly ChartInterval[] = SERIES_INTERVALS.filter(
  (i): i is ChartInterval => i !== 'raw',
);
/** A chart interval, or `auto`: the API's finest that keeps a series readable (≤ 2,000 points). */
export type ChartIntervalChoice = ChartInterval | 'auto';
export const CHART_INTERVAL_CHOICES: readonly ChartIntervalChoice[] = ['auto', ...CHART_INTERVALS];

/** Presets of the long-range control: one day up to a year ending today, or two chosen days. */
export const LONG_PRESETS = ['day', 'week', 'month', 'quarter', 'year', 'custom'] as const;
export type LongPreset = (typeof LONG_PRESETS)[number];

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
      return { from, to: addLocalDays(from, 1, tz) };
    }
    case 'week':
      return { from: addLocalDays(now, -6, tz), to: addLocalDays(now, 1, tz) };
    case 'month':
      return { from: addLocalDays(now, -29, tz), to: addLocalDays(now, 1, tz) };
    case 'year':
      return { from: addLocalMonths(now, -11, tz), to: addLocalMonths(now, 1, tz) };
  }
}

/** Why a custom range has no period: a day missing, or the last day before the first. */
export type CustomRangeProblem = 'missing' | 'reversed';

export function customRangeProblem(custom: readonly [string | null, string | null], tz: string) {
  const from = custom[0] ? parseLocalDate(custom[0], tz) : null;
  const last = custom[1] ? parseLocalDate(custom[1], tz) : null;
  if (from === null || last === null) return 'missing' as const;
  return last < from ? ('reversed' as const) : null;
}

/** The range of a preset ending today (`day`: the start date's day), or of two local days, both included. */
export function longRange(
  preset: LongPreset,
  now: number,
  tz: string,
  custom: readonly [string | null, string | null] = [null, null],
  startDate?: string,
): TimeRange | null {
  switch (preset) {
    case 'quarter':
      return { from: addLocalDays(now, -89, tz), to: addLocalDays(now, 1, tz) };
    case 'year':
      return { from: addLocalDays(now, -364, tz), to: addLocalDays(now, 1, tz) };
    case 'custom': {
      if (customRangeProblem(custom, tz) !== null) return null;
      const from = parseLocalDate(custom[0]!, tz)!;
      return { from, to: addLocalDays(parseLocalDate(custom[1]!, tz)!, 1, tz) };
    }
    default:
      return rangeFor(preset, now, tz, startDate);
  }
}

/** Whether min/max bands are worth asking for: buckets of an hour or more. */
export function wantsBands(range: TimeRange): boolean {
  return range.to - range.from > 7 * DAY_MS;
}

/**
 * Periods of `months` months from the billing start (its day `YYYY-MM-DD`, or an instant read as its day
 * in `tz`), the newest (containing `now`) first (core's periods).
 */
export function billingPeriods(
  billingStart: number | string,
  months: number,
  now: number,
  tz: string,
  count = 12,
): TimeRange[] {
  const len = Math.max(1, Math.floor(months));
  const day = typeof billingStart === 'string' ? billingStart : localDateString(billingStart, tz);
  return billingPeriodsUpTo(now, day, len, tz, count).map((p) => ({
    from: p.start,
    to: p.end,
  }));
}

/** Energy buckets that suit the period: the chart interval for one day, days or months beyond. */
export function energyIntervalFor(range: TimeRange, interval: ChartIntervalChoice): EnergyInterval {
  const days = (range.to - range.from) / DAY_MS;
  if (days <= 2) return interval === 'auto' ? '15m' : interval;
  if (days <= 62) return '1d';
  return '1mo';
}

/**
 * The interval to ask for: none for `auto` (the API picks the finest that keeps ≤ 2,000 points, so a year
 * comes as daily buckets), else the finest from the wanted one that stays within the API's 100,000-point
 * cap (docs/api.md).
 */
export function seriesInterval(range: TimeRange, wanted: ChartIntervalChoice): ChartInterval | undefined {
  return wanted === 'auto' ? undefined : fitInterval(range, wanted);
}

/** The finest chart interval that keeps a series within the API's 100,000-point cap (docs/api.md). */
export function fitInterval(range: TimeRange, wanted: ChartInterval): ChartInterval {
  const order = CHART_INTERVALS.slice(CHART_INTERVALS.indexOf(wanted));
  return order.find((i) => (range.to - range.from) / NOMINAL_STEP_MS[i] <= MAX_POINTS_PER_SERIES) ?? '1d';
}
