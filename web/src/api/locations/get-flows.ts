import { type FlowInterval, type Flows, FlowsSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export interface FlowsQuery {
  from: number;
  to: number;
  interval: FlowInterval;
}

export function getFlows(locationId: string, q: FlowsQuery, signal?: AbortSignal): Promise<Flows> {
  return request('GET', `/locations/${encodeURIComponent(locationId)}/flows`, {
    query: { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), interval: q.interval },
    schema: FlowsSchema,
    signal,
    notFoundPage: false,
  });
}

export const flowsQueryOptions = (locationId: string, q: FlowsQuery) =>
  queryOptions({
    queryKey: ['locations', locationId, 'flows', q],
    queryFn: ({ signal }) => getFlows(locationId, q, signal),
    placeholderData: keepPreviousData,
    staleTime: 30_000,
  });

export function useFlows(locationId: string, q: FlowsQuery) {
  return useQuery(flowsQueryOptions(locationId, q));
}
