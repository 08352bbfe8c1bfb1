import { describe, expect, it } from 'vitest';
import { createTariffCalendar } from '../tariff/calendar.ts';
import { calendarBucketStarts, HOUR_MS, MINUTE_MS, zonedTimeToUtc } from '../time.ts';
import {
  alwaysOnPricePerKwh,
  baseLoadYearlyCost,
  baseLoadYearlyKwh,
  dailyBaseLoads,
  detectBaseLoadRise,
  nightWindow,
} from './base-load.ts';
import { initialDetectorState, type Sample } from './common.ts';

const TZ = 'Europe/Warsaw';
const local = (y: number, m: number, d: number, h = 0, min = 0) => zonedTimeToUtc(y, m, d, h, min, 0, TZ);
const iso = (ts: number) => new Date(ts).toISOString();

/** Samples every `stepMin` minutes over [from, to), the power given by a function of the instant. */
function series(from: number, to: number, stepMin: number, power: (ts: number) => number): Sample[] {
  const out: Sample[] = [];
  for (let ts = from; ts < to; ts += stepMin * MINUTE_MS) out.push({ ts, value: power(ts) });
  return out;
}

describe('night window in local time', () => {
  it('is five hours on an ordinary day, four on 2026-03-29 and six on 2026-10-25 (Europe/Warsaw)', () => {
    const s = { tz: TZ, nightFrom: '00:00', nightTo: '05:00' };
    const ordinary = nightWindow(local(2026, 3, 28), s);
    expect([iso(ordinary.from), iso(ordinary.to)]).toEqual([
      '2026-03-27T23:00:00.000Z',
      '2026-03-28T04:00:00.000Z',
    ]);
    const spring = nightWindow(local(2026, 3, 29), s);
    expect([iso(spring.from), iso(spring.to)]).toEqual([
      '2026-03-28T23:00:00.000Z',
      '2026-03-29T03:00:00.000Z',
    ]);
    expect(spring.to - spring.from).toBe(4 * HOUR_MS);
    const autumn = nightWindow(local(2026, 10, 25), s);
    expect([iso(autumn.from), iso(autumn.to)]).toEqual([
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T04:00:00.000Z',
    ]);
    expect(autumn.to - autumn.from).toBe(6 * HOUR_MS);
  });

  it('a night from 23:00 belongs to the day it ends on', () => {
    const w = nightWindow(local(2026, 1, 10), { tz: TZ, nightFrom: '23:00', nightTo: '05:00' });
    expect([iso(w.from), iso(w.to)]).toEqual(['2026-01-09T22:00:00.000Z', '2026-01-10T04:00:00.000Z']);
  });
});

describe('daily base load', () => {
  it('the spring DST night holds four hours of samples: 05:00–06:00 CEST is not night', () => {
    const day = local(2026, 3, 29);
    // 100 W through the night, 20 W from 05:00 to 06:00 local (03:00Z–04:00Z): a 5 × 3600 s window from
    // midnight would take that hour in and the 10th percentile would fall to 20 W.
    const samples = series(local(2026, 3, 28, 12), local(2026, 3, 29, 12), 10, (ts) =>
      ts >= day && ts < local(2026, 3, 29, 5)
        ? 100
        : ts >= local(2026, 3, 29, 5) && ts < local(2026, 3, 29, 6)
          ? 20
          : 900,
    );
    const [d] = dailyBaseLoads(samples, [day], { tz: TZ });
    expect(d).toMatchObject({ date: '2026-03-29', baseW: 100, samples: 24 });
  });

  it('the autumn DST night holds six hours: 04:00–05:00 CET is still night', () => {
    const day = local(2026, 10, 25);
    const lateNight = local(2026, 10, 25, 4);
    expect(iso(lateNight)).toBe('2026-10-25T03:00:00.000Z');
    // 50 W in the last local night hour (03:00Z–04:00Z), 6 of 36 samples: above the 10th percentile's rank.
    const samples = series(local(2026, 10, 24, 12), local(2026, 10, 25, 12), 10, (ts) =>
      ts >= lateNight && ts < local(2026, 10, 25, 5) ? 50 : ts >= day && ts < lateNight ? 100 : 900,
    );
    const [d] = dailyBaseLoads(samples, [day], { tz: TZ });
    expect(d).toMatchObject({ date: '2026-10-25', baseW: 50, samples: 36 });
  });

  it('a night with too few samples has no base load', () => {
    const day = local(2026, 1, 10);
    const samples = series(local(2026, 1, 10, 1), local(2026, 1, 10, 2), 15, () => 80);
    expect(dailyBaseLoads(samples, [day], { tz: TZ })[0]).toMatchObject({ baseW: null, samples: 4 });
  });

  it('yearly energy and cost: W × 8760 h / 1000 × price', () => {
    expect(baseLoadYearlyKwh(150)).toBeCloseTo(1314, 9);
    expect(baseLoadYearlyCost(150, 1.1)).toBeCloseTo(1445.4, 9);
  });

  it('the always-on price of a zoned tariff is its time-weighted mean over a week', () => {
    const week = [local(2026, 1, 12), local(2026, 1, 19)] as const;
    const g12 = createTariffCalendar({ group: 'G12' });
    // Zone 2 is 13:00–15:00 and 22:00–06:00, 10 hours of every day: (14 × 1.00 + 10 × 0.60) / 24.
    expect(alwaysOnPricePerKwh(g12, { 1: 1, 2: 0.6 }, ...week, TZ)).toBeCloseTo(20 / 24, 9);
    const g11 = createTariffCalendar({ group: 'G11' });
    expect(alwaysOnPricePerKwh(g11, { 1: 0.9 }, ...week, TZ)).toBeCloseTo(0.9, 9);
    expect(alwaysOnPricePerKwh(g11, {}, ...week, TZ)).toBeNull();
  });
});

describe('base-load rise', () => {
  // 29 local days up to and including 2026-03-30, the spring DST day among them.
  const first = local(2026, 3, 2);
  const today = local(2026, 3, 30);
  const days = calendarBucketStarts(first, local(2026, 3, 31), 'day', TZ);
  const history = [96, 98, 100, 102, 104, 99, 101];
  /** Night power per local day index; the fridge's compressor runs by day at 900 W. */
  function samplesFor(nightW: (dayIndex: number) => number, until: number): Sample[] {
    return series(local(2026, 3, 1, 12), until, 15, (ts) => {
      const i = days.findLastIndex((d) => d <= ts);
      const h = new Intl.DateTimeFormat('en-GB', { timeZone: TZ, hour: 'numeric', hourCycle: 'h23' }).format(
        ts,
      );
      return Number(h) < 5 ? nightW(i) : 900;
    });
  }
  const evalAt = local(2026, 3, 30, 8);
  const settings = { deviceKey: 'a1b2c3d4e5f6', tz: TZ, pricePerKwh: 1.1 };
  const baseLoads = (todayW: number, until = evalAt) =>
    dailyBaseLoads(
      samplesFor((i) => (days[i] === today ? todayW : history[i % history.length]!), until),
      days,
      settings,
    );

  it('no finding on normal data', () => {
    const r = detectBaseLoadRise(baseLoads(110), settings, evalAt);
    expect(r.findings).toEqual([]);
  });

  it('today 150 W against a 100 W median: a finding with value, threshold and yearly cost', () => {
    const b = baseLoads(150);
    expect(b.find((d) => d.date === '2026-03-29')).toMatchObject({ baseW: 101, samples: 16 });
    const r = detectBaseLoadRise(b, settings, evalAt);
    expect(r.findings).toHaveLength(1);
    const f = r.findings[0]!;
    expect(f).toMatchObject({ kind: 'base-load-rise', deviceKey: 'a1b2c3d4e5f6', at: today, value: 150 });
    expect(f.threshold).toBeCloseTo(130, 9);
    expect(f.detail).toMatchObject({ date: '2026-03-30', medianW: 100, historyDays: 28 });
    expect(f.detail.yearlyCost as number).toBeCloseTo(1445.4, 9);
    expect(f.detail.extraYearlyCost as number).toBeCloseTo(50 * 8.76 * 1.1, 9);
  });

  it('needs 14 days of history', () => {
    const short = baseLoads(150).slice(-14);
    expect(short).toHaveLength(14);
    expect(detectBaseLoadRise(short, settings, evalAt).findings).toEqual([]);
    expect(detectBaseLoadRise(baseLoads(150).slice(-15), settings, evalAt).findings).toHaveLength(1);
  });

  it('waits for the night to end', () => {
    const early = local(2026, 3, 30, 4);
    expect(detectBaseLoadRise(baseLoads(150, early), settings, early).findings).toEqual([]);
  });

  it('once per episode: no repeat while high, again after a normal day', () => {
    const high = baseLoads(150);
    const r1 = detectBaseLoadRise(high, settings, evalAt, initialDetectorState());
    expect(r1.findings).toHaveLength(1);
    const r2 = detectBaseLoadRise(high, settings, evalAt + HOUR_MS, r1.state);
    expect(r2.findings).toEqual([]);
    expect(r2.state).toEqual(r1.state);
    const r3 = detectBaseLoadRise(baseLoads(110), settings, evalAt + 2 * HOUR_MS, r2.state);
    expect(r3.findings).toEqual([]);
    expect(r3.state.episodes).toEqual({});
    expect(detectBaseLoadRise(high, settings, evalAt + 3 * HOUR_MS, r3.state).findings).toHaveLength(1);
  });
});
