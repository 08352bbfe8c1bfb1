import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';
import { type Latest, LatestSchema } from '../schemas.ts';

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
