import { LatestSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

/**
 * A device's newest values as the client holds them: the endpoint's answer (core's LatestSchema), into which
 * the hub merges live readings, whose values may be null.
 */
export interface Latest {
  ts: number | null;
  values: Record<string, number | null>;
}

export function getLatest(id: string, signal?: AbortSignal): Promise<Latest> {
  return request('GET', `/devices/${encodeURIComponent(id)}/latest`, {
    schema: LatestSchema,
    signal,
    notFoundPage: false,
  });
}

export const latestQueryKey = (id: string) => ['devices', id, 'latest'] as const;

export const latestQueryOptions = (id: string) =>
  queryOptions({ queryKey: latestQueryKey(id), queryFn: ({ signal }) => getLatest(id, signal) });

export function useLatest(id: string) {
  return useQuery(latestQueryOptions(id));
}
