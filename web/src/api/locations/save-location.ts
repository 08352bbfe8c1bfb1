import { type Location, type LocationRequest, LocationSchema } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request, retryShed } from '../client.ts';

/** Creates a location when `id` is null, else replaces it. */
export function saveLocation(id: string | null, body: LocationRequest): Promise<Location> {
  return id === null
    ? request('POST', '/locations', { body, schema: LocationSchema })
    : request('PUT', `/locations/${encodeURIComponent(id)}`, { body, schema: LocationSchema });
}

export function useSaveLocation(id: string | null) {
  const qc = useQueryClient();
  return useMutation({
    ...retryShed,
    mutationFn: (body: LocationRequest) => saveLocation(id, body),
    onSuccess: (location) => {
      qc.setQueryData(['locations', String(location.id)], location);
      void qc.invalidateQueries({ queryKey: ['locations'], exact: true });
      // Devices show their location's name and tariff.
      void qc.invalidateQueries({ queryKey: ['devices'] });
    },
  });
}
