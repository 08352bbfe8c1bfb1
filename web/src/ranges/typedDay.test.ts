import { describe, expect, it } from 'vitest';
import { formatDay } from '../lib/time.ts';
import { parseTypedDay } from './typedDay.ts';

describe('parseTypedDay', () => {
  it.each([
    ['en', '03/10/2026', '2026-03-10'],
    ['en', '3/10/2026', '2026-03-10'],
    ['pl', '10.03.2026', '2026-03-10'],
    ['pl', '10.3.2026', '2026-03-10'],
    ['tr', '29.02.2028', '2028-02-29'],
    ['tr', '2026-03-10', '2026-03-10'],
    ['en', ' 2026-03-10 ', '2026-03-10'],
  ])('reads %s %s as %s', (locale, text, day) => {
    expect(parseTypedDay(text, locale)).toBe(day);
  });

  it.each([
    ['pl', ''],
    ['pl', '31.02.2026'],
    ['tr', '29.02.2027'],
    ['pl', '10/03'],
    ['en', 'tomorrow'],
  ])('refuses %s %j', (locale, text) => {
    expect(parseTypedDay(text, locale)).toBeNull();
  });
});

describe('formatDay and parseTypedDay', () => {
  it.each(['en', 'pl', 'tr'])('a day shown in %s reads back as the same day', (locale) => {
    for (const day of ['2026-03-10', '2028-02-29', '2026-12-31']) {
      expect(parseTypedDay(formatDay(day, locale), locale)).toBe(day);
    }
  });
});
