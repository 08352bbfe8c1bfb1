/**
 * Heatmaps (API.md §Telemetry): hourly energy (cells add up) for counters, hourly averages (cells average)
 * for gauges, arranged by core `heatmapRows` in the location's zone.
 */
import {
  combinedParamDef,
  type HeatmapKind,
  type HeatmapRow,
  heatmapRows,
  isQueryableParam,
  MESSAGES,
  paramDef,
  startOfLocalDay,
  unitOf,
} from '@kilowatch/core';
import type { QuerySource, TelemetryStore } from '@kilowatch/tsdb';
import { ValidationError } from '../errors.ts';
import { type DeviceContext, type Range, rangeTooLong } from './context.ts';
import { fineInterval } from './energy.ts';

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
  const interval = fineInterval(ctx.tz, from);
  let t: number[];
  let values: (number | null)[];
  const counter = isCounter(param);
  if (counter) {
    const e = await store.energy({
      deviceKey: ctx.deviceKey,
      counters: [param],
      from,
      to,
      interval,
      tz: ctx.tz,
      ...(source ? { source } : {}),
    });
    t = e.t;
    values = e.energy[param] ?? [];
  } else {
    const s = await store.series({
      deviceKey: ctx.deviceKey,
      params: [param],
      from,
      to,
      interval,
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
