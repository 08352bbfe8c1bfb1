import { type SeriesBlock, SeriesBlockSchema, type SeriesInterval } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export type { SeriesInterval };

export interface SeriesQuery {
  params: readonly string[];
  /** Epoch milliseconds. */
  from: number;
  to: number;
  interval?: SeriesInterval;
  stats?: readonly ('avg' | 'min' | 'max')[];
  /** The most points the chart draws (its plot width in device pixels, `plotPoints`). */
  points?: number;
  /** The range ends now: live hub readings are appended to the cached answer. */
  live?: boolean;
}

export function getSeries(id: string, q: SeriesQuery, signal?: AbortSignal): Promise<SeriesBlock> {
  return request('GET', `/devices/${encodeURIComponent(id)}/series`, {
    query: {
      params: q.params.join(','),
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
      interval: q.interval,
      stats: q.stats?.join(','),
      points: q.points,
    },
    schema: SeriesBlockSchema,
    signal,
    notFoundPage: false,
  });
}

export const seriesQueryOptions = (id: string, q: SeriesQuery) =>
  queryOptions({
    queryKey: ['devices', id, 'series', q],
    queryFn: ({ signal }) => getSeries(id, q, signal),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

/** `enabled: false` holds the request back (until the chart's width is known). */
export function useSeries(id: string, q: SeriesQuery, enabled = true) {
  return useQuery({ ...seriesQueryOptions(id, q), enabled });
}
