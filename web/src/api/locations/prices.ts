import { PricesSchema } from '@kilowatch/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import * as v from 'valibot';
import { request, retryShed } from '../client.ts';

const UploadAnswerSchema = v.object({ stored: v.number(), held: v.number() });

/** The location's prices starting in [from, to) (at most two years of quarter hours). */
export function usePrices(locationId: string, range: { from: number; to: number }) {
  return useQuery({
    queryKey: ['locations', locationId, 'prices', range],
    queryFn: ({ signal }) =>
      request('GET', `/locations/${encodeURIComponent(locationId)}/prices`, {
        query: { from: new Date(range.from).toISOString(), to: new Date(range.to).toISOString() },
        schema: PricesSchema,
        signal,
        notFoundPage: false,
      }),
    staleTime: 30_000,
  });
}

/** Uploads `start,price` rows as CSV, as a user exports them from the market operator's site. */
export function useUploadPrices(locationId: string) {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: (csv: string) =>
      request('PUT', `/locations/${encodeURIComponent(locationId)}/prices`, {
        text: { body: csv, contentType: 'text/csv' },
        schema: UploadAnswerSchema,
        notFoundPage: false,
      }),
    onSuccess: () => {
      // Prices change flows' export value, the settlement and the dynamic tariff's costs.
      void qc.invalidateQueries({ queryKey: ['locations', locationId] });
      void qc.invalidateQueries({ queryKey: ['tariffs'] });
    },
  });
}
