import { calendarBuckets, DAY_MS, HOUR_MS } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { calendarRuns } from './answers.ts';

const Y2025 = Date.UTC(2025, 0, 1);

describe('calendarRuns', () => {
  it('groups the local days between clock changes and leaves each changed day to itself', () => {
    // Warsaw in 2025: clocks forward on 30 March (23 h), back on 26 October (25 h).
    const b = calendarBuckets(Y2025 - HOUR_MS, Y2025 - HOUR_MS + 365 * DAY_MS, 'day', 'Europe/Warsaw');
    const runs = calendarRuns(b);
    expect(runs.map((r) => [r.step ?? null, (r.to - r.from) / HOUR_MS])).toEqual([
      [DAY_MS, 88 * 24], // 1 January to 29 March, midnight at 23:00 UTC
      [null, 23],
      [DAY_MS, 209 * 24], // 31 March to 25 October, midnight at 22:00 UTC
      [null, 25],
      [DAY_MS, 66 * 24], // 27 October to 31 December
    ]);
    expect(runs.map((r) => r.offset ?? null)).toEqual([23 * HOUR_MS, null, 22 * HOUR_MS, null, 23 * HOUR_MS]);
    // Every bucket lies in exactly one run, and the runs tile the buckets' span.
    expect(runs[0]!.from).toBe(b.starts[0]);
    expect(runs.at(-1)!.to).toBe(b.end);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.from).toBe(runs[i - 1]!.to);
  });

  it('leaves a single day and months of unequal length ungrouped', () => {
    const day = calendarBuckets(Y2025 + 3 * HOUR_MS, Y2025 + 4 * HOUR_MS, 'day', 'Europe/Warsaw');
    expect(calendarRuns(day)).toEqual([{ from: day.starts[0], to: day.end }]);
    const months = calendarBuckets(Y2025, Y2025 + 100 * DAY_MS, 'month', 'UTC');
    expect(calendarRuns(months).every((r) => r.step === undefined)).toBe(true);
    expect(calendarRuns(months)).toHaveLength(4);
  });
});
