import { type DeviceOverview, DeviceOverviewSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

export function getDevice(id: string, signal?: AbortSignal): Promise<DeviceOverview> {
  return request('GET', `/devices/${encodeURIComponent(id)}`, { schema: DeviceOverviewSchema, signal });
}

export const deviceQueryOptions = (id: string) =>
  queryOptions({ queryKey: ['devices', id], queryFn: ({ signal }) => getDevice(id, signal) });

export function useDevice(id: string) {
  return useQuery(deviceQueryOptions(id));
}
