/**
 * A live reading appended to a cached series: each parameter's avg/min/max column takes the reading's value,
 * and an all-phase name (`pave`, `vave`) the phases combined by core's rule, as the stores combine them, so a
 * summed view keeps drawing live instead of showing a gap.
 */
import { combinedValue } from '@kilowatch/core';

type Column = (number | null)[] | undefined;

export interface LiveSeries {
  t: number[];
  series: Record<string, { avg?: Column; min?: Column; max?: Column }>;
}

/** The series with the reading appended, or null when the reading is not newer than its last point. */
export function appendReading<S extends LiveSeries>(
  data: S,
  ts: number,
  values: Readonly<Record<string, number | null>>,
): S | null {
  const last = data.t[data.t.length - 1];
  if (last !== undefined && ts <= last) return null;
  const series: LiveSeries['series'] = {};
  for (const [param, cols] of Object.entries(data.series)) {
    const value = values[param] ?? combinedValue(param, values) ?? null;
    series[param] = {
      avg: cols.avg ? [...cols.avg, value] : undefined,
      min: cols.min ? [...cols.min, value] : undefined,
      max: cols.max ? [...cols.max, value] : undefined,
    };
  }
  return { ...data, t: [...data.t, ts], series };
}
