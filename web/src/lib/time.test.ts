import { describe, expect, it } from 'vitest';
import { formatDay, formatInstant, formatMonth, instantColumnStyle, intlLocale } from './time.ts';

// Fixed instants around Europe/Warsaw's spring change (29 March 2026, 02:00 CET → 03:00 CEST) and its
// autumn change (25 October 2026, 03:00 CEST → 02:00 CET); never today's date.
const WARSAW = 'Europe/Warsaw';
const beforeSpring = Date.UTC(2026, 2, 29, 0, 59, 30); // 01:59:30 CET
const afterSpring = Date.UTC(2026, 2, 29, 1, 0, 0); // 03:00:00 CEST, one second later on the wall clock
const autumnFirst = Date.UTC(2026, 9, 25, 0, 30); // 02:30 CEST
const autumnSecond = Date.UTC(2026, 9, 25, 1, 30); // 02:30 CET, the repeated hour

describe('formatInstant', () => {
  it.each([
    ['en', beforeSpring, '03/29/2026, 01:59:30'],
    ['en', afterSpring, '03/29/2026, 03:00:00'],
    ['pl', beforeSpring, '29.03.2026, 01:59:30'],
    ['pl', afterSpring, '29.03.2026, 03:00:00'],
    ['tr', afterSpring, '29.03.2026 03:00:00'],
  ])('%s: the spring change skips 02:00–03:00 (%i)', (language, ts, text) => {
    expect(formatInstant(ts, WARSAW, language, 'second')).toBe(text);
  });

  it.each([
    ['en', '10/25/2026, 02:30'],
    ['pl', '25.10.2026, 02:30'],
  ])('%s: the repeated autumn hour shows the same wall time twice', (language, text) => {
    expect(formatInstant(autumnFirst, WARSAW, language)).toBe(text);
    expect(formatInstant(autumnSecond, WARSAW, language)).toBe(text);
    expect(formatInstant(autumnSecond + 3_600_000, WARSAW, language, 'time')).toBe('03:30');
  });

  it('writes the day of the zone, not of UTC', () => {
    const lateUtc = Date.UTC(2026, 11, 31, 23, 30); // already 1 January 2027 in Warsaw
    expect(formatInstant(lateUtc, WARSAW, 'pl', 'date')).toBe('01.01.2027');
    expect(formatInstant(lateUtc, 'UTC', 'pl', 'date')).toBe('31.12.2026');
    expect(formatInstant(lateUtc, 'America/New_York', 'en', 'date')).toBe('12/31/2026');
  });

  it('uses a 24-hour clock in every language, midnight as 00', () => {
    const midnight = Date.UTC(2026, 6, 1, 22, 0); // 00:00 CEST, 2 July
    expect(formatInstant(midnight, WARSAW, 'en')).toBe('07/02/2026, 00:00');
    expect(formatInstant(midnight + 14 * 3_600_000, WARSAW, 'en', 'time')).toBe('14:00');
  });

  it.each([
    ['en', 'March 2026', 'Mar 2026', '03/29'],
    ['pl', 'marzec 2026', 'mar 2026', '29.03'],
  ])('%s: months and short dates', (language, month, shortMonth, dayMonth) => {
    expect(formatInstant(afterSpring, WARSAW, language, 'month')).toBe(month);
    expect(formatInstant(afterSpring, WARSAW, language, 'shortMonth')).toBe(shortMonth);
    expect(formatInstant(afterSpring, WARSAW, language, 'dayMonth')).toBe(dayMonth);
  });

  it('shows a dash for no instant and falls back to English for an unknown language', () => {
    expect(formatInstant(Number.NaN, WARSAW, 'pl')).toBe('–');
    expect(intlLocale('xx')).toBe('en-US');
    expect(formatInstant(afterSpring, WARSAW, 'xx', 'date')).toBe('03/29/2026');
  });
});

describe('formatDay', () => {
  it('writes a calendar day in the language’s format, whatever the zone', () => {
    expect(formatDay('2026-03-10', 'en')).toBe('03/10/2026');
    expect(formatDay('2026-03-10', 'pl')).toBe('10.03.2026');
    expect(formatDay('2026-03-10', 'tr')).toBe('10.03.2026');
    expect(formatDay('2026-03-29', 'pl')).toBe('29.03.2026');
    expect(formatDay('2026-03-29', 'en', 'dayMonth')).toBe('03/29');
    expect(formatDay('2026-03-29', 'pl', 'dayMonth')).toBe('29.03');
    expect(formatDay('not a day', 'pl')).toBe('not a day');
  });
});

describe('formatMonth', () => {
  it('names a calendar month', () => {
    expect(formatMonth('2026-03', 'en')).toBe('March 2026');
    expect(formatMonth('2026-03', 'pl')).toBe('marzec 2026');
    expect(formatMonth('2026-03', 'pl', 'shortMonth')).toBe('mar 2026');
    expect(formatMonth('2026-13x', 'pl')).toBe('2026-13x');
  });
});

describe('instantColumnStyle', () => {
  const t0 = Date.UTC(2026, 2, 10, 14, 30);
  it.each([
    ['readings a minute or more apart, on whole minutes', [t0, t0 + 60_000, t0 + 300_000], 'minute'],
    ['one reading', [t0], 'minute'],
    ['no readings', [], 'minute'],
    ['six readings 10 s apart', [0, 1, 2, 3, 4, 5].map((i) => t0 + i * 10_000), 'second'],
    ['readings a minute apart but between whole minutes', [t0 + 5_000, t0 + 65_000], 'second'],
    ['readings on whole minutes, two of them the same minute', [t0, t0 + 60_000, t0 + 60_000], 'second'],
  ] as const)('%s: %s', (_name, times, style) => {
    expect(instantColumnStyle(times)).toBe(style);
  });
});
