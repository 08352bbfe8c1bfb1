/** The periods a location's flows are shown for (the Energy view, the dashboard's tiles). */
import { type FlowInterval, startOfLocalDay, startOfLocalMonth, startOfLocalYear } from '@kilowatch/core';

export const ENERGY_PERIODS = ['today', 'month', 'year'] as const;
export type EnergyPeriod = (typeof ENERGY_PERIODS)[number];

/** The period so far, in the location's zone, and the interval it is drawn in. */
export function periodRange(
  period: EnergyPeriod,
  now: number,
  tz: string,
): { from: number; to: number; interval: FlowInterval } {
  if (period === 'today') return { from: startOfLocalDay(now, tz), to: now, interval: '1h' };
  if (period === 'month') return { from: startOfLocalMonth(now, tz), to: now, interval: '1d' };
  return { from: startOfLocalYear(now, tz), to: now, interval: '1mo' };
}
