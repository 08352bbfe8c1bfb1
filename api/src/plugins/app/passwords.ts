/**
 * Password hashing with scrypt (node:crypto) at OWASP's parameters, and the rule that a new password is
 * not a common one. The cost is stored with each hash, so raising it later still verifies old hashes.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { PASSWORD_MIN } from '@kilowatch/core';
import { dictionary } from '@zxcvbn-ts/language-common';

/**
 * Commonly used passwords: zxcvbn-ts's list (about 49,000, ranked from leaked-password corpora, all
 * lowercase), of which only those the length rule lets through need keeping.
 */
const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  dictionary['passwords-common'].filter((p) => p.length >= PASSWORD_MIN),
);

/** One short run repeated ('aaaaaaaa', 'abababab', '123123123'): NIST SP 800-63B refuses repetitive passwords. */
const REPETITIVE = /^(.{1,3})\1+$/su;

/**
 * True when a new password is one of the commonly used ones, whatever its letter case, or one short run
 * repeated: register and reset refuse it (docs/api.md §Account).
 */
export function isCommonPassword(password: string): boolean {
  const p = password.normalize('NFC').toLowerCase();
  return COMMON_PASSWORDS.has(p) || REPETITIVE.test(p);
}

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem must cover 128·N·r bytes plus headroom.
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      { ...cost, maxmem: 256 * cost.N * cost.r },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string, cost: ScryptCost): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * A hash in the same form and at the same cost that no password matches: a random salt and a random key
 * (a password deriving it would be a 256-bit preimage). Verifying against it costs what a real hash does,
 * and making it costs nothing — no scrypt run (~0.4 s and 128 MB at N = 2^17) at every start.
 */
export function unmatchableHash(cost: ScryptCost): string {
  return [
    'scrypt',
    cost.N,
    cost.r,
    cost.p,
    randomBytes(16).toString('base64url'),
    randomBytes(KEY_LENGTH).toString('base64url'),
  ].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return key.length === expected.length && timingSafeEqual(key, expected);
}
