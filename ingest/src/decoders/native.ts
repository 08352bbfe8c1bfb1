import {
  checkValue,
  MAX_CLOCK_SKEW_MS,
  MIN_READING_TS,
  NativePayloadSchema,
  NativeReadingSchema,
  type Reading,
  StatusMessageSchema,
  WEAK_SIGNAL_DBM,
} from '@kilowatch/core';
import * as v from 'valibot';
import { type Decoded, Rejection, type StatusUpdate } from './types.ts';
import { assertValidReading } from './validate.ts';

/** Maps a valibot failure to a rejection; a pre-2000 epoch gets its own reason. */
export function schemaRejection(issues: readonly v.BaseIssue<unknown>[]): Rejection {
  const first = issues[0];
  if (issues.some((i) => i.message === 'timestamp before 2000')) {
    return new Rejection('timestamp-too-old', 'timestamp before 2000');
  }
  const path = first?.path?.map((p) => String(p.key)).join('.') ?? '';
  return new Rejection('invalid-payload', `${path ? `${path}: ` : ''}${first?.message ?? 'invalid payload'}`);
}

/**
 * The common message — one reading, integer epoch-millisecond `ts`, every value a number the catalogue
 * accepts — checked in one pass over what JSON.parse built, without copying it. Anything else (arrays,
 * ISO timestamps, any fault) returns null and takes the schema path, which names the problem.
 */
function plainReading(deviceKey: string, json: unknown, now: number): Reading | null {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return null;
  const o = json as { ts?: unknown; seq?: unknown; values?: unknown };
  const ts = o.ts;
  if (typeof ts !== 'number' || !Number.isInteger(ts) || ts < MIN_READING_TS || ts > now + MAX_CLOCK_SKEW_MS)
    return null;
  const seq = o.seq;
  if (seq !== undefined && (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 0)) return null;
  const values = o.values;
  if (values === null || typeof values !== 'object' || Array.isArray(values)) return null;
  let n = 0;
  for (const name in values) {
    if (!Object.hasOwn(values, name)) return null;
    const x = (values as Record<string, unknown>)[name];
    if (typeof x !== 'number' || !checkValue(name, x).ok) return null;
    n++;
  }
  if (n === 0) return null;
  const reading: Reading = { deviceKey, ts, values: values as Record<string, number> };
  if (seq !== undefined) reading.seq = seq;
  return reading;
}

/** `kilowatch/meters/<deviceKey>/readings`: one reading or an array of them. */
export function decodeNativeReadings(deviceKey: string, json: unknown, now: number): Decoded {
  const plain = plainReading(deviceKey, json, now);
  if (plain) return { kind: 'readings', format: 'native', deviceKey, readings: [plain] };
  const raw = Array.isArray(json) ? json : [json];
  if (raw.some((r) => Array.isArray((r as { values?: unknown } | null)?.values))) {
    throw new Rejection('invalid-payload', 'values must be an object of parameter names');
  }
  // A single object is checked against the reading schema itself, so its issues name the field.
  const parsed = Array.isArray(json)
    ? v.safeParse(NativePayloadSchema, json)
    : v.safeParse(NativeReadingSchema, json);
  if (!parsed.success) throw schemaRejection(parsed.issues);
  const list = Array.isArray(parsed.output) ? parsed.output : [parsed.output];
  const readings: Reading[] = list.map((r) => {
    const reading: Reading = { deviceKey, ts: r.ts, values: r.values };
    if (r.seq !== undefined) reading.seq = r.seq;
    return reading;
  });
  for (const r of readings) assertValidReading(r, now);
  return { kind: 'readings', format: 'native', deviceKey, readings };
}

export function statusFrom(online: boolean, rssi: number | undefined): StatusUpdate {
  const status = !online
    ? 'offline'
    : rssi !== undefined && rssi < WEAK_SIGNAL_DBM
      ? 'weak-signal'
      : 'online';
  return rssi === undefined ? { online, status } : { online, status, rssi };
}

/** `kilowatch/meters/<deviceKey>/status` (also the last will). */
export function decodeNativeStatus(deviceKey: string, json: unknown): Decoded {
  const parsed = v.safeParse(StatusMessageSchema, json);
  if (!parsed.success) throw schemaRejection(parsed.issues);
  return { kind: 'status', deviceKey, update: statusFrom(parsed.output.online, parsed.output.rssi) };
}
