import { type ClaimedDevice, ClaimedDeviceSchema } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export interface ClaimRequest {
  mac: string;
  name: string;
  typeCode: number;
  phases: 1 | 3;
  locationId: number | null;
  /** False: the meter publishes under its device key, not its stock Tasmota topic (docs/api.md). */
  stockTopics?: boolean;
}

export function claimDevice(body: ClaimRequest): Promise<ClaimedDevice> {
  return request('POST', '/devices', { body, schema: ClaimedDeviceSchema, notFoundPage: false });
}

export function useClaimDevice() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: claimDevice,
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['devices'], exact: true }),
  });
}
