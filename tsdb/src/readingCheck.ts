/**
 * What makes a reading storable, checked the same way by every engine before anything of a batch is
 * written: a device key, a timestamp every engine can hold, and catalogue parameters with finite values.
 * The check names the problem with a code; each engine words its own message from it.
 */
import { PARAM_NAMES, type Reading } from '@kilowatch/core';

/** Why a reading cannot be stored. */
export type ReadingProblem =
  | { code: 'not-a-reading' }
  | { code: 'device-key'; deviceKey: unknown }
  | { code: 'ts'; ts: unknown }
  | { code: 'values' }
  | { code: 'unknown-parameter'; param: string }
  | { code: 'not-finite'; param: string; value: unknown };

/** Longest device key a store keeps (device keys are 12-digit MACs; the limit only bounds garbage). */
export const MAX_DEVICE_KEY_LENGTH = 64;

/**
 * The instants every engine stores: InfluxDB keeps int64 nanoseconds, so 1677-09-21 to 2262-04-11.
 * Whole milliseconds only.
 */
export const MIN_STORED_TS = -9_223_372_036_853;
export const MAX_STORED_TS = 9_223_372_036_853;

/** Position of every stored parameter in the catalogue's `PARAM_NAMES` (-1 when not stored). */
const COLUMN_OF = new Map<string, number>(PARAM_NAMES.map((name, i) => [name, i]));

/** A non-empty single-line key of at most 64 characters without backslashes (line protocol's escape). */
export function isStorableDeviceKey(key: unknown): key is string {
  return (
    typeof key === 'string' && key.length > 0 && key.length <= MAX_DEVICE_KEY_LENGTH && !/[\n\r\\]/.test(key)
  );
}

/** Whole epoch milliseconds within the instants every engine stores. */
export function isStorableTs(ts: unknown): ts is number {
  return Number.isSafeInteger(ts) && (ts as number) >= MIN_STORED_TS && (ts as number) <= MAX_STORED_TS;
}

/**
 * The reading's key, timestamp and values object, without looking at the values themselves. `keyChecked`:
 * the caller already found this exact key storable (a batch checks each distinct key once).
 */
export function readingHeadProblem(r: unknown, keyChecked = false): ReadingProblem | null {
  if (r === null || typeof r !== 'object') return { code: 'not-a-reading' };
  const { deviceKey, ts, values } = r as Reading;
  if (!keyChecked && !isStorableDeviceKey(deviceKey)) return { code: 'device-key', deviceKey };
  if (!isStorableTs(ts)) return { code: 'ts', ts };
  if (values === null || typeof values !== 'object') return { code: 'values' };
  return null;
}

/**
 * The column (position in `PARAM_NAMES`) a value is stored in, or its problem: a parameter outside the
 * catalogue, or a value that is not a finite number.
 */
export function valueColumn(name: string, value: unknown): number | ReadingProblem {
  const c = COLUMN_OF.get(name);
  if (c === undefined) return { code: 'unknown-parameter', param: name };
  if (typeof value !== 'number' || !Number.isFinite(value)) return { code: 'not-finite', param: name, value };
  return c;
}

/** Why a reading cannot be stored, or null when it can. */
export function readingProblem(r: unknown): ReadingProblem | null {
  const head = readingHeadProblem(r);
  if (head) return head;
  for (const [name, value] of Object.entries((r as Reading).values)) {
    const c = valueColumn(name, value);
    if (typeof c !== 'number') return c;
  }
  return null;
}
