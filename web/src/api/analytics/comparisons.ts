/** Saved comparisons (docs/api.md §Telemetry): list, create, change, delete. */
import { type Comparison, type ComparisonRequest, ComparisonSchema } from '@kilowatch/core';
import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as v from 'valibot';
import { request, retryShed } from '../client.ts';

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
    ...retryShed,
    mutationFn: ({ id, body }: { id?: number; body: ComparisonRequest }) =>
      id === undefined ? createComparison(body) : updateComparison(id, body),
    // The list only: a comparison's data is keyed by its members and refetched when they change.
    onSuccess: () => qc.invalidateQueries({ queryKey: ['comparisons'], exact: true }),
  });
}

export function useDeleteComparison() {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: (id: number) => deleteComparison(id),
    onSuccess: async (_done, id) => {
      // Never ask for the data of a comparison that no longer exists: its view leaves the list at once,
      // and its cached data goes only once the list is fetched again (a query removed under a view still
      // shown is asked for again at its next render).
      await qc.cancelQueries({ queryKey: ['comparisons', id] });
      qc.setQueryData<Comparison[]>(['comparisons'], (list) => list?.filter((c) => c.id !== id));
      await qc.invalidateQueries({ queryKey: ['comparisons'], exact: true });
      qc.removeQueries({ queryKey: ['comparisons', id] });
    },
  });
}
