import {
  addLocalDays,
  addLocalMonths,
  calendarBucketStarts,
  DAY_MS,
  HOUR_MS,
  offsetMinutes,
} from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { calendarRuns } from './answers.ts';
import { calendarBuckets } from './calendar.ts';

const Y2025 = Date.UTC(2025, 0, 1);

describe('calendarBuckets', () => {
  it.each([
    ['Europe/Warsaw', 'day', Y2025 - HOUR_MS, Y2025 - HOUR_MS + 365 * DAY_MS],
    ['Europe/Warsaw', 'day', Y2025 + 3 * HOUR_MS, Y2025 + 3 * HOUR_MS + 1],
    ['Europe/Warsaw', 'day', Date.UTC(2024, 11, 30, 22, 30), Date.UTC(2025, 0, 2, 5)],
    ['Europe/Warsaw', 'day', Date.UTC(2025, 2, 29, 23), Date.UTC(2025, 2, 30, 22)],
    ['Europe/Warsaw', 'month', Date.UTC(2024, 5, 17), Date.UTC(2026, 1, 1)],
    ['Asia/Kolkata', 'day', Date.UTC(2025, 11, 30, 18, 30), Date.UTC(2026, 0, 3)],
    ['America/New_York', 'day', Date.UTC(2025, 10, 1), Date.UTC(2025, 10, 5)],
    ['Asia/Kathmandu', 'month', Date.UTC(2025, 0, 1), Date.UTC(2025, 3, 1)],
    ['Australia/Lord_Howe', 'day', Date.UTC(2025, 3, 4), Date.UTC(2025, 3, 8)],
  ] as const)('in %s by %s over [%i, %i) equals core calendarBucketStarts', (tz, unit, from, to) => {
    const want = calendarBucketStarts(from, to, unit, tz);
    const last = want[want.length - 1]!;
    const end = unit === 'day' ? addLocalDays(last, 1, tz) : addLocalMonths(last, 1, tz);
    const got = calendarBuckets(from, to, unit, tz);
    expect(got.starts).toEqual(want);
    expect(got.end).toBe(end);
    // Never claims whole hours where a bucket boundary is not on one (conservative the other way).
    if (got.wholeHours) for (const t of [...want, end]) expect(offsetMinutes(t, tz) % 60 === 0).toBe(true);
  });

  it('judges whole-hour zones as such and :30, :45 and Lord Howe zones as not', () => {
    const w = (tz: string) => calendarBuckets(Y2025, Y2025 + 40 * DAY_MS, 'day', tz).wholeHours;
    expect(w('Europe/Warsaw')).toBe(true);
    expect(w('America/New_York')).toBe(true);
    expect(w('Asia/Kolkata')).toBe(false);
    expect(w('Asia/Kathmandu')).toBe(false);
  });

  it('returns a fresh array each time (answers hand it out as `t`)', () => {
    const a = calendarBuckets(Y2025, Y2025 + 3 * DAY_MS, 'day', 'Europe/Warsaw');
    a.starts.push(0);
    expect(calendarBuckets(Y2025, Y2025 + 3 * DAY_MS, 'day', 'Europe/Warsaw').starts).toHaveLength(4);
  });
});

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
