/**
 * Picking a chart resolution (docs/api.md §Telemetry): the finest interval that keeps a series at most 2,000
 * points when none is asked for, and the 100,000-point guard ("Data range is too long.").
 */
import { DAY_MS, MINUTE_MS } from '../time.ts';

export type ChartInterval = 'raw' | '15m' | '30m' | '1h' | '1d';

/** Nominal spacing used to count points; raw readings are taken to arrive once a minute. */
export const NOMINAL_STEP_MS: Record<ChartInterval, number> = {
  raw: MINUTE_MS,
  '15m': 15 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '1h': 60 * MINUTE_MS,
  '1d': DAY_MS,
};

export const AUTO_MAX_POINTS = 2_000;
export const MAX_POINTS_PER_SERIES = 100_000;
export const DATA_RANGE_TOO_LONG = 'Data range is too long.';

const ORDER: readonly ChartInterval[] = ['raw', '15m', '30m', '1h', '1d'];

export function pointCount(from: number, to: number, interval: ChartInterval): number {
  return Math.ceil(Math.max(0, to - from) / NOMINAL_STEP_MS[interval]);
}

/** The finest interval with at most `maxPoints` points over [from, to). */
export function chooseInterval(from: number, to: number, maxPoints = AUTO_MAX_POINTS): ChartInterval {
  for (const i of ORDER) if (pointCount(from, to, i) <= maxPoints) return i;
  return '1d';
}

/** True when a series over the range at this interval would exceed the 100,000-point guard. */
export function isRangeTooLong(from: number, to: number, interval: ChartInterval): boolean {
  return pointCount(from, to, interval) > MAX_POINTS_PER_SERIES;
}
