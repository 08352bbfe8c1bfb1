import { type Tariff, TariffSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export function getTariff(locationId: string, tariffId: string, signal?: AbortSignal): Promise<Tariff> {
  return request(
    'GET',
    `/locations/${encodeURIComponent(locationId)}/tariffs/${encodeURIComponent(tariffId)}`,
    { schema: TariffSchema, signal },
  );
}

export const tariffQueryOptions = (locationId: string, tariffId: string) =>
  queryOptions({
    queryKey: ['locations', locationId, 'tariffs', tariffId],
    queryFn: ({ signal }) => getTariff(locationId, tariffId, signal),
  });

export function useTariff(locationId: string, tariffId: string, enabled = true) {
  return useQuery({ ...tariffQueryOptions(locationId, tariffId), enabled });
}
