import { describe, expect, it } from 'vitest';
import {
  type CounterPoint,
  counterRules,
  counterStep,
  energyPerBucket,
  hourlyBalance,
  sumIntoBuckets,
} from './energy.ts';
import {
  calendarBucketStarts,
  counterBucketIndexOf,
  counterBucketStart,
  fixedBucketStart,
  fixedBucketStarts,
  HOUR_MS,
} from './time.ts';

const T0 = Date.parse('2026-01-10T00:00:00Z');
const min = (m: number) => T0 + m * 60_000;
const pts = (...pairs: [number, number][]): CounterPoint[] =>
  pairs.map(([m, value]) => ({ ts: min(m), value }));
const rules = counterRules('eai1');

describe('counterStep', () => {
  it.each([
    ['increase', 100, 100.5, 'increase', 0.5],
    ['flat', 100, 100, 'flat', 0],
    ['jitter drop within 10 Wh', 100, 99.995, 'jitter', 0],
    ['reset: drop beyond tolerance', 100, 0.2, 'reset', 0],
    // 10 kWh in one minute = 600 kW > 100 kW per phase.
    ['implausible jump', 100, 110, 'implausible', 0],
  ] as const)('%s', (_name, a, b, kind, delta) => {
    const step = counterStep({ ts: min(0), value: a }, { ts: min(1), value: b }, rules);
    expect(step.kind).toBe(kind);
    expect(step.delta).toBeCloseTo(delta, 9);
  });

  it('jitter keeps the higher baseline so the recovery is not counted twice', () => {
    const s1 = counterStep({ ts: min(0), value: 100 }, { ts: min(1), value: 99.995 }, rules);
    const s2 = counterStep(s1.baseline, { ts: min(2), value: 100.01 }, rules);
    expect(s2.delta).toBeCloseTo(0.01, 9);
  });

  it('three-phase totals allow three phases of power', () => {
    expect(counterRules('energy3phases_import').maxPowerKw).toBe(300);
    expect(counterRules('eai2').maxPowerKw).toBe(100);
  });
});

describe('energyPerBucket', () => {
  const hours = fixedBucketStarts(min(0), min(240), HOUR_MS);
  const end = min(240);

  it('last − last-before, per bucket the later reading closes: (start, end]', () => {
    const r = energyPerBucket(
      pts([0, 10], [30, 10.5], [60, 11], [90, 11.2], [150, 12], [210, 12.1]),
      hours,
      end,
      rules,
    );
    expect(r.energy.map((e) => (e === null ? null : Number(e.toFixed(6))))).toEqual([1, 0.2, 0.8, 0.1]);
    expect(r.events).toEqual([]);
  });

  it('the baseline before the range counts toward the first bucket', () => {
    const r = energyPerBucket(pts([10, 5.5]), hours, end, rules, { ts: min(-5), value: 5 });
    expect(r.energy[0]).toBeCloseTo(0.5, 9);
  });

  it('a reset contributes nothing and never makes a bucket negative', () => {
    const r = energyPerBucket(pts([0, 50], [30, 51], [70, 0.3], [100, 0.8]), hours, end, rules);
    expect(r.energy.slice(0, 2).map((e) => Number(e!.toFixed(6)))).toEqual([1, 0.5]);
    expect(r.events).toEqual([{ kind: 'reset', at: min(70), from: min(30), delta: 0.3 - 51 }]);
    expect(r.energy.every((e) => e === null || e >= 0)).toBe(true);
  });

  it('a gap: empty buckets are null and the energy across it lands in the bucket of the later reading', () => {
    const r = energyPerBucket(pts([0, 10], [50, 10.4], [200, 13.4]), hours, end, rules);
    expect(r.energy.map((e) => (e === null ? null : Number(e.toFixed(6))))).toEqual([0.4, null, null, 3]);
  });

  it('an implausible jump is flagged and left out, later steps count again', () => {
    const r = energyPerBucket(pts([0, 10], [1, 500], [2, 500.01], [61, 500.5]), hours, end, rules);
    expect(r.events.map((e) => e.kind)).toEqual(['implausible']);
    expect(r.energy[0]).toBeCloseTo(0.01, 9);
    expect(r.energy[1]).toBeCloseTo(0.49, 9);
  });
});

describe('counter buckets are (start, end]', () => {
  const at = (iso: string) => Date.parse(iso);
  const series = (...pairs: [string, number][]): CounterPoint[] =>
    pairs.map(([iso, value]) => ({ ts: at(iso), value }));

  it('hourly readings on the hour: each closes the hour before it', () => {
    const hours = fixedBucketStarts(at('2026-01-10T08:00:00Z'), at('2026-01-10T11:00:00Z'), HOUR_MS);
    const r = energyPerBucket(
      series(
        ['2026-01-10T08:00:00Z', 100],
        ['2026-01-10T09:00:00Z', 101],
        ['2026-01-10T10:00:00Z', 103],
        ['2026-01-10T11:00:00Z', 106],
      ),
      hours,
      at('2026-01-10T11:00:00Z'),
      rules,
    );
    expect(r.energy).toEqual([1, 2, 3]);
  });

  it('a reading one millisecond after the edge opens the next bucket', () => {
    const hours = fixedBucketStarts(min(0), min(120), HOUR_MS);
    const r = energyPerBucket(pts([0, 10], [60, 11]), hours, min(120), rules);
    expect(r.energy).toEqual([1, null]);
    const later = energyPerBucket(
      [...pts([0, 10], [60, 11]), { ts: min(60) + 1, value: 11 }],
      hours,
      min(120),
      rules,
    );
    expect(later.energy).toEqual([1, 0]);
  });

  it('a reset exactly on an edge contributes nothing to the bucket it closes', () => {
    const hours = fixedBucketStarts(min(0), min(180), HOUR_MS);
    const r = energyPerBucket(pts([0, 50], [30, 51], [60, 0.2], [120, 1.2]), hours, min(180), rules);
    expect(r.energy).toEqual([1, 1, null]);
    expect(r.events).toEqual([{ kind: 'reset', at: min(60), from: min(30), delta: 0.2 - 51 }]);
  });

  it('the reading at local midnight closes the day before', () => {
    const tz = 'Europe/Warsaw';
    const days = calendarBucketStarts(at('2026-03-28T12:00:00Z'), at('2026-03-30T12:00:00Z'), 'day', tz);
    // Local midnights: 27 Mar 23:00Z, 28 Mar 23:00Z (before the spring day), 29 Mar 22:00Z.
    expect(days).toEqual([
      at('2026-03-27T23:00:00Z'),
      at('2026-03-28T23:00:00Z'),
      at('2026-03-29T22:00:00Z'),
    ]);
    const r = energyPerBucket(
      series(
        ['2026-03-27T23:00:00Z', 0],
        ['2026-03-28T23:00:00Z', 24],
        ['2026-03-29T22:00:00Z', 47],
        ['2026-03-30T22:00:00Z', 71],
      ),
      days,
      at('2026-03-30T22:00:00Z'),
      rules,
    );
    expect(r.energy).toEqual([24, 23, 24]);
  });

  it('counterBucketStart and counterBucketIndexOf put an edge reading in the bucket it closes', () => {
    expect(counterBucketStart(min(60), HOUR_MS)).toBe(min(0));
    expect(counterBucketStart(min(60) + 1, HOUR_MS)).toBe(min(60));
    expect(counterBucketStart(min(15), 15 * 60_000)).toBe(min(0));
    expect(fixedBucketStart(min(60), HOUR_MS)).toBe(min(60));
    const starts = [min(0), min(60), min(120)];
    expect(counterBucketIndexOf(starts, min(0))).toBe(-1);
    expect(counterBucketIndexOf(starts, min(1))).toBe(0);
    expect(counterBucketIndexOf(starts, min(120))).toBe(1);
  });
});

describe('hourlyBalance', () => {
  it('nets import against export per hour across phases, not per day', () => {
    // Hour 1: 2 kWh imported on L1, 3 kWh exported on L2 → −1 (export).
    // Hour 2: 1.5 kWh imported, 0.5 exported → +1 (import). Daily register difference would be 0.
    const b = hourlyBalance(
      [
        [2, 1],
        [0, 0.5],
        [0, 0],
      ],
      [
        [0, 0],
        [3, 0.5],
        [0, 0],
      ],
    );
    expect(b.balance).toEqual([-1, 1]);
    expect(b.billedImport).toEqual([0, 1]);
    expect(b.billedExport).toEqual([1, 0]);
  });

  it('an hour without data in any phase stays null', () => {
    expect(hourlyBalance([[null]], [[null]]).balance).toEqual([null]);
  });
});

describe('local-day sums across DST', () => {
  it.each([
    ['spring day in Warsaw (23 h)', 'Europe/Warsaw', '2026-03-29T12:00:00Z', 23],
    ['autumn day in Warsaw (25 h)', 'Europe/Warsaw', '2026-10-25T12:00:00Z', 25],
    ['ordinary day in Warsaw', 'Europe/Warsaw', '2026-06-10T12:00:00Z', 24],
    ['+05:30 zone', 'Asia/Kolkata', '2026-06-10T12:00:00Z', 24],
  ])('%s sums exactly its hours', (_name, tz, iso, expectedHours) => {
    const day = calendarBucketStarts(Date.parse(iso), Date.parse(iso) + 1, 'day', tz);
    const from = day[0]! - 48 * HOUR_MS;
    const to = day[0]! + 72 * HOUR_MS;
    // 15-minute buckets fit the day boundary of every zone; 1 kWh per hour.
    const quarters = fixedBucketStarts(from, to, 15 * 60_000);
    const days = calendarBucketStarts(from, to, 'day', tz);
    const sums = sumIntoBuckets(
      quarters,
      quarters.map(() => 0.25),
      days,
    );
    const idx = days.indexOf(day[0]!);
    expect(sums[idx]).toBeCloseTo(expectedHours, 9);
  });
});
