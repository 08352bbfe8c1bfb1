import { describe, expect, it } from 'vitest';
import { addLocalDays, MINUTE_MS, zonedTimeToUtc } from '../time.ts';
import type { Sample } from './common.ts';
import { daylightWindow, detectSolarUnderperformance } from './solar.ts';

const TZ = 'Europe/Warsaw';
const local = (y: number, m: number, d: number, h = 0, min = 0) => zonedTimeToUtc(y, m, d, h, min, 0, TZ);
const settings = { deviceKey: 'a1b2c3d4e5f6', tz: TZ };

describe('solar: a low day', () => {
  // 21 days of production before 2026-03-29 (the DST day, 23 hours), the best 24 kWh.
  const checked = local(2026, 3, 29);
  const history = [18, 20, 22, 24, 19, 21, 23];
  const days = (value: number | null, n = 21) => [
    ...Array.from({ length: n }, (_, i) => ({
      start: addLocalDays(checked, -(i + 1), TZ),
      energy: history[i % history.length]!,
    })),
    { start: checked, energy: value },
  ];
  const now = local(2026, 3, 30, 7);

  it('no finding on a normal day', () => {
    expect(detectSolarUnderperformance({ days: days(15) }, settings, now).findings).toEqual([]);
  });

  it('a shaded day below 40 % of the recent best: value and threshold', () => {
    const r = detectSolarUnderperformance({ days: days(5) }, settings, now);
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({
      kind: 'solar-underperformance',
      deviceKey: 'a1b2c3d4e5f6',
      at: checked,
      value: 5,
      detail: { mode: 'low-day', date: '2026-03-29', referenceKwh: 24, historyDays: 21 },
    });
    expect(r.findings[0]!.threshold).toBeCloseTo(9.6, 9);
  });

  it('needs 14 days of history', () => {
    expect(detectSolarUnderperformance({ days: days(5, 13) }, settings, now).findings).toEqual([]);
    expect(detectSolarUnderperformance({ days: days(5, 14) }, settings, now).findings).toHaveLength(1);
  });

  it('once while the days stay low; a good day ends the episode', () => {
    const r1 = detectSolarUnderperformance({ days: days(5) }, settings, now);
    const r2 = detectSolarUnderperformance({ days: days(5) }, settings, now + 3_600_000, r1.state);
    expect(r2.findings).toEqual([]);
    // The next day is low too: the same episode.
    const nextDay = [...days(5), { start: local(2026, 3, 30), energy: 4 }];
    const r3 = detectSolarUnderperformance({ days: nextDay }, settings, local(2026, 3, 31, 7), r2.state);
    expect(r3.findings).toEqual([]);
    const good = [...nextDay, { start: local(2026, 3, 31), energy: 20 }];
    const r4 = detectSolarUnderperformance({ days: good }, settings, local(2026, 4, 1, 7), r3.state);
    expect(r4.state.episodes).toEqual({});
  });
});

describe('solar: zero production in daylight while importing', () => {
  const day = { y: 2026, m: 3, d: 29 }; // spring DST day: 09:00–15:00 CEST is 07:00Z–13:00Z
  const at = (h: number, min = 0) => local(day.y, day.m, day.d, h, min);

  function minutes(from: number, to: number, value: (ts: number) => number, stepMin = 1): Sample[] {
    const out: Sample[] = [];
    for (let ts = from; ts < to; ts += stepMin * MINUTE_MS) out.push({ ts, value: value(ts) });
    return out;
  }

  it('the fixed window is local time on the DST day', () => {
    const w = daylightWindow(at(12), { tz: TZ, daylightFrom: '09:00', daylightTo: '15:00' });
    expect(new Date(w.from).toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(new Date(w.to).toISOString()).toBe('2026-03-29T13:00:00.000Z');
  });

  // The inverter trips at 10:00 and stays at 0 W; the house imports 400 W.
  const production = minutes(at(6), at(13), (ts) => (ts >= at(10) ? 0 : 1500));
  const grid = minutes(at(6), at(13), (ts) => (ts >= at(10) ? 400 : -800), 2);

  it('an hour at zero while importing: one finding from the run start', () => {
    const r = detectSolarUnderperformance({ production, grid }, settings, at(12));
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({
      kind: 'solar-underperformance',
      at: at(10),
      value: 60,
      threshold: 60,
      detail: { mode: 'zero-in-daylight', detectedAt: at(11), gridImportW: 400, productionW: 0 },
    });
  });

  it('once per run: overlapping windows later do not repeat it', () => {
    const r1 = detectSolarUnderperformance({ production, grid }, settings, at(11, 30));
    expect(r1.findings).toHaveLength(1);
    const r2 = detectSolarUnderperformance({ production, grid }, settings, at(12, 30), r1.state);
    expect(r2.findings).toEqual([]);
  });

  it('no finding at night, when exporting, or for a shorter dip', () => {
    // Zero before 09:00 local is outside daylight.
    const dawn = minutes(at(5), at(9, 30), (ts) => (ts < at(9) ? 0 : 1200));
    const dawnGrid = minutes(at(5), at(9, 30), () => 300);
    expect(
      detectSolarUnderperformance({ production: dawn, grid: dawnGrid }, settings, at(9, 30)).findings,
    ).toEqual([]);
    // A curtailed inverter at 0 W while the house exports (battery) is not a fault here.
    const exporting = minutes(at(9), at(13), () => -200);
    expect(detectSolarUnderperformance({ production, grid: exporting }, settings, at(13)).findings).toEqual(
      [],
    );
    // 45 minutes at zero.
    const dip = minutes(at(9), at(13), (ts) => (ts >= at(10) && ts < at(10, 45) ? 0 : 1500));
    expect(detectSolarUnderperformance({ production: dip, grid }, settings, at(13)).findings).toEqual([]);
  });

  it('a sunrise and sunset window replaces the fixed hours', () => {
    const sun = { sunrise: at(6, 20), sunset: at(19, 10) };
    const early = minutes(at(6), at(8), (ts) => (ts >= at(6, 30) ? 0 : 5));
    const imp = minutes(at(6), at(8), () => 300);
    const r = detectSolarUnderperformance({ production: early, grid: imp, sun }, settings, at(8));
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]!.at).toBe(at(6, 20));
  });
});

describe('solar: zero in daylight from quarter-hour samples checked through the day', () => {
  // The autumn DST day (25 hours): 09:00–15:00 CET is 08:00Z–14:00Z.
  const at = (h: number, min = 0) => local(2026, 10, 25, h, min);
  const QUARTER = 15 * MINUTE_MS;
  const quarters = (from: number, to: number, value: (ts: number) => number | null): Sample[] => {
    const out: Sample[] = [];
    for (let ts = from; ts <= to; ts += QUARTER) {
      const v = value(ts);
      if (v !== null) out.push({ ts, value: v });
    }
    return out;
  };
  const s = { ...settings, usualIntervalMs: QUARTER };

  it('the window is 09:00–15:00 on the wall clock of the 25-hour day', () => {
    const w = daylightWindow(at(12), { tz: TZ, daylightFrom: '09:00', daylightTo: '15:00' });
    expect(new Date(w.from).toISOString()).toBe('2026-10-25T08:00:00.000Z');
    expect(new Date(w.to).toISOString()).toBe('2026-10-25T14:00:00.000Z');
  });

  it('checked every quarter with the state carried: one finding, an hour after the first zero quarter', () => {
    const production = quarters(at(9), at(15), (ts) => (ts >= at(11) ? 0 : 900));
    const grid = quarters(at(9), at(15), () => 600);
    let state: ReturnType<typeof detectSolarUnderperformance>['state'] | undefined;
    const told: { now: number; at: number }[] = [];
    for (let now = at(9); now <= at(15); now += QUARTER) {
      const seen = (x: Sample) => x.ts <= now;
      const r = detectSolarUnderperformance(
        { production: production.filter(seen), grid: grid.filter(seen) },
        s,
        now,
        state,
      );
      state = r.state;
      for (const f of r.findings) told.push({ now, at: f.at });
    }
    expect(told).toEqual([{ now: at(12), at: at(11) }]);
  });

  it('quarters the grid meter missed break the run', () => {
    // No grid quarters at 11:30 and 11:45 (the API then has no sample of either meter there): 45 minutes
    // between samples, above 2 × 15 minutes.
    const missed = (ts: number) => ts === at(11, 30) || ts === at(11, 45);
    const production = quarters(at(9), at(12, 45), (ts) => (missed(ts) ? null : ts >= at(11) ? 0 : 900));
    const grid = quarters(at(9), at(12, 45), (ts) => (missed(ts) ? null : 600));
    expect(detectSolarUnderperformance({ production, grid }, s, at(12, 45)).findings).toEqual([]);
    // The run that starts again at 12:00 reaches its hour at 13:00.
    const r = detectSolarUnderperformance(
      { production: [...production, { ts: at(13), value: 0 }], grid: [...grid, { ts: at(13), value: 600 }] },
      s,
      at(13),
    );
    expect(r.findings.map((f) => f.at)).toEqual([at(12)]);
  });
});
