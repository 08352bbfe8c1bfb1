import { checkValue, MAX_CLOCK_SKEW_MS, MIN_READING_TS, type Reading } from '@kilowatch/core';
import { Rejection } from './types.ts';

/** Checks every value against the catalogue and the timestamp against the plausible window. */
export function assertValidReading(r: Reading, now: number): void {
  if (!Number.isFinite(r.ts)) throw new Rejection('invalid-payload', 'timestamp is not a valid instant');
  if (r.ts < MIN_READING_TS) {
    throw new Rejection('timestamp-too-old', `timestamp ${new Date(r.ts).toISOString()} is before 2000`);
  }
  if (r.ts > now + MAX_CLOCK_SKEW_MS) {
    throw new Rejection(
      'timestamp-in-future',
      `timestamp ${new Date(r.ts).toISOString()} is more than 5 minutes ahead of the receiver`,
    );
  }
  const names = Object.keys(r.values);
  if (names.length === 0) throw new Rejection('invalid-payload', 'reading has no values');
  for (const name of names) {
    const value = r.values[name] as number;
    if (typeof value !== 'number') throw new Rejection('invalid-payload', `${name} is not a number`);
    const check = checkValue(name, value);
    if (!check.ok) throw new Rejection(check.reason, `${name}=${value}: ${check.reason}`);
  }
}
