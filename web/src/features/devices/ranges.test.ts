import { describe, expect, it } from 'vitest';
import { billingPeriods, energyIntervalFor, fitInterval, parseLocalDate, rangeFor } from './ranges.ts';

const TZ = 'Europe/Warsaw';
const iso = (ms: number) => new Date(ms).toISOString();

describe('rangeFor', () => {
  const now = Date.UTC(2026, 2, 29, 10, 0); // the spring DST day in Warsaw
  it.each([
    {
      preset: 'day' as const,
      start: undefined,
      from: '2026-03-28T23:00:00.000Z',
      to: '2026-03-29T23:00:00.000Z',
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
