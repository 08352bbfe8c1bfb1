/** Saved comparisons (API.md §Telemetry): list, create, change, delete. */
import { type Comparison, type ComparisonRequest, ComparisonSchema } from '@kilowatch/core';
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as v from 'valibot';
import { request } from '../client.ts';

export type { Comparison, ComparisonRequest };

const ComparisonListSchema = v.array(ComparisonSchema);

export function getComparisons(signal?: AbortSignal): Promise<Comparison[]> {
  return request('GET', '/comparisons', { schema: ComparisonListSchema, signal });
}

export const comparisonsQueryOptions = () =>
  queryOptions({ queryKey: ['comparisons'], queryFn: ({ signal }) => getComparisons(signal) });

export function useComparisons() {
  return useQuery(comparisonsQueryOptions());
}

export function createComparison(body: ComparisonRequest): Promise<Comparison> {
  return request('POST', '/comparisons', { body, schema: ComparisonSchema });
}

export function updateComparison(id: number, body: ComparisonRequest): Promise<Comparison> {
  return request('PUT', `/comparisons/${id}`, { body, schema: ComparisonSchema, notFoundPage: false });
}

export function deleteComparison(id: number): Promise<void> {
  return request('DELETE', `/comparisons/${id}`, { notFoundPage: false });
}

/** Create (no id) or change (with id); the list is refreshed either way. */
export function useSaveComparison() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id?: number; body: ComparisonRequest }) =>
      id === undefined ? createComparison(body) : updateComparison(id, body),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['comparisons'] }),
  });
}

export function useDeleteComparison() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => deleteComparison(id),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['comparisons'] }),
  });
}
