import { type Heatmap, HeatmapSchema } from '@kilowatch/core';
import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export type HeatmapKind = Heatmap['kind'];

export interface HeatmapQuery {
  param: string;
  kind: HeatmapKind;
  /** Epoch milliseconds. */
  from: number;
  to: number;
}

export function getHeatmap(deviceId: number, q: HeatmapQuery, signal?: AbortSignal): Promise<Heatmap> {
  return request('GET', `/devices/${deviceId}/heatmap`, {
    query: {
      param: q.param,
      kind: q.kind,
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
    },
    schema: HeatmapSchema,
    signal,
    notFoundPage: false,
  });
}

export const heatmapQueryOptions = (deviceId: number, q: HeatmapQuery) =>
  queryOptions({
    queryKey: ['devices', String(deviceId), 'heatmap', q],
    queryFn: ({ signal }) => getHeatmap(deviceId, q, signal),
    placeholderData: keepPreviousData,
    staleTime: 60_000,
  });

export function useHeatmap(deviceId: number | null, q: HeatmapQuery) {
  return useQuery({ ...heatmapQueryOptions(deviceId ?? 0, q), enabled: deviceId !== null });
}
