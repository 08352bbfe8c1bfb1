import { type Device, DeviceSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import * as v from 'valibot';
import { request } from '../client.ts';

const DeviceListSchema = v.array(DeviceSchema);

export function getDevices(signal?: AbortSignal): Promise<Device[]> {
  return request('GET', '/devices', { schema: DeviceListSchema, signal });
}

export const devicesQueryOptions = () =>
  queryOptions({ queryKey: ['devices'], queryFn: ({ signal }) => getDevices(signal) });

export function useDevices() {
  return useQuery(devicesQueryOptions());
}
