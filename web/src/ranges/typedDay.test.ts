import { describe, expect, it } from 'vitest';
import { formatDay, parseTypedDay } from './typedDay.ts';

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

describe('formatDay', () => {
  it('writes a day in the language’s format', () => {
    expect(formatDay('2026-03-10', 'en')).toBe('03/10/2026');
    expect(formatDay('2026-03-10', 'pl')).toBe('10.03.2026');
    expect(formatDay('2026-03-10', 'tr')).toBe('10.03.2026');
    expect(formatDay('not a day', 'pl')).toBe('not a day');
  });
});
