import {
  addLocalDays,
  addLocalMonths,
  calendarBucketStarts,
  DAY_MS,
  HOUR_MS,
  offsetMinutes,
} from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
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
