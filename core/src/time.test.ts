import { describe, expect, it } from 'vitest';
import {
  addLocalDays,
  bucketIndexOf,
  calendarBucketStarts,
  calendarBucketStartsYielding,
  HOUR_MS,
  localParts,
  offsetMinutes,
  startOfLocalDay,
  startOfLocalWeek,
  zonedTimeToUtc,
} from './time.ts';

const WAW = 'Europe/Warsaw';
const KOL = 'Asia/Kolkata';

describe('offsetMinutes', () => {
  it.each([
    ['2026-01-15T12:00:00Z', WAW, 60],
    ['2026-07-15T12:00:00Z', WAW, 120],
    ['2026-03-29T00:59:59Z', WAW, 60],
    ['2026-03-29T01:00:00Z', WAW, 120],
    ['2026-10-25T00:59:59Z', WAW, 120],
    ['2026-10-25T01:00:00Z', WAW, 60],
    ['2026-07-15T12:00:00Z', KOL, 330],
    ['2026-07-15T12:00:00Z', 'Asia/Kathmandu', 345],
    ['2026-07-15T12:00:00Z', 'UTC', 0],
  ])('%s in %s is %i', (iso, tz, expected) => {
    expect(offsetMinutes(Date.parse(iso), tz)).toBe(expected);
  });
});

describe('zonedTimeToUtc', () => {
  it.each([
    // [local wall time, zone, expected UTC]
    [[2026, 1, 15, 0, 0], WAW, '2026-01-14T23:00:00.000Z'],
    [[2026, 7, 15, 0, 0], WAW, '2026-07-14T22:00:00.000Z'],
    // Spring gap: 02:30 does not exist in Warsaw on 29 March 2026 → 03:30 CEST.
    [[2026, 3, 29, 2, 30], WAW, '2026-03-29T01:30:00.000Z'],
    [[2026, 3, 29, 3, 0], WAW, '2026-03-29T01:00:00.000Z'],
    // Autumn overlap: 02:30 happens twice on 25 October 2026 → the first occurrence (CEST).
    [[2026, 10, 25, 2, 30], WAW, '2026-10-25T00:30:00.000Z'],
    [[2026, 10, 25, 3, 0], WAW, '2026-10-25T02:00:00.000Z'],
    [[2026, 7, 15, 0, 0], KOL, '2026-07-14T18:30:00.000Z'],
  ] as const)('%j in %s', (wall, tz, iso) => {
    const [y, mo, d, h, mi] = wall;
    expect(new Date(zonedTimeToUtc(y, mo, d, h, mi, 0, tz)).toISOString()).toBe(iso);
  });
});

describe('local days across DST', () => {
  it('the spring day in Warsaw has 23 hours and the autumn day 25', () => {
    const spring = startOfLocalDay(Date.parse('2026-03-29T12:00:00Z'), WAW);
    const autumn = startOfLocalDay(Date.parse('2026-10-25T12:00:00Z'), WAW);
    expect(addLocalDays(spring, 1, WAW) - spring).toBe(23 * HOUR_MS);
    expect(addLocalDays(autumn, 1, WAW) - autumn).toBe(25 * HOUR_MS);
    expect(new Date(spring).toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(new Date(autumn).toISOString()).toBe('2026-10-24T22:00:00.000Z');
  });

  it('a +05:30 day starts at 18:30 UTC the day before', () => {
    expect(new Date(startOfLocalDay(Date.parse('2026-07-15T10:00:00Z'), KOL)).toISOString()).toBe(
      '2026-07-14T18:30:00.000Z',
    );
  });

  it('daily bucket starts over March 2026 in Warsaw: 31 days, one of them 23 h', () => {
    const from = Date.parse('2026-02-28T23:00:00Z');
    const to = Date.parse('2026-03-31T22:00:00Z');
    const starts = calendarBucketStarts(from, to, 'day', WAW);
    expect(starts).toHaveLength(31);
    const lengths = starts.map((s, i) => (starts[i + 1] ?? to) - s);
    expect(lengths.filter((l) => l === 23 * HOUR_MS)).toHaveLength(1);
    expect(lengths.filter((l) => l === 24 * HOUR_MS)).toHaveLength(30);
  });

  it('weeks start on Monday', () => {
    // 2026-11-22 is a Sunday.
    const ts = Date.parse('2026-11-22T10:00:00Z');
    expect(localParts(ts, WAW).weekday).toBe(7);
    expect(new Date(startOfLocalWeek(ts, WAW)).toISOString()).toBe('2026-11-15T23:00:00.000Z');
  });

  it('month and year buckets follow the zone', () => {
    const from = Date.parse('2026-01-01T00:00:00Z');
    const to = Date.parse('2027-01-01T00:00:00Z');
    const months = calendarBucketStarts(from, to, 'month', WAW);
    // The bucket containing `from` (Jan 2026 local) starts on 31 Dec 23:00 UTC.
    expect(new Date(months[0]!).toISOString()).toBe('2025-12-31T23:00:00.000Z');
    expect(months).toHaveLength(13); // Jan..Dec 2026 and the local January 2027 that starts before `to`.
    expect(calendarBucketStarts(from, to, 'year', WAW)).toHaveLength(2);
  });
});

describe('localParts against Intl', () => {
  // An independent reading of the wall clock: the Swedish locale prints "YYYY-MM-DD HH:MM:SS".
  // One formatter per zone: toLocaleString builds a new one on every call, which made this file cost
  // minutes of CPU.
  const formats = new Map<string, Intl.DateTimeFormat>();
  const oracle = (ts: number, tz: string) => {
    let f = formats.get(tz);
    if (!f) {
      f = new Intl.DateTimeFormat('sv-SE', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
      formats.set(tz, f);
    }
    const text = f.format(ts);
    const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = text.split(/[-: ]/).map(Number);
    const weekday = new Date(Date.UTC(year, month - 1, day)).getUTCDay() || 7;
    return { year, month, day, hour, minute, second, weekday };
  };

  // Whole-hour DST (Warsaw, New York), half-hour offset (Kolkata), half-hour DST (Lord Howe),
  // quarter-hour offset with DST (Chatham), southern-hemisphere DST (Sydney), a zone that dropped DST
  // (Istanbul) and one that moved across the date line (Apia, 2011-12-30 skipped).
  const zones = [
    'Europe/Warsaw',
    'America/New_York',
    'Asia/Kolkata',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'Australia/Sydney',
    'Europe/Istanbul',
    'Pacific/Apia',
    'UTC',
  ];

  it.each(zones)('matches Intl every 61 min 13 s through 2011 and 2026 in %s', (tz) => {
    for (const year of [2011, 2026]) {
      const from = Date.UTC(year, 0, 1);
      const to = Date.UTC(year + 1, 0, 1);
      for (let ts = from; ts < to; ts += 3_673_000) {
        const got = localParts(ts, tz);
        const want = oracle(ts, tz);
        if (got.hour !== want.hour || got.day !== want.day || got.minute !== want.minute)
          expect({ ts, ...got }).toEqual({ ts, ...want });
      }
    }
  });

  const offsetOf = (ts: number, tz: string) => {
    const p = oracle(ts, tz);
    return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - ts;
  };
  const dstZones = new Set([
    'Europe/Warsaw',
    'America/New_York',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
    'Australia/Sydney',
  ]);

  it.each(zones)('matches Intl second by second around each 2026 offset change in %s', (tz) => {
    const changes: number[] = [];
    let prev = offsetOf(Date.UTC(2026, 0, 1), tz);
    for (let ts = Date.UTC(2026, 0, 1); ts < Date.UTC(2027, 0, 1); ts += 900_000) {
      const now = offsetOf(ts, tz);
      if (now !== prev) changes.push(ts);
      prev = now;
    }
    expect(changes).toHaveLength(dstZones.has(tz) ? 2 : 0);
    for (const at of changes)
      for (let ts = at - 1_800_000; ts <= at + 1_800_000; ts += 1000) {
        const got = localParts(ts, tz);
        const want = oracle(ts, tz);
        if (
          got.hour !== want.hour ||
          got.minute !== want.minute ||
          got.second !== want.second ||
          got.day !== want.day
        )
          expect({ at: new Date(ts).toISOString(), ...got }).toEqual({
            at: new Date(ts).toISOString(),
            ...want,
          });
      }
  });

  it('gives the same fields on every call (the cache agrees with its first answer)', () => {
    const ts = Date.UTC(2026, 2, 29, 0, 59, 59);
    const first = localParts(ts, 'Europe/Warsaw');
    expect(localParts(ts, 'Europe/Warsaw')).toEqual(first);
    expect(first).toEqual({ year: 2026, month: 3, day: 29, hour: 1, minute: 59, second: 59, weekday: 7 });
    expect(localParts(ts + 1000, 'Europe/Warsaw')).toMatchObject({ hour: 3, minute: 0, second: 0 });
  });
});

describe('bucketIndexOf', () => {
  it('finds the bucket holding an instant among fixed or calendar starts', () => {
    const starts = [0, 10, 25, 60];
    expect([-1, 0, 9, 10, 24, 25, 59, 60, 1000].map((t) => bucketIndexOf(starts, t))).toEqual([
      -1, 0, 0, 1, 1, 2, 2, 3, 3,
    ]);
    expect(bucketIndexOf([], 5)).toBe(-1);
  });
});

describe('calendarBucketStartsYielding', () => {
  it('gives what calendarBucketStarts gives, for days and months, on and off bucket edges', async () => {
    for (const tz of ['Europe/Warsaw', 'America/St_Johns', 'Asia/Kolkata', 'UTC']) {
      for (const [from, to] of [
        [Date.UTC(2023, 2, 1, 5, 7), Date.UTC(2026, 9, 28, 13)],
        [zonedTimeToUtc(2024, 1, 1, 0, 0, 0, tz), zonedTimeToUtc(2025, 1, 1, 0, 0, 0, tz)],
        [Date.UTC(2025, 5, 1, 12), Date.UTC(2025, 5, 1, 13)],
      ] as const) {
        for (const unit of ['day', 'month'] as const) {
          expect(await calendarBucketStartsYielding(from, to, unit, tz)).toEqual(
            calendarBucketStarts(from, to, unit, tz),
          );
        }
      }
    }
    expect(await calendarBucketStartsYielding(5, 5, 'day', 'UTC')).toEqual([]);
  });
});
