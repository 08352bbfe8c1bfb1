import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';
import { type Device, DeviceListSchema } from '../schemas.ts';

export function getDevices(signal?: AbortSignal): Promise<Device[]> {
  return request('GET', '/devices', { schema: DeviceListSchema, signal });
}

export const devicesQueryOptions = () =>
  queryOptions({ queryKey: ['devices'], queryFn: ({ signal }) => getDevices(signal) });

export function useDevices() {
  return useQuery(devicesQueryOptions());
}
