import { describe, expect, it } from 'vitest';
import { billingPeriodAt } from '../buckets/billing.ts';
import { fixedBucketStarts, HOUR_MS, zonedTimeToUtc } from '../time.ts';
import { heatmapRows } from './heatmap.ts';
import { chooseInterval, isRangeTooLong } from './interval.ts';
import { phaseQuality, tenMinuteMeans } from './quality.ts';

const H = HOUR_MS;
const WAW = 'Europe/Warsaw';
const iso = (ts: number) => new Date(ts).toISOString();

describe('chooseInterval and the 100,000-point guard', () => {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    [24 * H, 'raw'],
    [33 * H, 'raw'],
    [34 * H, '15m'],
    [20 * 24 * H, '15m'],
    [40 * 24 * H, '30m'],
    [80 * 24 * H, '1h'],
    [365 * 24 * H, '1d'],
  ])('%i ms → %s', (span, interval) => {
    expect(chooseInterval(t0, t0 + span)).toBe(interval);
  });

  it.each([
    [365 * 24 * H, 'raw', true],
    [69 * 24 * H, 'raw', false],
    [365 * 24 * H, '15m', false],
    [3 * 365 * 24 * H, '15m', true],
    [365 * 24 * H, '1h', false],
    [5 * 365 * 24 * H, '1h', false],
    [12 * 365 * 24 * H, '1h', true],
  ] as const)('%i ms at %s too long: %s', (span, interval, tooLong) => {
    expect(isRangeTooLong(t0, t0 + span, interval)).toBe(tooLong);
  });
});

describe('heatmapRows', () => {
  it('daily rows across the autumn DST day: hour 2 holds both hours (energy summed)', () => {
    const from = zonedTimeToUtc(2026, 10, 25, 0, 0, 0, WAW);
    const t = fixedBucketStarts(from, from + 25 * H, H);
    const rows = heatmapRows(
      'daily',
      t,
      t.map(() => 1),
      WAW,
      'sum',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe('2026-10-25');
    expect(rows[0]!.data).toHaveLength(24);
    expect(rows[0]!.data[2]).toEqual({ x: 2, y: 2 });
    expect(rows[0]!.data.reduce((s, c) => s + (c.y ?? 0), 0)).toBe(25);
  });

  it('daily rows on the spring day: hour 2 does not exist', () => {
    const from = zonedTimeToUtc(2026, 3, 29, 0, 0, 0, WAW);
    const t = fixedBucketStarts(from, from + 23 * H, H);
    const rows = heatmapRows(
      'daily',
      t,
      t.map(() => 230),
      WAW,
      'mean',
    );
    expect(rows[0]!.data[2]).toEqual({ x: 2, y: null });
    expect(rows[0]!.data[3]).toEqual({ x: 3, y: 230 });
  });

  it('weekly rows start on Monday and average weekday-hours', () => {
    // Two weeks from Monday 2 Nov 2026; value = local hour.
    const from = zonedTimeToUtc(2026, 11, 2, 0, 0, 0, WAW);
    const t = fixedBucketStarts(from, from + 14 * 24 * H, H);
    const rows = heatmapRows(
      'weekly',
      t,
      t.map((ts) => ((ts - from) / H) % 24),
      WAW,
      'mean',
    );
    expect(rows.map((r) => r.id)).toEqual(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']);
    expect(rows[6]!.data[13]).toEqual({ x: 13, y: 13 });
  });

  it('monthly rows: day cells sum the day, days past the month are null', () => {
    const from = zonedTimeToUtc(2026, 2, 1, 0, 0, 0, WAW);
    const to = zonedTimeToUtc(2026, 3, 1, 0, 0, 0, WAW);
    const t = fixedBucketStarts(from, to, H);
    const rows = heatmapRows(
      'monthly',
      t,
      t.map(() => 0.5),
      WAW,
      'sum',
    );
    expect(rows.map((r) => r.id)).toEqual(['2026-02']);
    expect(rows[0]!.data[0]).toEqual({ x: 1, y: 12 });
    expect(rows[0]!.data[28]).toEqual({ x: 29, y: null });
  });

  it('yearly calendar: weekday rows, week columns keyed by their Monday', () => {
    const from = zonedTimeToUtc(2026, 1, 1, 0, 0, 0, WAW); // a Thursday
    const to = zonedTimeToUtc(2026, 1, 12, 0, 0, 0, WAW);
    const t = fixedBucketStarts(from, to, H);
    const rows = heatmapRows(
      'yearly',
      t,
      t.map(() => 1),
      WAW,
      'sum',
    );
    const thu = rows.find((r) => r.id === 'Thu')!;
    expect(thu.data.map((c) => c.x)).toEqual(['2025-12-29', '2026-01-05']);
    expect(thu.data[0]!.y).toBe(24);
    expect(rows.find((r) => r.id === 'Mon')!.data[0]!.y).toBeNull();
  });
});

describe('voltage quality', () => {
  it('shares of 10-minute means within the bands', () => {
    const means = [230, 240, 250, 255, 200];
    const q = phaseQuality(means, { warning: 5, critical: 10 });
    // ±5 %: 218.5..241.5 → 230, 240. ±10 %: 207..253 → 230, 240, 250.
    expect(q).toEqual({
      samples: 5,
      withinWarning: 0.4,
      withinCritical: 0.6,
      withinEn50160: 0.6,
      en50160Met: false,
    });
    expect(phaseQuality([], { warning: 5, critical: 10 }).en50160Met).toBeNull();
  });

  it('averages samples in epoch-aligned 10-minute windows', () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const samples = [0, 5, 9, 10, 25].map((m, i) => ({ ts: t0 + m * 60_000, value: 220 + i * 10 }));
    expect(tenMinuteMeans(samples)).toEqual([230, 250, 260]);
  });
});

describe('billingPeriodAt', () => {
  it.each([
    ['2026-11-22T12:00:00Z', '2026-01-15', 1, '2026-11-14T23:00:00.000Z', '2026-12-14T23:00:00.000Z'],
    ['2026-11-10T12:00:00Z', '2026-01-15', 1, '2026-10-14T22:00:00.000Z', '2026-11-14T23:00:00.000Z'],
    ['2026-11-22T12:00:00Z', '2026-01-01', 6, '2026-06-30T22:00:00.000Z', '2026-12-31T23:00:00.000Z'],
    // Before the start date the periods repeat backwards.
    ['2025-12-20T12:00:00Z', '2026-01-01', 2, '2025-10-31T23:00:00.000Z', '2025-12-31T23:00:00.000Z'],
    // The 31st in a short month is clamped to its last day.
    ['2026-02-28T12:00:00Z', '2026-01-31', 1, '2026-02-27T23:00:00.000Z', '2026-03-30T22:00:00.000Z'],
  ])('at %s, start %s every %i months', (now, start, months, from, to) => {
    const p = billingPeriodAt(Date.parse(now), start, months, WAW);
    expect([iso(p.start), iso(p.end)]).toEqual([from, to]);
  });
});
