import { VOLTAGE_QUALITY_MAX_MS, VoltageQualitySchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import type * as v from 'valibot';
import { request } from '../client.ts';

export type VoltageQuality = v.InferOutput<typeof VoltageQualitySchema>;

export interface QualityRange {
  from: number;
  to: number;
}

export function getVoltageQuality(
  id: string,
  range: QualityRange,
  signal?: AbortSignal,
): Promise<VoltageQuality> {
  return request('GET', `/devices/${encodeURIComponent(id)}/voltage-quality`, {
    query: { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() },
    schema: VoltageQualitySchema,
    signal,
    notFoundPage: false,
  });
}

export const voltageQualityQueryOptions = (id: string, range: QualityRange) =>
  queryOptions({
    queryKey: ['devices', id, 'voltage-quality', range.from, range.to],
    queryFn: ({ signal }) => getVoltageQuality(id, range, signal),
    staleTime: 60_000,
  });

/** Whether the API computes voltage quality over `range` (at most `VOLTAGE_QUALITY_MAX_MS`). */
export const qualityRangeFits = (range: QualityRange) => range.to - range.from <= VOLTAGE_QUALITY_MAX_MS;

/** Asked only for a range the API takes; a longer one is the panel's to explain, not an error. */
export function useVoltageQuality(id: string, range: QualityRange) {
  return useQuery({ ...voltageQualityQueryOptions(id, range), enabled: qualityRangeFits(range) });
}
