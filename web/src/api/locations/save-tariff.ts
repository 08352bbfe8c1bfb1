import { type Tariff, type TariffRequest, TariffSchema } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request, retryShed } from '../client.ts';

/** Adds a tariff version to a location when `tariffId` is null, else replaces that version. */
export function saveTariff(
  locationId: string,
  tariffId: string | null,
  body: TariffRequest,
): Promise<Tariff> {
  const base = `/locations/${encodeURIComponent(locationId)}/tariffs`;
  return tariffId === null
    ? request('POST', base, { body, schema: TariffSchema })
    : request('PUT', `${base}/${encodeURIComponent(tariffId)}`, { body, schema: TariffSchema });
}

export function useSaveTariff(locationId: string, tariffId: string | null) {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: (body: TariffRequest) => saveTariff(locationId, tariffId, body),
    onSuccess: (tariff) => {
      qc.setQueryData(['locations', locationId, 'tariffs', String(tariff.id)], tariff);
      void qc.invalidateQueries({ queryKey: ['locations', locationId, 'tariffs'], exact: true });
      void qc.invalidateQueries({ queryKey: ['devices'] });
    },
  });
}
