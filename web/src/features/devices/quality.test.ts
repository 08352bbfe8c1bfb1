import { describe, expect, it } from 'vitest';
import { bandVolts, formatShare } from './quality.ts';

describe('bandVolts', () => {
  it.each([
    { percent: 10, low: 207, high: 253 },
    { percent: 5, low: 218.5, high: 241.5 },
    { percent: 0, low: 230, high: 230 },
    { percent: 50, low: 115, high: 345 },
    { percent: 100, low: 0, high: 460 },
    { percent: 7.3, low: 213.2, high: 246.8 },
  ])('±$percent % → $low…$high V', ({ percent, low, high }) => {
    expect(bandVolts(percent)).toEqual({ low, high });
  });
});

describe('formatShare', () => {
  it.each([
    { share: 1, locale: 'en', out: '100.0 %' },
    { share: 0.9512, locale: 'en', out: '95.1 %' },
    { share: 0, locale: 'en', out: '0.0 %' },
    { share: 0.9512, locale: 'pl', out: '95,1 %' },
    { share: null, locale: 'en', out: '—' },
    { share: undefined, locale: 'en', out: '—' },
    { share: Number.NaN, locale: 'en', out: '—' },
  ])('$share ($locale) → $out', ({ share, locale, out }) => {
    expect(formatShare(share, locale)).toBe(out);
  });
});
