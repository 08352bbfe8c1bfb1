import { describe, expect, it } from 'vitest';
import { hashPassword, isCommonPassword, unmatchableHash, verifyPassword } from './passwords.ts';

const cost = { N: 2 ** 10, r: 8, p: 1 };

describe('passwords', () => {
  it('verifies the password a hash was made from, and no other', async () => {
    const h = await hashPassword('correct horse', cost);
    expect(await verifyPassword('correct horse', h)).toBe(true);
    expect(await verifyPassword('correct hors', h)).toBe(false);
  });

  it('makes an unmatchable hash in the form and at the cost of a real one, each one different', async () => {
    const real = (await hashPassword('x', cost)).split('$');
    const a = unmatchableHash(cost).split('$');
    expect(a).toHaveLength(real.length);
    expect(a.slice(0, 4)).toEqual(real.slice(0, 4));
    expect(Buffer.from(a[4]!, 'base64url')).toHaveLength(16);
    expect(Buffer.from(a[5]!, 'base64url')).toHaveLength(32);
    expect(unmatchableHash(cost)).not.toBe(a.join('$'));
    for (const guess of ['', 'x', 'demo', 'password'])
      expect(await verifyPassword(guess, a.join('$'))).toBe(false);
  });
});

describe('isCommonPassword', () => {
  it.each([
    'password',
    'PASSWORD',
    'Password1',
    '12345678',
    'qwertyuiop',
    'iloveyou',
    'sunshine',
    'aaaaaaaa',
    'abababab',
    '123123123',
    'ąąąąąąąą',
  ])('%j is common', (password) => {
    expect(isCommonPassword(password)).toBe(true);
  });

  it.each([
    'correct horse battery',
    'a brand new password',
    'Tr0ub4dor&3-x',
    'abcabcabd',
    'passwordpassword!',
    'Zażółć gęślą jaźń',
  ])('%j is not', (password) => {
    expect(isCommonPassword(password)).toBe(false);
  });
});
