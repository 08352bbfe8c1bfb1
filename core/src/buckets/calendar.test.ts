import { describe, expect, it } from 'vitest';
import {
  addLocalDays,
  addLocalMonths,
  calendarBucketStarts,
  DAY_MS,
  HOUR_MS,
  offsetMinutes,
  zonedTimeToUtc,
} from '../time.ts';
import { calendarBuckets, equalLengthRuns, fineRollup, fineRollupAt } from './calendar.ts';

const WAW = 'Europe/Warsaw';
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
    ['Europe/Warsaw', 'day', Date.UTC(2025, 11, 31, 12), Date.UTC(2026, 11, 31, 5)],
    ['Asia/Kolkata', 'day', Date.UTC(2025, 11, 30, 19), Date.UTC(2026, 0, 2, 18, 31)],
    ['Europe/Warsaw', 'month', Date.UTC(2025, 1, 15), Date.UTC(2027, 2, 1)],
    ['Europe/Warsaw', 'day', Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 2, 29, 1) + 1],
    ['Europe/Warsaw', 'day', Date.UTC(2026, 2, 28, 23), Date.UTC(2026, 2, 29, 22)],
  ] as const)('in %s by %s over [%i, %i) equals core calendarBucketStarts', (tz, unit, from, to) => {
    const want = calendarBucketStarts(from, to, unit, tz);
    const last = want[want.length - 1]!;
    const end = unit === 'day' ? addLocalDays(last, 1, tz) : addLocalMonths(last, 1, tz);
    const got = calendarBuckets(from, to, unit, tz);
    expect(got.starts).toEqual(want);
    expect(got.end).toBe(end);
    expect(got.end).toBe(calendarBucketStarts(last + 1, last + 40 * DAY_MS, unit, tz)[1]);
    // Never claims whole hours where a bucket boundary is not on one.
    if (got.wholeHours) for (const t of [...want, end]) expect(offsetMinutes(t, tz) % 60 === 0).toBe(true);
  });

  it('is empty for an empty range', () => {
    expect(calendarBuckets(5, 5, 'day', WAW).starts).toEqual([]);
    expect(calendarBuckets(10, 5, 'day', WAW)).toEqual({ starts: [], end: 10, wholeHours: true });
  });

  it('has a 23-hour day in spring and a 25-hour day in autumn in Warsaw', () => {
    const spring = calendarBuckets(
      zonedTimeToUtc(2025, 3, 30, 12, 0, 0, WAW),
      zonedTimeToUtc(2025, 3, 30, 13, 0, 0, WAW),
      'day',
      WAW,
    );
    expect(spring.starts).toEqual([Date.UTC(2025, 2, 29, 23)]);
    expect(spring.end - spring.starts[0]!).toBe(23 * HOUR_MS);
    const autumn = calendarBuckets(Date.UTC(2025, 9, 26, 12), Date.UTC(2025, 9, 26, 13), 'day', WAW);
    expect(autumn.starts).toEqual([Date.UTC(2025, 9, 25, 22)]);
    expect(autumn.end - autumn.starts[0]!).toBe(25 * HOUR_MS);
  });

  it('judges whole-hour zones as such and :30, :45 and Lord Howe zones as not', () => {
    const w = (tz: string) => calendarBuckets(Y2025, Y2025 + 40 * DAY_MS, 'day', tz).wholeHours;
    expect(w('Europe/Warsaw')).toBe(true);
    expect(w('America/New_York')).toBe(true);
    expect(w('Asia/Kolkata')).toBe(false);
    expect(w('Asia/Kathmandu')).toBe(false);
    expect(w('Australia/Adelaide')).toBe(false);
  });

  it('returns a fresh array each time (answers hand it out as `t`)', () => {
    const a = calendarBuckets(Y2025, Y2025 + 3 * DAY_MS, 'day', WAW);
    a.starts.push(0);
    expect(calendarBuckets(Y2025, Y2025 + 3 * DAY_MS, 'day', WAW).starts).toHaveLength(4);
  });
});

describe('fineRollup', () => {
  it.each([
    ['Europe/Warsaw', '1h'],
    ['UTC', '1h'],
    ['America/New_York', '1h'],
    ['Asia/Kolkata', '15m'],
    ['Australia/Adelaide', '15m'],
    ['Asia/Kathmandu', '15m'],
  ] as const)('sums the local days of %s from %s rollups', (tz, want) => {
    const b = calendarBuckets(Y2025, Y2025 + 365 * DAY_MS, 'day', tz);
    expect(fineRollup(b)).toBe(want);
    // Judged by the zone's offset at an instant, the rule gives the same answer in winter and summer.
    expect(fineRollupAt(tz, Y2025)).toBe(want);
    expect(fineRollupAt(tz, Date.UTC(2025, 6, 1))).toBe(want);
  });

  it('puts every 15-minute bucket of a :30 zone inside one local day', () => {
    const b = calendarBuckets(Y2025, Y2025 + 10 * DAY_MS, 'day', 'Australia/Adelaide');
    for (const s of b.starts) expect(s % (15 * 60_000)).toBe(0);
    expect(b.starts.some((s) => s % HOUR_MS !== 0)).toBe(true);
  });
});

describe('equalLengthRuns', () => {
  it('groups the local days between clock changes and leaves each changed day to itself', () => {
    // Warsaw in 2025: clocks forward on 30 March (23 h), back on 26 October (25 h).
    const b = calendarBuckets(Y2025 - HOUR_MS, Y2025 - HOUR_MS + 365 * DAY_MS, 'day', WAW);
    const runs = equalLengthRuns(b);
    expect(runs.map((r) => [r.step / HOUR_MS, r.count])).toEqual([
      [24, 88],
      [23, 1],
      [24, 209],
      [25, 1],
      [24, 66],
    ]);
    expect(runs[0]!.from).toBe(b.starts[0]);
    expect(runs.at(-1)!.to).toBe(b.end);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.from).toBe(runs[i - 1]!.to);
    for (const r of runs) expect(r.to - r.from).toBe(r.step * r.count);
  });

  it('leaves months of unequal length each to itself and is empty without buckets', () => {
    const months = calendarBuckets(Y2025, Y2025 + 100 * DAY_MS, 'month', 'UTC');
    expect(equalLengthRuns(months).map((r) => r.count)).toEqual([1, 1, 1, 1]);
    expect(equalLengthRuns({ starts: [], end: 0 })).toEqual([]);
  });
});
