/**
 * Chart series (docs/api.md §Telemetry): the interval is the one asked for, or the finest that keeps ≤ 2,000
 * points; past 100,000 points per series the answer is "Data range is too long.". The store answers from
 * the coarsest rollup that gives the resolution (raw only for short ranges), columnar and unreshaped. With
 * `points`, an answer of more rows than that is reduced to the screen after the store answered
 * (`reduceSeries`: exact extremes per pixel column, gaps kept).
 */
import {
  type ChartInterval,
  chooseInterval,
  isQueryableParam,
  isRangeTooLong,
  MESSAGES,
  type Reduction,
  reduceSeries,
} from '@kilowatch/core';
import {
  type QuerySource,
  type SeriesQuery,
  type SeriesResult,
  type Stat,
  seriesOfMany,
  type TelemetryStore,
} from '@kilowatch/tsdb';
import { ValidationError } from '../errors.ts';
import { type DeviceContext, type Range, rangeTooLong } from './context.ts';

export interface SeriesRequest extends Range {
  params: readonly string[];
  interval?: ChartInterval;
  stats?: readonly Stat[];
  /** The most points the client draws per series (its plot width in device pixels). */
  points?: number;
}

/** A store's series answer, reduced to the screen when `points` asked it (`reduced` then says so). */
export type SeriesAnswer = SeriesResult & { reduced?: Reduction };

function toScreen(result: SeriesResult, points: number | undefined): SeriesAnswer {
  return points === undefined ? result : reduceSeries(result, points);
}

export function checkParams(
  params: readonly string[],
  field = 'params',
  message: string = MESSAGES.selectParameter,
): void {
  if (params.length === 0 || !params.every(isQueryableParam))
    throw new ValidationError({ [field]: [message] }, message);
}

/** The interval a series request resolves to, or 400 when the range is too long for it. */
export function resolveInterval(range: Range, interval?: ChartInterval): ChartInterval {
  const chosen = interval ?? chooseInterval(range.from, range.to);
  if (isRangeTooLong(range.from, range.to, chosen)) throw rangeTooLong();
  return chosen;
}

function seriesQuery(ctx: DeviceContext, req: SeriesRequest, source?: QuerySource): SeriesQuery {
  checkParams(req.params);
  return {
    deviceKey: ctx.deviceKey,
    params: req.params,
    from: req.from,
    to: req.to,
    interval: resolveInterval(req, req.interval),
    stats: req.stats && req.stats.length > 0 ? req.stats : ['avg', 'min', 'max'],
    tz: ctx.tz,
    ...(source ? { source } : {}),
  };
}

export async function seriesFor(
  store: TelemetryStore,
  ctx: DeviceContext,
  req: SeriesRequest,
  source?: QuerySource,
): Promise<SeriesAnswer> {
  return toScreen(await store.series(seriesQuery(ctx, req, source)), req.points);
}

/** Several devices' series (a comparison's members), read together where the store can. */
export async function seriesForMany(
  store: TelemetryStore,
  members: readonly { ctx: DeviceContext; req: SeriesRequest }[],
  source?: QuerySource,
): Promise<SeriesAnswer[]> {
  const results = await seriesOfMany(
    store,
    members.map((m) => seriesQuery(m.ctx, m.req, source)),
  );
  return results.map((r, i) => toScreen(r, members[i]!.req.points));
}
