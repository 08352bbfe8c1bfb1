import { type EnergyInterval, type EnergySeries, EnergySeriesSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export type { EnergyInterval };

export interface EnergyQuery {
  from: number;
  to: number;
  interval: EnergyInterval;
}

export function getEnergy(id: string, q: EnergyQuery, signal?: AbortSignal): Promise<EnergySeries> {
  return request('GET', `/devices/${encodeURIComponent(id)}/energy`, {
    query: { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), interval: q.interval },
    schema: EnergySeriesSchema,
    signal,
    notFoundPage: false,
  });
}

export const energyQueryOptions = (id: string, q: EnergyQuery) =>
  queryOptions({
    queryKey: ['devices', id, 'energy', 'buckets', q],
    queryFn: ({ signal }) => getEnergy(id, q, signal),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

export function useEnergy(id: string, q: EnergyQuery) {
  return useQuery(energyQueryOptions(id, q));
}
