/**
 * Heatmaps (docs/api.md §Telemetry): hourly energy (cells add up; daily energy for calendars of days) for
 * counters, hourly averages (cells average) for gauges, arranged by core `heatmapRows` in the location's
 * zone.
 */
import {
  combinedParamDef,
  fineRollupAt,
  type HeatmapKind,
  type HeatmapRow,
  heatmapRows,
  isQueryableParam,
  MESSAGES,
  paramDef,
  startOfLocalDay,
  unitOf,
} from '@kilowatch/core';
import type { EnergyInterval, QuerySource, TelemetryStore } from '@kilowatch/tsdb';
import { ValidationError } from '../errors.ts';
import { type DeviceContext, type Range, rangeTooLong } from './context.ts';

export interface HeatmapAnswer {
  kind: HeatmapKind;
  param: string;
  tz: string;
  unit: string;
  rows: HeatmapRow[];
}

/** About eleven years of hours. */
const MAX_HOURS = 100_000;

export function isCounter(param: string): boolean {
  return (paramDef(param)?.kind ?? combinedParamDef(param)?.kind) === 'counter';
}

export async function heatmapFor(
  store: TelemetryStore,
  ctx: DeviceContext,
  param: string,
  kind: HeatmapKind,
  range: Range,
  source?: QuerySource,
): Promise<HeatmapAnswer> {
  if (!isQueryableParam(param))
    throw new ValidationError({ param: [MESSAGES.selectParameter] }, MESSAGES.selectParameter);
  const from = startOfLocalDay(range.from, ctx.tz);
  const to = range.to;
  if ((to - from) / 3_600_000 > MAX_HOURS) throw rangeTooLong();
  const fine = fineRollupAt(ctx.tz, from);
  const counter = isCounter(param);
  let t: number[];
  let values: (number | null)[];
  if (counter) {
    const energy = (interval: EnergyInterval, f: number, until: number) =>
      store.energy({
        deviceKey: ctx.deviceKey,
        counters: [param],
        from: f,
        to: until,
        interval,
        tz: ctx.tz,
        events: false,
        ...(source ? { source } : {}),
      });
    // A calendar of days (monthly, yearly) from rollups adds up daily energy, one bucket a day instead of
    // 24 (a day's energy is the sum of its hours), and the hours of a last day the range ends inside.
    // From raw readings one pass gives the hours: a second would replay the history again.
    const lastDay = startOfLocalDay(to, ctx.tz);
    const days = (kind === 'monthly' || kind === 'yearly') && source !== 'raw' && lastDay > from;
    const [whole, tail] = await Promise.all([
      energy(days ? '1d' : fine, from, days ? lastDay : to),
      days && to > lastDay ? energy(fine, lastDay, to) : null,
    ]);
    t = tail ? [...whole.t, ...tail.t] : whole.t;
    values = [...(whole.energy[param] ?? []), ...(tail?.energy[param] ?? [])];
  } else {
    const s = await store.series({
      deviceKey: ctx.deviceKey,
      params: [param],
      from,
      to,
      interval: fine,
      stats: ['avg'],
      tz: ctx.tz,
      ...(source ? { source } : {}),
    });
    t = s.t;
    values = s.series[param]?.avg ?? [];
  }
  return {
    kind,
    param,
    tz: ctx.tz,
    unit: unitOf(param) ?? '',
    rows: heatmapRows(kind, t, values, ctx.tz, counter ? 'sum' : 'mean'),
  };
}
