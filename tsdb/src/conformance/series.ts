/** Bucketed series: statistics per bucket, gaps, several series at once, combined phases. */
import { fixedBucketStarts, HOUR_MS, MINUTE_MS, type Reading } from '@kilowatch/core';
import { expect, it } from 'vitest';
import { type SeriesQuery, seriesOfMany } from '../port.ts';
import { type Conformance, DAY, expectClose, newKey } from './context.ts';

export function seriesCases(ctx: Conformance): void {
  const { T0, refresh } = ctx;

  it('answers bucketed series (raw, 15m, 30m, 1h) with min/avg/max and null gaps', async () => {
    const dev = newKey();
    const readings: Reading[] = [];
    for (let m = 0; m < 30; m++)
      readings.push({ deviceKey: dev, ts: T0 + m * MINUTE_MS, values: { vave1: 200 + m } });
    for (let m = 90; m < 100; m++)
      readings.push({ deviceKey: dev, ts: T0 + m * MINUTE_MS, values: { vave1: 250 } });
    await ctx.store.write(readings);
    await refresh();
    const q = (interval: SeriesQuery['interval'], source?: 'raw') =>
      ctx.store.series({
        deviceKey: dev,
        params: ['vave1'],
        from: T0,
        to: T0 + 2 * HOUR_MS,
        interval,
        stats: ['min', 'avg', 'max'],
        ...(source ? { source } : {}),
      });
    for (const source of [undefined, 'raw'] as const) {
      const s15 = await q('15m', source);
      expect(s15.t).toEqual(fixedBucketStarts(T0, T0 + 2 * HOUR_MS, 15 * MINUTE_MS));
      expectClose(s15.series.vave1!.avg, [207, 222, null, null, null, null, 250, null]);
      expectClose(s15.series.vave1!.min, [200, 215, null, null, null, null, 250, null]);
      expectClose(s15.series.vave1!.max, [214, 229, null, null, null, null, 250, null]);
      const s30 = await q('30m', source);
      expect(s30.t).toEqual([0, 1, 2, 3].map((i) => T0 + i * 30 * MINUTE_MS));
      expectClose(s30.series.vave1!.avg, [214.5, null, null, 250]);
      expectClose(s30.series.vave1!.min, [200, null, null, 250]);
      const s1h = await q('1h', source);
      expect(s1h.t).toEqual([T0, T0 + HOUR_MS]);
      expectClose(s1h.series.vave1!.avg, [214.5, 250]);
      expectClose(s1h.series.vave1!.max, [229, 250]);
    }
    const raw = await q('raw');
    expect(raw.t).toEqual(readings.map((r) => r.ts));
    expect(raw.series.vave1!.avg).toEqual(readings.map((r) => r.values.vave1));
  });

  it('answers several series at once (a comparison) as each would be answered alone', async () => {
    const [a, b, none] = [newKey(), newKey(), newKey()];
    const tz = 'Europe/Warsaw';
    // Across the spring-forward day (29 March 2026 in Warsaw is 23 hours long).
    const start = Date.UTC(2026, 2, 27, 12);
    const readings: Reading[] = [];
    for (let t = start; t < start + 3 * DAY; t += 5 * MINUTE_MS) {
      const m = (t - start) / MINUTE_MS;
      readings.push({ deviceKey: a, ts: t, values: { vave1: 220 + (m % 17), vave2: 230, pave1: m % 50 } });
      if (m % 3 !== 0) readings.push({ deviceKey: b, ts: t, values: { vave1: 240 - (m % 7), pave2: 5 } });
    }
    await ctx.store.write(readings);
    await refresh();
    const from = start + 7 * MINUTE_MS;
    const to = start + 3 * DAY - 11 * MINUTE_MS;
    for (const interval of ['15m', '1h', '1d'] as const)
      for (const source of [undefined, 'raw'] as const) {
        const base = { from, to, interval, tz, ...(source ? { source } : {}) };
        const queries: SeriesQuery[] = [
          { ...base, deviceKey: a, params: ['vave1'], stats: ['avg'] },
          { ...base, deviceKey: b, params: ['vave1', 'pave'], stats: ['min', 'avg', 'max'] },
          { ...base, deviceKey: a, params: ['vave1', 'vave'], stats: ['max'] }, // a repeated member
          { ...base, deviceKey: none, params: ['vave1'], stats: ['avg'] }, // no data
        ];
        const many = await seriesOfMany(ctx.store, queries);
        expect(many).toHaveLength(queries.length);
        for (const [k, q] of queries.entries()) {
          const one = await ctx.store.series(q);
          const got = many[k]!;
          expect(got.t, `${interval} ${source ?? 'rollups'} #${k}`).toEqual(one.t);
          expect(Object.keys(got.series).sort()).toEqual(Object.keys(one.series).sort());
          for (const p of Object.keys(one.series)) {
            expect(Object.keys(got.series[p]!).sort()).toEqual(q.stats.slice().sort());
            for (const st of q.stats) expectClose(got.series[p]![st], one.series[p]![st]!);
          }
        }
        expect(many[3]!.series.vave1!.avg!.every((v) => v === null)).toBe(true);
        if (interval === '1d') {
          // 28 March is 24 hours long, 29 March (clocks forward) 23.
          expect(many[0]!.t.slice(1, 3).map((t, i) => many[0]!.t[i + 2]! - t)).toEqual([
            24 * HOUR_MS,
            23 * HOUR_MS,
          ]);
          const bMax = many[1]!.series.vave1!.max!;
          expect(bMax.filter((v) => v !== null).every((v) => v! <= 240 && v! >= 234)).toBe(true);
        }
      }
  });

  it('answers null where a parameter is missing while others of the same device and of other devices are there', async () => {
    const [a, b] = [newKey(), newKey()];
    const readings: Reading[] = [];
    // A day at 1-minute steps: `a` reports vave1 throughout and vave2 except from 12:00 to 18:00; `b`
    // reports vave2 throughout.
    for (let m = 0; m < 24 * 60; m++) {
      const ts = T0 + m * MINUTE_MS;
      const gap = m >= 12 * 60 && m < 18 * 60;
      readings.push({
        deviceKey: a,
        ts,
        values: { vave1: 220 + (m % 15), ...(gap ? {} : { vave2: 230 }) },
      });
      readings.push({ deviceKey: b, ts, values: { vave2: 240 } });
    }
    await ctx.store.write(readings);
    await refresh();
    const buckets = 96;
    const inGap = (i: number) => i >= 48 && i < 72;
    for (const source of [undefined, 'raw'] as const) {
      const base = { from: T0, to: T0 + DAY, interval: '15m' as const, ...(source ? { source } : {}) };
      const label = source ?? 'rollups';
      const one = await ctx.store.series({
        ...base,
        deviceKey: a,
        params: ['vave1', 'vave2'],
        stats: ['min', 'avg', 'max'],
      });
      expect(one.series.vave1!.avg, label).toEqual(new Array(buckets).fill(227));
      expect(one.series.vave1!.min, label).toEqual(new Array(buckets).fill(220));
      for (const st of ['min', 'avg', 'max'] as const)
        expect(one.series.vave2![st], `${label} ${st}`).toEqual(
          Array.from({ length: buckets }, (_, i) => (inGap(i) ? null : 230)),
        );
      const [ma, mb] = await seriesOfMany(ctx.store, [
        { ...base, deviceKey: a, params: ['vave2'], stats: ['avg'] },
        { ...base, deviceKey: b, params: ['vave2'], stats: ['avg'] },
      ]);
      expect(ma!.series.vave2!.avg, label).toEqual(one.series.vave2!.avg);
      expect(mb!.series.vave2!.avg, label).toEqual(new Array(buckets).fill(240));
    }
    // Raw readings from 11:00 to 13:00: vave2 is there for the first hour only.
    const raw = await ctx.store.series({
      deviceKey: a,
      params: ['vave1', 'vave2'],
      from: T0 + 11 * HOUR_MS,
      to: T0 + 13 * HOUR_MS,
      interval: 'raw',
      stats: ['avg'],
    });
    expect(raw.t).toEqual(Array.from({ length: 120 }, (_, k) => T0 + 11 * HOUR_MS + k * MINUTE_MS));
    expect(raw.series.vave1!.avg).toEqual(Array.from({ length: 120 }, (_, k) => 220 + ((660 + k) % 15)));
    expect(raw.series.vave2!.avg).toEqual(Array.from({ length: 120 }, (_, k) => (k < 60 ? 230 : null)));
  });

  it('combines phases: voltages averaged, powers summed, per reading', async () => {
    const dev = newKey();
    await ctx.store.write([
      {
        deviceKey: dev,
        ts: T0,
        values: { vave1: 230, vave2: 232, vave3: 234, pave1: 100, pave2: 200, pave3: 300 },
      },
      { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 230, vave2: 240, pave1: 50 } },
    ]);
    await refresh();
    for (const source of [undefined, 'raw'] as const) {
      const s = await ctx.store.series({
        deviceKey: dev,
        params: ['vave', 'pave', 'vave2'],
        from: T0,
        to: T0 + HOUR_MS,
        interval: '1h',
        stats: ['min', 'avg', 'max'],
        ...(source ? { source } : {}),
      });
      expectClose(s.series.vave!.avg, [233.5]);
      expectClose(s.series.vave!.min, [232]);
      expectClose(s.series.vave!.max, [235]);
      expectClose(s.series.pave!.avg, [325]);
      expectClose(s.series.pave!.min, [50]);
      expectClose(s.series.pave!.max, [600]);
      expectClose(s.series.vave2!.avg, [236]);
    }
    const raw = await ctx.store.series({
      deviceKey: dev,
      params: ['vave', 'pave'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: 'raw',
      stats: ['avg'],
    });
    expect(raw.t).toEqual([T0, T0 + MINUTE_MS]);
    expectClose(raw.series.vave!.avg, [232, 235]);
    expectClose(raw.series.pave!.avg, [600, 50]);
  });
}
