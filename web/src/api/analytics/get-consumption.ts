import { ConsumptionSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';

export type Consumption = v.InferOutput<typeof ConsumptionSchema>;
export type ConsumptionRow = Consumption['rows'][number];
export type ConsumptionInterval = '1d' | '1mo';

export interface ConsumptionQuery {
  deviceIds: readonly number[];
  /** Epoch milliseconds. */
  from: number;
  to: number;
  interval: ConsumptionInterval;
}

export function getConsumption(q: ConsumptionQuery, signal?: AbortSignal): Promise<Consumption> {
  return request('GET', '/analytics/consumption', {
    query: {
      deviceIds: q.deviceIds.join(','),
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
      interval: q.interval,
    },
    schema: ConsumptionSchema,
    signal,
    notFoundPage: false,
  });
}

export const consumptionQueryOptions = (q: ConsumptionQuery) =>
  queryOptions({
    queryKey: ['analytics', 'consumption', q],
    queryFn: ({ signal }) => getConsumption(q, signal),
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });

export function useConsumption(q: ConsumptionQuery, enabled: boolean) {
  return useQuery({ ...consumptionQueryOptions(q), enabled });
}
