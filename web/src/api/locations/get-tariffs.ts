import { type Tariff, TariffSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import * as v from 'valibot';
import { request } from '../client.ts';

const TariffListSchema = v.array(TariffSchema);

/** The tariff versions of a location. */
export function getTariffs(locationId: string, signal?: AbortSignal): Promise<Tariff[]> {
  return request('GET', `/locations/${encodeURIComponent(locationId)}/tariffs`, {
    schema: TariffListSchema,
    signal,
  });
}

export const tariffsQueryOptions = (locationId: string) =>
  queryOptions({
    queryKey: ['locations', locationId, 'tariffs'],
    queryFn: ({ signal }) => getTariffs(locationId, signal),
  });

export function useTariffs(locationId: string, enabled = true) {
  return useQuery({ ...tariffsQueryOptions(locationId), enabled });
}
