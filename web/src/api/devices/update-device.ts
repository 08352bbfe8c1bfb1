import { type DeviceOverview, DeviceOverviewSchema, type DeviceRole } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export interface DeviceUpdate {
  name: string;
  friendlyName: string;
  locationId: string | number | null;
  tariffId: string | number | null;
  /** Local date `YYYY-MM-DD`. */
  billingStart: string;
  billingMonths: number | null;
  /** Kept when omitted. */
  role?: DeviceRole;
}

export function updateDevice(id: string, body: DeviceUpdate): Promise<DeviceOverview> {
  return request('PUT', `/devices/${encodeURIComponent(id)}`, { body, schema: DeviceOverviewSchema });
}

export function useUpdateDevice(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: DeviceUpdate) => updateDevice(id, body),
    onSuccess: (device) => {
      qc.setQueryData(['devices', id], device);
      void qc.invalidateQueries({ queryKey: ['devices'], exact: true });
    },
  });
}
