import { describe, expect, it } from 'vitest';
import { localizeNumbers } from './numbers.ts';

describe('localizeNumbers', () => {
  it.each([
    ['pl', { low: 195.5, high: 264.5 }, { low: '195,5', high: '264,5' }],
    ['tr', { value: 227.25 }, { value: '227,25' }],
    ['en', { value: 195.5 }, { value: '195.5' }],
    ['pl', { count: 3, year: 2026, phase: 1 }, { count: 3, year: 2026, phase: 1 }],
    ['pl', { name: 'Dom', value: 1234.5 }, { name: 'Dom', value: '1234,5' }],
    ['xx', { value: 0.25 }, { value: '0.25' }],
  ] as const)('%s %j', (language, values, expected) => {
    expect(localizeNumbers(values, language)).toEqual(expected);
  });

  it('takes no values', () => {
    expect(localizeNumbers(undefined, 'pl')).toBeUndefined();
  });
});
