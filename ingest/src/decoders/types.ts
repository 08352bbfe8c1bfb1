import type { DeviceStatus, Reading } from '@kilowatch/core';

/** Why a message was turned away; each reason has its own counter and dead-letter entries. */
export type RejectReason =
  | 'invalid-json'
  | 'oversized'
  | 'unknown-topic'
  | 'invalid-device-key'
  | 'invalid-payload'
  | 'unknown-parameter'
  | 'out-of-range'
  | 'not-finite'
  | 'timestamp-too-old'
  | 'timestamp-in-future'
  | 'store-rejected';

export const REJECT_REASONS: readonly RejectReason[] = [
  'invalid-json',
  'oversized',
  'unknown-topic',
  'invalid-device-key',
  'invalid-payload',
  'unknown-parameter',
  'out-of-range',
  'not-finite',
  'timestamp-too-old',
  'timestamp-in-future',
  'store-rejected',
];

export interface StatusUpdate {
  online: boolean;
  status: DeviceStatus;
  rssi?: number;
}

export type Decoded =
  | { kind: 'readings'; format: 'native' | 'tasmota' | 'shelly'; deviceKey: string; readings: Reading[] }
  | { kind: 'status'; deviceKey: string; update: StatusUpdate }
  /** A well-formed message that carries nothing Kilowatch stores (a Shelly `NotifyEvent`, a sensor-only Tasmota frame). */
  | { kind: 'ignored'; deviceKey: string; why: string }
  | { kind: 'rejected'; reason: RejectReason; detail: string; deviceKey?: string };

export interface DecodeOptions {
  /** Receiver's clock (epoch ms); timestamps more than 5 minutes ahead of it are rejected. */
  now: number;
  /** IANA zone of a device's local clock (Tasmota reports local wall time). */
  timeZoneOf?: (deviceKey: string) => string | undefined;
}

export class Rejection extends Error {
  constructor(
    readonly reason: RejectReason,
    detail: string,
  ) {
    super(detail);
  }
}
