import { useMutation, useQueryClient } from '@tanstack/react-query';
import * as v from 'valibot';
import { request } from '../client.ts';
import { DeviceSchema } from '../schemas.ts';

export interface ClaimRequest {
  mac: string;
  name: string;
  typeCode: number;
  phases: 1 | 3;
  locationId: number | null;
}

/** The broker account a claimed meter connects with (docs/api.md §Devices): the password appears only here. */
export const MqttCredentialsSchema = v.object({
  host: v.string(),
  port: v.number(),
  tls: v.optional(v.boolean(), false),
  username: v.optional(v.nullable(v.string()), null),
  password: v.optional(v.nullable(v.string()), null),
  topics: v.optional(
    v.object({
      native: v.optional(v.string()),
      tasmota: v.optional(v.string()),
      shelly: v.optional(v.string()),
    }),
    {},
  ),
});
export type MqttCredentials = v.InferOutput<typeof MqttCredentialsSchema>;

export const ClaimedDeviceSchema = v.object({
  ...DeviceSchema.entries,
  deviceKey: v.optional(v.string()),
  mqtt: v.optional(v.nullable(MqttCredentialsSchema), null),
});
export type ClaimedDevice = v.InferOutput<typeof ClaimedDeviceSchema>;

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
