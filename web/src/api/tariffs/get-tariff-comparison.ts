import { TariffComparisonSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';
import type { TariffStatsQuery } from './get-tariff-stats.ts';

export type TariffComparison = v.InferOutput<typeof TariffComparisonSchema>;

/** Every tariff group priced on the same hourly energy of a device, cheapest first (simulated). */
export function getTariffComparison(q: TariffStatsQuery, signal?: AbortSignal): Promise<TariffComparison> {
  return request('GET', '/tariffs/compare', {
    query: { ...q },
    schema: TariffComparisonSchema,
    signal,
    notFoundPage: false,
  });
}

export const tariffComparisonQueryOptions = (q: TariffStatsQuery) =>
  queryOptions({
    queryKey: ['tariffs', 'compare', q],
    queryFn: ({ signal }) => getTariffComparison(q, signal),
    placeholderData: keepPreviousData,
  });

export function useTariffComparison(q: TariffStatsQuery | null) {
  return useQuery({
    ...tariffComparisonQueryOptions(q ?? { deviceId: '', from: '', to: '' }),
    enabled: q !== null,
  });
}
