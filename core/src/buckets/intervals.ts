/**
 * The interval catalogue (docs/api.md §Telemetry): which bucket sizes a series, an energy answer and the
 * rollups come in, and how long a step of each is. Fixed intervals are aligned to the UTC epoch; `1d` and
 * `1mo` are local days and months of the location's zone (`calendar.ts`).
 */
import { DAY_MS, MINUTE_MS } from '../time.ts';

/** Fixed-length rollup resolutions the stores keep current. */
export const ROLLUP_INTERVALS = ['15m', '30m', '1h'] as const;
export type RollupInterval = (typeof ROLLUP_INTERVALS)[number];

/** Series resolutions, finest first: raw readings, the rollups, local days. */
export const SERIES_INTERVALS = ['raw', ...ROLLUP_INTERVALS, '1d'] as const;
export type SeriesInterval = (typeof SERIES_INTERVALS)[number];

/** Energy resolutions, finest first: the rollups, local days, local months. */
export const ENERGY_INTERVALS = [...ROLLUP_INTERVALS, '1d', '1mo'] as const;
export type EnergyInterval = (typeof ENERGY_INTERVALS)[number];

/** Intervals counted in the location's calendar, with their calendar unit. */
export const CALENDAR_UNIT_OF = { '1d': 'day', '1mo': 'month' } as const;
export type CalendarInterval = keyof typeof CALENDAR_UNIT_OF;

/** Exact step of each rollup interval. */
export const ROLLUP_STEP_MS: Readonly<Record<RollupInterval, number>> = {
  '15m': 15 * MINUTE_MS,
  '30m': 30 * MINUTE_MS,
  '1h': 60 * MINUTE_MS,
};

/**
 * Nominal spacing of every interval, for counting points: raw readings are taken to arrive once a minute,
 * a day is 24 hours and a month 30 days (a DST day or a month's real length never matters to a count).
 */
export const NOMINAL_STEP_MS: Readonly<Record<SeriesInterval | EnergyInterval, number>> = {
  raw: MINUTE_MS,
  ...ROLLUP_STEP_MS,
  '1d': DAY_MS,
  '1mo': 30 * DAY_MS,
};

export function isRollupInterval(interval: string): interval is RollupInterval {
  return Object.hasOwn(ROLLUP_STEP_MS, interval);
}

export function isCalendarInterval(interval: string): interval is CalendarInterval {
  return Object.hasOwn(CALENDAR_UNIT_OF, interval);
}
