import { type EnergySummary, EnergySummarySchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export function getEnergySummary(id: string, signal?: AbortSignal): Promise<EnergySummary> {
  return request('GET', `/devices/${encodeURIComponent(id)}/energy/summary`, {
    schema: EnergySummarySchema,
    signal,
    notFoundPage: false,
  });
}

export const energySummaryQueryOptions = (id: string) =>
  queryOptions({
    queryKey: ['devices', id, 'energy', 'summary'],
    queryFn: ({ signal }) => getEnergySummary(id, signal),
    staleTime: 60_000,
    // While the meter's history is still being written the totals are partial: ask again until it is.
    refetchInterval: (q) => (q.state.data?.historyLoading ? 5_000 : false),
  });

export function useEnergySummary(id: string) {
  return useQuery(energySummaryQueryOptions(id));
}
