import { type Location, LocationSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export function getLocation(id: string, signal?: AbortSignal): Promise<Location> {
  return request('GET', `/locations/${encodeURIComponent(id)}`, { schema: LocationSchema, signal });
}

export const locationQueryOptions = (id: string) =>
  queryOptions({ queryKey: ['locations', id], queryFn: ({ signal }) => getLocation(id, signal) });

export function useLocation(id: string, enabled = true) {
  return useQuery({ ...locationQueryOptions(id), enabled });
}
