import { describe, expect, it } from 'vitest';
import { tidyNumber, tidyNumbers } from './tidy.ts';

describe('tidyNumber', () => {
  it.each([
    [25.829999999999927, 25.83],
    [0.30000000000000004, 0.3],
    [-5.051999999999907, -5.052],
    [62965.849, 62965.849],
    [0.0000004, 0],
    [0.0000005, 0.000001],
    [1795129200000, 1795129200000],
    [12, 12],
    [1e12 + 0.123456789, 1e12 + 0.123456789],
    [Number.NaN, Number.NaN],
  ])('%d → %d', (x, want) => {
    expect(tidyNumber(x)).toBe(want);
  });

  it('tidies every fractional number of an answer and leaves the rest as it was', () => {
    const answer = { tz: 'Europe/Warsaw', t: [1795129200000], import: [0.9000000000000057, null], n: 3 };
    expect(tidyNumbers(answer)).toEqual({
      tz: 'Europe/Warsaw',
      t: [1795129200000],
      import: [0.9, null],
      n: 3,
    });
    expect(answer.import[0]).toBe(0.9000000000000057);
  });
});
