/**
 * Meters' MQTT passwords. Each is 24 random bytes (192 bits) the API makes itself, so nothing about it
 * can be guessed or looked up in a dictionary: a salted SHA-256 stores it safely, and the broker checks
 * it once per connection at the cost of one hash (a slow KDF, right for passwords people choose, would
 * only slow every meter's reconnect after a broker restart).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { newMeterPassword } from '@kilowatch/core';

export { newMeterPassword };

/** `sha256$salt$hash` (base64url). */
export function hashMeterPassword(password: string): string {
  const salt = randomBytes(16);
  const hash = createHash('sha256').update(salt).update(password).digest();
  return ['sha256', salt.toString('base64url'), hash.toString('base64url')].join('$');
}

export function verifyMeterPassword(password: string, stored: string): boolean {
  const [scheme, salt, hash] = stored.split('$');
  if (scheme !== 'sha256' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = createHash('sha256').update(Buffer.from(salt, 'base64url')).update(password).digest();
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
