import { describe, expect, it } from 'vitest';
import { type CounterPoint, counterRules, energyPerBucket } from '../energy.ts';
import { calendarBucketStarts, fixedBucketStarts, HOUR_MS, zonedTimeToUtc } from '../time.ts';
import { initialDetectorState } from './common.ts';
import { detectUnusualConsumption, type IntervalEnergy, unusualThreshold } from './unusual-consumption.ts';

const TZ = 'Europe/Warsaw';
const local = (y: number, m: number, d: number, h = 0, min = 0) => zonedTimeToUtc(y, m, d, h, min, 0, TZ);
const rules = counterRules('energy3phases_import');

const first = local(2026, 9, 6); // a Sunday, seven weeks before the autumn DST Sunday
const target = local(2026, 10, 25); // 25 local hours
const dayAfter = local(2026, 10, 26);

/** Hourly register readings; kWh per hour from `rate`, a reset to 0.5 kWh at `resetAt` when given. */
function register(rate: (hourStart: number) => number, until: number, resetAt?: number): CounterPoint[] {
  const out: CounterPoint[] = [{ ts: first, value: 1000 }];
  let value = 1000;
  for (let ts = first + HOUR_MS; ts <= until; ts += HOUR_MS) {
    value = ts === resetAt ? 0.5 : value + rate(ts - HOUR_MS);
    out.push({ ts, value });
  }
  return out;
}

/** Daily energies through core's counter rules: `(start, end]` local days. */
function dailyEnergy(points: readonly CounterPoint[], until: number): IntervalEnergy[] {
  const starts = calendarBucketStarts(first, until, 'day', TZ);
  const r = energyPerBucket(points, starts, until, rules);
  return starts.map((start, i) => ({ start, energy: r.energy[i] ?? null }));
}

/** 0.4 kWh an hour, the Sundays a little apart so the spread is not zero. */
const sundayScale = [1, 1.05, 0.95, 1.1, 1, 0.9, 1];
function normalRate(hourStart: number): number {
  const week = Math.floor((hourStart - first) / (7 * 24 * HOUR_MS));
  return 0.4 * (sundayScale[week] ?? 1);
}

describe('unusual threshold', () => {
  it('max(median + k·MAD, median × (1 + share))', () => {
    const t = unusualThreshold([10, 10.5, 9.5, 11, 10, 9], { k: 4, minShare: 0.5 });
    expect(t.median).toBe(10);
    expect(t.mad).toBeCloseTo(0.7413, 9);
    // 10 + 4 × 0.7413 = 12.97 is below 15: the share guard decides.
    expect(t.threshold).toBe(15);
    const wide = unusualThreshold([4, 10, 16, 10, 7, 13], { k: 4, minShare: 0.5 });
    expect(wide.threshold).toBeCloseTo(10 + 4 * 3 * 1.4826, 9);
  });
});

describe('unusual consumption', () => {
  const settings = { deviceKey: 'a1b2c3d4e5f6', tz: TZ };
  const now = local(2026, 10, 26, 0, 30); // just after the DST day ended

  it('no finding on normal data: the 25-hour day with a counter reset is not unusual', () => {
    const resetAt = local(2026, 10, 25, 12);
    const days = dailyEnergy(register(normalRate, now, resetAt), dayAfter);
    const sunday = days.find((d) => d.start === target)!;
    // 25 hours at 0.4 kWh, less the hour whose step ended in the reset (it contributes nothing).
    expect(sunday.energy).toBeCloseTo(24 * 0.4, 9);
    expect(detectUnusualConsumption({ days }, settings, now).findings).toEqual([]);
  });

  it('a heater left on the DST Sunday, with a counter reset: a finding with the right value and threshold', () => {
    const heaterFrom = local(2026, 10, 25, 8);
    const resetAt = local(2026, 10, 25, 12);
    const rate = (h: number) => (h >= heaterFrom && h < dayAfter ? 2.4 : normalRate(h));
    const days = dailyEnergy(register(rate, now, resetAt), dayAfter);
    // 00:00–08:00 local is 9 hours (02:00 repeats) at 0.4; 08:00–24:00 is 16 hours at 2.4, one lost to the reset.
    const expected = 9 * 0.4 + 15 * 2.4;
    const r = detectUnusualConsumption({ days }, settings, now);
    expect(r.findings).toHaveLength(1);
    const f = r.findings[0]!;
    expect(f).toMatchObject({ kind: 'unusual-consumption', deviceKey: 'a1b2c3d4e5f6', at: target });
    expect(f.value).toBeCloseTo(expected, 9);
    // The six Sundays before: 9.6 kWh × (1, 1.05, 0.95, 1.1, 1, 0.9) → median 9.6, MAD 1.4826 × 0.48.
    expect(f.detail).toMatchObject({ grain: 'day', date: '2026-10-25', complete: true, sameWeekdays: 6 });
    expect(f.detail.median as number).toBeCloseTo(9.6, 9);
    expect(f.threshold).toBeCloseTo(Math.max(9.6 + 4 * 1.4826 * 0.48, 9.6 * 1.5), 9);
  });

  it('a tight history does not alarm on a modest rise (the share guard)', () => {
    const rate = (h: number) => (h >= target && h < dayAfter ? 0.5 : normalRate(h));
    const days = dailyEnergy(register(rate, now), dayAfter);
    // 25 × 0.5 = 12.5 kWh: above median + 4 MAD (12.45) but not 50 % above the median (14.4).
    expect(days.find((d) => d.start === target)!.energy).toBeCloseTo(12.5, 9);
    expect(detectUnusualConsumption({ days }, settings, now).findings).toEqual([]);
  });

  it('seasonal devices opt out', () => {
    const rate = (h: number) => (h >= target && h < dayAfter ? 2.4 : normalRate(h));
    const days = dailyEnergy(register(rate, now), dayAfter);
    expect(detectUnusualConsumption({ days }, { ...settings, seasonal: true }, now).findings).toEqual([]);
  });

  it('once per day: found while the day runs, not again when it is complete', () => {
    const rate = (h: number) => (h >= target && h < dayAfter ? 2.4 : normalRate(h));
    const evening = local(2026, 10, 25, 20);
    const soFar = dailyEnergy(register(rate, evening), dayAfter);
    const r1 = detectUnusualConsumption({ days: soFar }, settings, evening, initialDetectorState());
    expect(r1.findings).toHaveLength(1);
    expect(r1.findings[0]!.detail.complete).toBe(false);
    const r2 = detectUnusualConsumption({ days: soFar }, settings, evening + HOUR_MS, r1.state);
    expect(r2.findings).toEqual([]);
    const full = dailyEnergy(register(rate, now), dayAfter);
    const r3 = detectUnusualConsumption({ days: full }, settings, now, r2.state);
    expect(r3.findings).toEqual([]);
    // Two days on, the Sunday leaves the state.
    const r4 = detectUnusualConsumption({ days: full }, settings, local(2026, 10, 27, 9), r3.state);
    expect(r4.state.episodes).toEqual({});
  });

  it('hours: an hour far above the same weekday hour', () => {
    const until = local(2026, 10, 25, 19, 30);
    const kettleHour = local(2026, 10, 25, 18);
    const rate = (h: number) => (h === kettleHour ? 3 : normalRate(h));
    const points = register(rate, until);
    const starts = fixedBucketStarts(first, until, HOUR_MS);
    const e = energyPerBucket(points, starts, until, rules);
    const hours = starts.map((start, i) => ({ start, energy: e.energy[i] ?? null }));
    const r = detectUnusualConsumption({ days: [], hours }, settings, until);
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({
      at: kettleHour,
      value: 3,
      detail: { grain: 'hour', complete: true },
    });
    expect(r.findings[0]!.threshold).toBeCloseTo(0.6, 9);
  });
});
