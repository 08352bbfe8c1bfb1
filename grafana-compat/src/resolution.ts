/**
 * Picking the resolution of an answer for Grafana: the finest interval the stores keep that is no finer
 * than the panel's `intervalMs` and gives at most `maxDataPoints` points; when even the coarsest would
 * give more, consecutive buckets are merged (gauges by their statistic, energies summed) so the answer
 * never holds more than `maxDataPoints` points.
 */
import {
  ENERGY_INTERVALS as CORE_ENERGY_INTERVALS,
  SERIES_INTERVALS as CORE_SERIES_INTERVALS,
  NOMINAL_STEP_MS,
  ROLLUP_STEP_MS,
} from '@kilowatch/core';
import type { EnergyInterval, SeriesInterval, Stat } from '@kilowatch/tsdb';

/** Core's catalogue, each interval with its nominal step (raw readings count as one a minute, as the API's). */
const SERIES_STEPS: readonly [SeriesInterval, number][] = CORE_SERIES_INTERVALS.map((i) => [
  i,
  NOMINAL_STEP_MS[i],
]);
const ENERGY_STEPS: readonly [EnergyInterval, number][] = CORE_ENERGY_INTERVALS.map((i) => [
  i,
  NOMINAL_STEP_MS[i],
]);

export const SERIES_INTERVALS = SERIES_STEPS.map(([i]) => i);
export const ENERGY_INTERVALS = ENERGY_STEPS.map(([i]) => i);
/** Energy per tariff zone: whole hours (the zones' own grain), local days, local months. */
export const ZONE_INTERVALS = ['1h', '1d', '1mo'] as const satisfies readonly EnergyInterval[];

export interface Resolution {
  from: number;
  to: number;
  intervalMs: number;
  maxDataPoints: number;
}

function choose<I extends string>(steps: readonly [I, number][], r: Resolution, atLeast?: I): I {
  const start = atLeast
    ? Math.max(
        0,
        steps.findIndex(([i]) => i === atLeast),
      )
    : 0;
  const span = Math.max(0, r.to - r.from);
  for (let k = start; k < steps.length; k++) {
    const [interval, step] = steps[k]!;
    // Raw readings only when the panel wants finer than the finest rollup.
    if (interval === 'raw' && r.intervalMs >= ROLLUP_STEP_MS['15m']) continue;
    if (interval !== 'raw' && step < r.intervalMs && k < steps.length - 1) continue;
    if (Math.ceil(span / step) <= r.maxDataPoints) return interval;
  }
  return steps[steps.length - 1]![0];
}

/** The series interval for a panel; `atLeast` is the finest the query allows (its `interval` payload). */
export function seriesInterval(r: Resolution, atLeast?: SeriesInterval): SeriesInterval {
  return choose(SERIES_STEPS, r, atLeast);
}

export function energyInterval(r: Resolution, atLeast?: EnergyInterval): EnergyInterval {
  return choose(ENERGY_STEPS, r, atLeast);
}

export type Merge = Stat | 'sum';

/**
 * At most `max` points: consecutive points merged in equal runs, each run stamped with its first time.
 * A run of gaps stays a gap.
 */
export function thin(
  t: readonly number[],
  values: readonly (number | null | undefined)[],
  max: number,
  merge: Merge,
): { t: number[]; values: (number | null)[] } {
  if (t.length <= max) return { t: [...t], values: t.map((_, i) => values[i] ?? null) };
  const run = Math.ceil(t.length / max);
  const outT: number[] = [];
  const outV: (number | null)[] = [];
  for (let i = 0; i < t.length; i += run) {
    let acc: number | null = null;
    let n = 0;
    for (let j = i; j < Math.min(i + run, t.length); j++) {
      const x = values[j];
      if (x === null || x === undefined) continue;
      n++;
      if (acc === null) acc = x;
      else if (merge === 'min') acc = Math.min(acc, x);
      else if (merge === 'max') acc = Math.max(acc, x);
      else acc += x;
    }
    outT.push(t[i]!);
    outV.push(acc === null ? null : merge === 'avg' ? acc / n : acc);
  }
  return { t: outT, values: outV };
}
