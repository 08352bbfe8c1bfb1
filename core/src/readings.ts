/**
 * The normalized reading and the native MQTT message schemas (docs/api.md §MQTT). Every decoder in ingest
 * produces `Reading`s; every store writes them.
 */
import * as v from 'valibot';
import { DEVICE_KEY_PATTERN } from './devices.ts';

/** One meter reading after decoding: UTC epoch milliseconds and catalogue parameter values. */
export interface Reading {
  deviceKey: string;
  ts: number;
  seq?: number;
  values: Record<string, number>;
}

export const DeviceKeySchema = v.pipe(
  v.string(),
  v.regex(DEVICE_KEY_PATTERN, 'device key must be 12 lowercase hex digits'),
);

/** Earliest timestamp accepted from a meter (guards against unset RTCs reporting 1970). */
export const MIN_READING_TS = Date.UTC(2000, 0, 1);
/** How far ahead of the receiver's clock a meter's timestamp may run. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

export const TimestampSchema = v.union([
  v.pipe(v.number(), v.integer(), v.minValue(MIN_READING_TS, 'timestamp before 2000')),
  v.pipe(
    v.string(),
    v.isoTimestamp('timestamp must be ISO 8601 with a zone'),
    v.transform((s) => Date.parse(s)),
  ),
]);

/** `{"ts": ..., "seq"?: n, "values": {...}}` — values are checked against the catalogue separately. */
export const NativeReadingSchema = v.object({
  ts: TimestampSchema,
  seq: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  values: v.record(v.string(), v.number()),
});
export type NativeReading = v.InferOutput<typeof NativeReadingSchema>;

export const NativePayloadSchema = v.union([
  NativeReadingSchema,
  v.pipe(v.array(NativeReadingSchema), v.minLength(1), v.maxLength(10_000)),
]);

/** `kilowatch/meters/<deviceKey>/status` and the last will. */
export const StatusMessageSchema = v.object({
  online: v.boolean(),
  rssi: v.optional(v.pipe(v.number(), v.minValue(-150), v.maxValue(0))),
});
export type StatusMessage = v.InferOutput<typeof StatusMessageSchema>;

/** MQTT topics of the contract. */
export const TOPICS = {
  readings: (deviceKey: string) => `kilowatch/meters/${deviceKey}/readings`,
  status: (deviceKey: string) => `kilowatch/meters/${deviceKey}/status`,
  live: (deviceKey: string) => `kilowatch/live/${deviceKey}`,
  /** Internal: a message of the device that ingest refused (bad payload), for the connection route. */
  rejected: (deviceKey: string) => `kilowatch/live/${deviceKey}/rejected`,
  tasmotaSensor: (deviceKey: string) => `tele/${deviceKey}/SENSOR`,
  shellyRpc: (deviceKey: string) => `${deviceKey}/events/rpc`,
} as const;
