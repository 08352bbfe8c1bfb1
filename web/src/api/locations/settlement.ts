import { type SettlementAnswer, SettlementSchema } from '@kilowatch/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

/** A location's prosumer settlement per billing period in [from, to) (docs/api.md §Prosumer settlement). */
export function getSettlement(
  locationId: string,
  range: { from: number; to: number },
  signal?: AbortSignal,
): Promise<SettlementAnswer> {
  return request('GET', `/locations/${encodeURIComponent(locationId)}/settlement`, {
    query: { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() },
    schema: SettlementSchema,
    signal,
    notFoundPage: false,
  });
}

export function useSettlement(locationId: string, range: { from: number; to: number }, enabled: boolean) {
  return useQuery({
    queryKey: ['locations', locationId, 'settlement', range],
    queryFn: ({ signal }) => getSettlement(locationId, range, signal),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
    enabled,
  });
}
