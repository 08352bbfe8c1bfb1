import { ReadingsPageSchema } from '@kilowatch/core';
import { infiniteQueryOptions, useInfiniteQuery } from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';

export type ReadingsPage = v.InferOutput<typeof ReadingsPageSchema>;

export interface ReadingsQuery {
  params: readonly string[];
  from: number;
  to: number;
  limit?: number;
}

export function getReadings(
  id: string,
  q: ReadingsQuery,
  cursor: string | null,
  signal?: AbortSignal,
): Promise<ReadingsPage> {
  return request('GET', `/devices/${encodeURIComponent(id)}/readings`, {
    query: {
      params: q.params.join(','),
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
      limit: q.limit ?? 500,
      cursor,
    },
    schema: ReadingsPageSchema,
    signal,
    notFoundPage: false,
  });
}

/** The data log pages through `/readings` by cursor. */
export const readingsQueryOptions = (id: string, q: ReadingsQuery) =>
  infiniteQueryOptions({
    queryKey: ['devices', id, 'readings', q],
    queryFn: ({ pageParam, signal }) => getReadings(id, q, pageParam, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });

export function useReadings(id: string, q: ReadingsQuery, enabled: boolean) {
  return useInfiniteQuery({ ...readingsQueryOptions(id, q), enabled });
}
