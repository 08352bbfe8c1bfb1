import { ComparisonDataSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';

export type ComparisonData = v.InferOutput<typeof ComparisonDataSchema>;

export interface ComparisonDataQuery {
  /** Epoch milliseconds. */
  from: number;
  to: number;
  /** Also each bucket's min and max (bands on long ranges). */
  bands?: boolean;
  /** The most points the chart draws (its plot width in device pixels, `plotPoints`). */
  points?: number;
}

export function getComparisonData(
  id: number,
  q: ComparisonDataQuery,
  signal?: AbortSignal,
): Promise<ComparisonData> {
  return request('GET', `/comparisons/${id}/data`, {
    query: {
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
      stats: q.bands ? 'avg,min,max' : undefined,
      points: q.points,
    },
    schema: ComparisonDataSchema,
    signal,
    notFoundPage: false,
  });
}

export const comparisonDataQueryOptions = (id: number, q: ComparisonDataQuery, version: string) =>
  queryOptions({
    // The members are part of the key: an edited comparison is fetched again.
    queryKey: ['comparisons', id, 'data', q, version],
    queryFn: ({ signal }) => getComparisonData(id, q, signal),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

export function useComparisonData(id: number, q: ComparisonDataQuery | null, version: string) {
  return useQuery({
    ...comparisonDataQueryOptions(id, q ?? { from: 0, to: 0 }, version),
    enabled: q !== null,
  });
}
