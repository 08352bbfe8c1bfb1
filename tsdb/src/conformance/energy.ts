/** Counter energy per bucket: jitter, resets, implausible jumps, gaps, local days and calendar months. */
import {
  calendarBucketStarts,
  counterRules,
  energyPerBucket,
  fixedBucketStarts,
  HOUR_MS,
  MINUTE_MS,
  type Reading,
  zonedTimeToUtc,
} from '@kilowatch/core';
import { expect, it } from 'vitest';
import type { EnergyQuery } from '../port.ts';
import { type Conformance, DAY, expectClose, newKey } from './context.ts';

export function energyCases(ctx: Conformance): void {
  const { T0, refresh } = ctx;

  it('computes counter energy per bucket with jitter, resets, implausible jumps and gaps — exact', async () => {
    const dev = newKey();
    const at = (m: number) => T0 + m * MINUTE_MS;
    const eai1: [number, number][] = [
      [0, 100],
      [5, 100.5],
      [10, 100.495], // jitter: ignored, baseline stays 100.5
      [14, 100.6], // +0.1 from the kept baseline
      [20, 100.9],
      [25, 2], // reset: contributes nothing
      [29, 2.4],
      [35, 5000], // implausible: ~50 MW for 6 minutes
      [40, 5000.1],
      // gap: 45..75 hold no reading
      [80, 5001.1], // the energy across the gap lands here
    ];
    const eai2: [number, number][] = [
      [0, 50],
      [14, 50.2],
    ];
    const readings: Reading[] = eai1.map(([m, v]) => ({ deviceKey: dev, ts: at(m), values: { eai1: v } }));
    for (const [m, v] of eai2) readings.push({ deviceKey: dev, ts: at(m), values: { eai2: v } });
    await ctx.store.write(readings);
    await refresh();
    const q = (interval: EnergyQuery['interval'], source?: 'raw') =>
      ctx.store.energy({
        deviceKey: dev,
        counters: ['eai1', 'eai'],
        from: at(0),
        to: at(90),
        interval,
        ...(source ? { source } : {}),
      });
    const starts = fixedBucketStarts(at(0), at(90), 15 * MINUTE_MS);
    const reference = energyPerBucket(
      eai1.map(([m, value]) => ({ ts: at(m), value })),
      starts,
      at(90),
      counterRules('eai1'),
    );
    expectClose(reference.energy, [0.6, 0.7, 0.1, null, null, 1]);
    for (const source of [undefined, 'raw'] as const) {
      const e15 = await q('15m', source);
      expect(e15.t).toEqual(starts);
      expectClose(e15.energy.eai1, [0.6, 0.7, 0.1, null, null, 1]);
      expectClose(e15.energy.eai, [0.8, 0.7, 0.1, null, null, 1]);
      expect(e15.resets).toEqual([{ counter: 'eai1', at: at(25) }]);
      expect(e15.implausible).toHaveLength(1);
      expect(e15.implausible[0]).toMatchObject({ counter: 'eai1', from: at(29), to: at(35) });
      expect(e15.implausible[0]!.delta).toBeCloseTo(4997.6, 9);
      const e30 = await q('30m', source);
      expectClose(e30.energy.eai1, [1.3, 0.1, 1]);
      expectClose(e30.energy.eai, [1.5, 0.1, 1]);
      const e1h = await q('1h', source);
      expectClose(e1h.energy.eai1, [1.4, 1]);
    }
  });

  it('counts daily buckets in the local zone: 23 h and 25 h days in Europe/Warsaw', async () => {
    for (const [y, mo, d, hours] of [
      [2026, 3, 29, 23],
      [2026, 10, 25, 25],
    ] as const) {
      const dev = newKey();
      const tz = 'Europe/Warsaw';
      const dayStart = zonedTimeToUtc(y, mo, d, 0, 0, 0, tz);
      const from = dayStart - DAY;
      const readings: Reading[] = [];
      // Hourly readings from two days before to two days after; +1 kWh and a constant voltage each hour.
      for (let i = 0, t = from - DAY; t < from + 4 * DAY; i++, t += HOUR_MS) {
        readings.push({ deviceKey: dev, ts: t, values: { eai1: 1000 + i, vave1: 230 } });
      }
      await ctx.store.write(readings);
      await refresh();
      const to = zonedTimeToUtc(y, mo, d + 2, 0, 0, 0, tz);
      for (const source of [undefined, 'raw'] as const) {
        const e = await ctx.store.energy({
          deviceKey: dev,
          counters: ['eai1'],
          from,
          to,
          interval: '1d',
          tz,
          ...(source ? { source } : {}),
        });
        expect(e.t).toEqual(calendarBucketStarts(from, to, 'day', tz));
        expect(e.t[2]! - e.t[1]!).toBe(hours * HOUR_MS);
        expectClose(e.energy.eai1, [24, hours, 24]);
        const s = await ctx.store.series({
          deviceKey: dev,
          params: ['vave1'],
          from,
          to,
          interval: '1d',
          tz,
          stats: ['avg'],
          ...(source ? { source } : {}),
        });
        expect(s.t).toEqual(e.t);
        expectClose(s.series.vave1!.avg, [230, 230, 230]);
      }
    }
  });

  it('counts daily buckets in a +05:30 zone (Asia/Kolkata) on quarter-hour boundaries', async () => {
    const dev = newKey();
    const tz = 'Asia/Kolkata';
    const dayStart = zonedTimeToUtc(2026, 6, 10, 0, 0, 0, tz);
    expect(dayStart % HOUR_MS).toBe(30 * MINUTE_MS);
    const readings: Reading[] = [];
    const q15 = 15 * MINUTE_MS;
    for (let i = 0, t = dayStart - DAY; t < dayStart + 2 * DAY; i++, t += q15) {
      readings.push({
        deviceKey: dev,
        ts: t,
        values: { eai1: 10 + i * 0.25, vave1: t < dayStart ? 220 : 240 },
      });
    }
    await ctx.store.write(readings);
    await refresh();
    for (const source of [undefined, 'raw'] as const) {
      const e = await ctx.store.energy({
        deviceKey: dev,
        counters: ['eai1'],
        from: dayStart,
        to: dayStart + DAY,
        interval: '1d',
        tz,
        ...(source ? { source } : {}),
      });
      expect(e.t).toEqual([dayStart]);
      expectClose(e.energy.eai1, [24]);
      const s = await ctx.store.series({
        deviceKey: dev,
        params: ['vave1'],
        from: dayStart - DAY,
        to: dayStart + DAY,
        interval: '1d',
        tz,
        stats: ['min', 'max'],
        ...(source ? { source } : {}),
      });
      expectClose(s.series.vave1!.min, [220, 240]);
      expectClose(s.series.vave1!.max, [220, 240]);
    }
  });

  it('sums energy into calendar months in the local zone', async () => {
    const dev = newKey();
    const tz = 'Europe/Warsaw';
    const readings: Reading[] = [];
    // Every 6 hours (UTC) from mid-January to mid-April, +1 kWh each.
    for (let i = 0, t = Date.UTC(2026, 0, 15); t < Date.UTC(2026, 3, 15); i++, t += 6 * HOUR_MS) {
      readings.push({ deviceKey: dev, ts: t, values: { eai1: i, eae1: 0 } });
    }
    await ctx.store.write(readings);
    await refresh();
    const from = zonedTimeToUtc(2026, 2, 1, 0, 0, 0, tz);
    const to = zonedTimeToUtc(2026, 4, 1, 0, 0, 0, tz);
    // Counter buckets are (start, end]: a month holds the steps of the readings after its start, up to its end.
    const expected = [
      readings.filter((r) => r.ts > from && r.ts <= zonedTimeToUtc(2026, 3, 1, 0, 0, 0, tz)).length,
      readings.filter((r) => r.ts > zonedTimeToUtc(2026, 3, 1, 0, 0, 0, tz) && r.ts <= to).length,
    ];
    expect(expected).toEqual([112, 124]);
    for (const source of [undefined, 'raw'] as const) {
      const e = await ctx.store.energy({
        deviceKey: dev,
        counters: ['eai1', 'eae1'],
        from,
        to,
        interval: '1mo',
        tz,
        ...(source ? { source } : {}),
      });
      expect(e.t).toEqual([from, zonedTimeToUtc(2026, 3, 1, 0, 0, 0, tz)]);
      expectClose(e.energy.eai1, expected);
      expectClose(e.energy.eae1, [0, 0]);
    }
  });
}
