import { DEVICE_KEY_PATTERN } from '@kilowatch/core';
import { decodeNativeReadings, decodeNativeStatus } from './native.ts';
import { decodeShellyRpc } from './shelly.ts';
import { decodeTasmotaSensor } from './tasmota.ts';
import { type Decoded, type DecodeOptions, Rejection } from './types.ts';

export {
  type Decoded,
  type DecodeOptions,
  REJECT_REASONS,
  type RejectReason,
  type StatusUpdate,
} from './types.ts';

/** Largest payload accepted (256 KiB). */
export const MAX_PAYLOAD_BYTES = 256 * 1024;

type Route = { format: 'native-readings' | 'native-status' | 'tasmota' | 'shelly'; deviceKey: string };

/** Which decoder a topic belongs to, and the device key it names. */
export function routeTopic(topic: string): Route | null {
  const parts = topic.split('/');
  if (parts.length === 4 && parts[0] === 'kilowatch' && parts[1] === 'meters') {
    if (parts[3] === 'readings') return { format: 'native-readings', deviceKey: parts[2] as string };
    if (parts[3] === 'status') return { format: 'native-status', deviceKey: parts[2] as string };
    return null;
  }
  if (parts.length === 3 && parts[0] === 'tele' && parts[2] === 'SENSOR') {
    return { format: 'tasmota', deviceKey: parts[1] as string };
  }
  if (parts.length === 3 && parts[1] === 'events' && parts[2] === 'rpc') {
    // Stock Shelly firmware prefixes its topics `<model id>-<mac>` (`shellypro3em-0cb815fc11a4`).
    const prefix = parts[0] as string;
    const stock = /^[a-z0-9]+-([0-9a-f]{12})$/.exec(prefix);
    return { format: 'shelly', deviceKey: stock ? (stock[1] as string) : prefix };
  }
  return null;
}

/**
 * Turns one MQTT message into normalized readings, a status update, or a rejection with its reason.
 * Never throws: every failure is a value.
 */
export function decodeMessage(topic: string, payload: Uint8Array | string, opts: DecodeOptions): Decoded {
  const size = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength;
  if (size > MAX_PAYLOAD_BYTES) {
    return {
      kind: 'rejected',
      reason: 'oversized',
      detail: `payload of ${size} bytes exceeds ${MAX_PAYLOAD_BYTES}`,
    };
  }
  const route = routeTopic(topic);
  if (!route) return { kind: 'rejected', reason: 'unknown-topic', detail: `no decoder for topic "${topic}"` };
  const { deviceKey } = route;
  if (!DEVICE_KEY_PATTERN.test(deviceKey)) {
    return {
      kind: 'rejected',
      reason: 'invalid-device-key',
      detail: `device key "${deviceKey.slice(0, 64)}" is not 12 lowercase hex digits`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8'),
    );
  } catch (e) {
    return { kind: 'rejected', reason: 'invalid-json', detail: (e as Error).message, deviceKey };
  }
  try {
    switch (route.format) {
      case 'native-readings':
        return decodeNativeReadings(deviceKey, json, opts.now);
      case 'native-status':
        return decodeNativeStatus(deviceKey, json);
      case 'tasmota':
        return decodeTasmotaSensor(deviceKey, json, opts.now, opts.timeZoneOf?.(deviceKey));
      case 'shelly':
        return decodeShellyRpc(deviceKey, json, opts.now);
    }
  } catch (e) {
    if (e instanceof Rejection) return { kind: 'rejected', reason: e.reason, detail: e.message, deviceKey };
    return { kind: 'rejected', reason: 'invalid-payload', detail: String(e), deviceKey };
  }
}
