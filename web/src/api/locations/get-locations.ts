import { type Location, LocationSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import * as v from 'valibot';
import { request } from '../client.ts';

const LocationListSchema = v.array(LocationSchema);

export function getLocations(signal?: AbortSignal): Promise<Location[]> {
  return request('GET', '/locations', { schema: LocationListSchema, signal });
}

export const locationsQueryOptions = () =>
  queryOptions({ queryKey: ['locations'], queryFn: ({ signal }) => getLocations(signal) });

export function useLocations() {
  return useQuery(locationsQueryOptions());
}
