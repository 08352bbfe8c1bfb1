/**
 * Picking a chart resolution (docs/api.md §Telemetry): the finest interval that keeps a series at most 2,000
 * points when none is asked for, and the 100,000-point guard ("Data range is too long.").
 */
import { NOMINAL_STEP_MS, SERIES_INTERVALS, type SeriesInterval } from '../buckets/intervals.ts';

export type ChartInterval = SeriesInterval;

export const AUTO_MAX_POINTS = 2_000;
export const MAX_POINTS_PER_SERIES = 100_000;
export const DATA_RANGE_TOO_LONG = 'Data range is too long.';

export function pointCount(from: number, to: number, interval: ChartInterval): number {
  return Math.ceil(Math.max(0, to - from) / NOMINAL_STEP_MS[interval]);
}

/** The finest interval with at most `maxPoints` points over [from, to). */
export function chooseInterval(from: number, to: number, maxPoints = AUTO_MAX_POINTS): ChartInterval {
  for (const i of SERIES_INTERVALS) if (pointCount(from, to, i) <= maxPoints) return i;
  return '1d';
}

/** True when a series over the range at this interval would exceed the 100,000-point guard. */
export function isRangeTooLong(from: number, to: number, interval: ChartInterval): boolean {
  return pointCount(from, to, interval) > MAX_POINTS_PER_SERIES;
}
