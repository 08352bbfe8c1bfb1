import { describe, expect, it } from 'vitest';
import { formatInstant } from '../lib/time.ts';
import {
  billingPeriods,
  customRangeProblem,
  energyIntervalFor,
  fitInterval,
  longRange,
  parseLocalDate,
  rangeFor,
  seriesInterval,
} from './ranges.ts';

const TZ = 'Europe/Warsaw';
const iso = (ms: number) => new Date(ms).toISOString();

describe('rangeFor', () => {
  const now = Date.UTC(2026, 2, 29, 10, 0); // the spring DST day in Warsaw
  it.each([
    {
      // The DST day has 23 hours: it ends at the next local midnight, not 24 h later.
      preset: 'day' as const,
      start: undefined,
      from: '2026-03-28T23:00:00.000Z',
      to: '2026-03-29T22:00:00.000Z',
    },
    {
      preset: 'day' as const,
      start: '2026-01-10',
      from: '2026-01-09T23:00:00.000Z',
      to: '2026-01-10T23:00:00.000Z',
    },
    {
      preset: 'week' as const,
      start: undefined,
      from: '2026-03-22T23:00:00.000Z',
      to: '2026-03-29T22:00:00.000Z',
    },
    {
      preset: 'year' as const,
      start: undefined,
      from: '2025-03-31T22:00:00.000Z',
      to: '2026-03-31T22:00:00.000Z',
    },
  ])('$preset from $start', ({ preset, start, from, to }) => {
    const r = rangeFor(preset, now, TZ, start);
    expect([iso(r.from), iso(r.to)]).toEqual([from, to]);
  });
});

describe('parseLocalDate', () => {
  it.each([
    ['2026-07-01', '2026-06-30T22:00:00.000Z'],
    ['2026-12-01', '2026-11-30T23:00:00.000Z'],
    ['01.07.2026', null],
    ['', null],
  ])('%s', (s, out) => {
    const v = parseLocalDate(s, TZ);
    expect(v === null ? null : iso(v)).toBe(out);
  });
});

describe('billingPeriods', () => {
  it.each([
    {
      start: Date.UTC(2025, 0, 14, 23), // 15 Jan 2025 local
      months: 2,
      now: Date.UTC(2026, 3, 20),
      first: ['2026-03-14T23:00:00.000Z', '2026-05-14T22:00:00.000Z'],
      count: 8,
    },
    {
      start: Date.UTC(2026, 0, 30, 23), // 31 Jan: short months clamp to their last day
      months: 1,
      now: Date.UTC(2026, 1, 28, 12),
      first: ['2026-02-27T23:00:00.000Z', '2026-03-30T22:00:00.000Z'],
      count: 2,
    },
    {
      start: Date.UTC(2026, 5, 1),
      months: 12,
      now: Date.UTC(2026, 5, 2),
      first: ['2026-05-31T22:00:00.000Z', '2027-05-31T22:00:00.000Z'],
      count: 1,
    },
  ])('$months-month periods', ({ start, months, now, first, count }) => {
    const p = billingPeriods(start, months, now, TZ);
    expect(p).toHaveLength(count);
    expect([iso(p[0]!.from), iso(p[0]!.to)]).toEqual(first);
    expect(p[0]!.from).toBeLessThanOrEqual(now);
    expect(p[0]!.to).toBeGreaterThan(now);
  });

  it('takes the billing start as a calendar day of the location, and its periods read as days there', () => {
    const now = Date.UTC(2026, 3, 20, 12);
    // West of UTC the day's UTC midnight is the evening before: the day itself must be kept.
    const ny = billingPeriods('2026-01-15', 1, now, 'America/New_York');
    expect(iso(ny[0]!.from)).toBe('2026-04-15T04:00:00.000Z');
    expect(formatInstant(ny[0]!.from, 'America/New_York', 'en', 'date')).toBe('04/15/2026');
    expect(formatInstant(ny[0]!.to - 1, 'America/New_York', 'en', 'date')).toBe('05/14/2026');
    // A Warsaw period across the spring change (29 March 2026), named in Polish.
    const waw = billingPeriods('2026-03-15', 1, Date.UTC(2026, 2, 30, 12), TZ);
    expect([iso(waw[0]!.from), iso(waw[0]!.to)]).toEqual([
      '2026-03-14T23:00:00.000Z',
      '2026-04-14T22:00:00.000Z',
    ]);
    expect(
      `${formatInstant(waw[0]!.from, TZ, 'pl', 'date')} – ${formatInstant(waw[0]!.to - 1, TZ, 'pl', 'date')}`,
    ).toBe('15.03.2026 – 14.04.2026');
  });
});

describe('intervals', () => {
  const day = { from: 0, to: 86_400_000 };
  const year = { from: 0, to: 365 * 86_400_000 };
  const decade = { from: 0, to: 3650 * 86_400_000 };
  it.each([
    [day, '15m', '15m', '15m'],
    [year, '15m', '1mo', '15m'],
    [decade, '15m', '1mo', '1h'],
    [{ from: 0, to: 30 * 86_400_000 }, '1h', '1d', '1h'],
  ] as const)('%j at %s', (range, wanted, energy, fit) => {
    expect(energyIntervalFor(range, wanted)).toBe(energy);
    expect(fitInterval(range, wanted)).toBe(fit);
  });
});

describe('longRange', () => {
  const now = Date.UTC(2026, 9, 25, 12, 0); // the autumn DST day in Warsaw (25 hours)
  it.each([
    ['day', '2026-10-24T22:00:00.000Z', '2026-10-25T23:00:00.000Z'],
    ['quarter', '2026-07-27T22:00:00.000Z', '2026-10-25T23:00:00.000Z'],
    ['year', '2025-10-25T22:00:00.000Z', '2026-10-25T23:00:00.000Z'],
  ] as const)('%s ends at the next local midnight', (preset, from, to) => {
    const r = longRange(preset, now, TZ)!;
    expect([iso(r.from), iso(r.to)]).toEqual([from, to]);
  });

  it('a custom range includes both days, across the DST change', () => {
    const r = longRange('custom', now, TZ, ['2026-10-24', '2026-10-25'])!;
    expect([iso(r.from), iso(r.to)]).toEqual(['2026-10-23T22:00:00.000Z', '2026-10-25T23:00:00.000Z']);
    expect((r.to - r.from) / 3_600_000).toBe(49);
  });

  it('a custom range that lacks a day or runs backwards has no period, and says why', () => {
    expect(longRange('custom', now, TZ, ['2026-10-24', null])).toBeNull();
    expect(customRangeProblem(['2026-10-24', null], TZ)).toBe('missing');
    expect(longRange('custom', now, TZ, ['2026-10-25', '2026-10-01'])).toBeNull();
    expect(customRangeProblem(['2026-10-25', '2026-10-01'], TZ)).toBe('reversed');
    expect(customRangeProblem(['2026-10-01', '2026-10-01'], TZ)).toBeNull();
  });

  it('leaves the interval to the API on auto, so a year arrives in readable buckets', () => {
    const year = longRange('year', now, TZ)!;
    expect(seriesInterval(year, 'auto')).toBeUndefined();
    expect(seriesInterval(year, '15m')).toBe('15m');
    expect(energyIntervalFor(year, 'auto')).toBe('1mo');
    expect(energyIntervalFor(longRange('day', now, TZ)!, 'auto')).toBe('15m');
  });
});
