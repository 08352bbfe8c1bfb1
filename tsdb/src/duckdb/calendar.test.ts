import { calendarBucketStarts, DAY_MS } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { calendarBuckets } from './calendar.ts';

describe('calendarBuckets', () => {
  const cases: [string, number, number, 'day' | 'month', string][] = [
    ['a year of Warsaw days', Date.UTC(2025, 11, 31, 12), Date.UTC(2026, 11, 31, 5), 'day', 'Europe/Warsaw'],
    [
      'Kolkata days across a year end',
      Date.UTC(2025, 11, 30, 19),
      Date.UTC(2026, 0, 2, 18, 31),
      'day',
      'Asia/Kolkata',
    ],
    ['Warsaw months over two years', Date.UTC(2025, 1, 15), Date.UTC(2027, 2, 1), 'month', 'Europe/Warsaw'],
    ['one instant', Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 2, 29, 1) + 1, 'day', 'Europe/Warsaw'],
    ['exactly one local day', Date.UTC(2026, 2, 28, 23), Date.UTC(2026, 2, 29, 22), 'day', 'Europe/Warsaw'],
  ];
  it.each(cases)('%s matches core and ends where the next bucket starts', (_, from, to, unit, tz) => {
    const { starts, end } = calendarBuckets(from, to, unit, tz);
    expect(starts).toEqual(calendarBucketStarts(from, to, unit, tz));
    const last = starts[starts.length - 1]!;
    expect(end).toBe(calendarBucketStarts(last + 1, last + 40 * DAY_MS, unit, tz)[1]);
  });
  it('is empty for an empty range', () => {
    expect(calendarBuckets(5, 5, 'day', 'Europe/Warsaw').starts).toEqual([]);
  });
});
