import { TariffStatsSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';

export type TariffStats = v.InferOutput<typeof TariffStatsSchema>;

export interface TariffStatsQuery {
  deviceId: string;
  /** ISO 8601 instants. */
  from: string;
  to: string;
}

/**
 * Energy and cost per zone and month for one tariff and one device (simulated). A tariff (or device) that
 * does not exist, or is not the user's, leads to the not-found page, as a missing device does.
 */
export function getTariffStats(id: string, q: TariffStatsQuery, signal?: AbortSignal): Promise<TariffStats> {
  return request('GET', `/tariffs/${encodeURIComponent(id)}/stats`, {
    query: { ...q },
    schema: TariffStatsSchema,
    signal,
  });
}

export const tariffStatsQueryOptions = (id: string, q: TariffStatsQuery) =>
  queryOptions({
    queryKey: ['tariffs', id, 'stats', q],
    queryFn: ({ signal }) => getTariffStats(id, q, signal),
    placeholderData: keepPreviousData,
  });

export function useTariffStats(id: string, q: TariffStatsQuery | null) {
  return useQuery({
    ...tariffStatsQueryOptions(id, q ?? { deviceId: '', from: '', to: '' }),
    enabled: q !== null,
  });
}
