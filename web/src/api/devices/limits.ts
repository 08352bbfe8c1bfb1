import { type Limits, LimitsSchema } from '@kilowatch/core';
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export function getLimits(id: string, signal?: AbortSignal): Promise<Limits> {
  return request('GET', `/devices/${encodeURIComponent(id)}/limits`, {
    schema: LimitsSchema,
    signal,
    notFoundPage: false,
  });
}

export const limitsQueryOptions = (id: string) =>
  queryOptions({ queryKey: ['devices', id, 'limits'], queryFn: ({ signal }) => getLimits(id, signal) });

export function useLimits(id: string) {
  return useQuery(limitsQueryOptions(id));
}

export function putLimits(id: string, limits: Limits): Promise<Limits> {
  return request('PUT', `/devices/${encodeURIComponent(id)}/limits`, {
    body: limits,
    schema: LimitsSchema,
    notFoundPage: false,
  });
}

export function useSaveLimits(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (limits: Limits) => putLimits(id, limits),
    onSuccess: (limits) => qc.setQueryData(['devices', id, 'limits'], limits),
  });
}
