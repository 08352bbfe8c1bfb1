/** Rollups answer what raw readings answer, and a late reading re-opens the bucket it falls in. */
import {
  counterRules,
  energyPerBucket,
  fixedBucketStarts,
  HOUR_MS,
  MINUTE_MS,
  type Reading,
} from '@kilowatch/core';
import { expect, it } from 'vitest';
import { type EnergyQuery, type SeriesQuery, seriesOfMany } from '../port.ts';
import { type Conformance, DAY, expectClose, newKey, rng } from './context.ts';

export function rollupCases(ctx: Conformance): void {
  const { T0, refresh } = ctx;

  it('gives the same numbers from rollups as from raw readings on random data', async () => {
    const dev = newKey();
    const rand = rng(42);
    const readings: Reading[] = [];
    const tz = 'Europe/Warsaw';
    const start = Date.UTC(2026, 2, 28, 12);
    const counters = [1000, 2000, 3000];
    // A register that never drops beside ones that do: the refresh steps it without the running maximum.
    let exported = 500;
    for (let t = start; t < start + 3 * DAY; t += MINUTE_MS) {
      if (rand() < 0.05) continue; // missing readings
      if (t > start + 20 * HOUR_MS && t < start + 23 * HOUR_MS) continue; // a longer gap
      const values: Record<string, number> = {};
      for (let p = 1; p <= 3; p++) {
        if (rand() < 0.1) continue; // a phase missing from this reading
        values[`vave${p}`] = 220 + rand() * 20;
        values[`pave${p}`] = -2000 + rand() * 8000;
        let c = counters[p - 1]! + rand() * 0.05;
        const r = rand();
        if (r < 0.002)
          c = rand() * 5; // meter replaced
        else if (r < 0.004) c += 1000 + rand() * 1000; // implausible jump
        counters[p - 1] = c;
        values[`eai${p}`] = r > 0.9 ? Math.round((c - 0.005) * 1000) / 1000 : c; // jitter below
      }
      const e = rand();
      if (e < 0.003)
        exported += 1000 + rand() * 1000; // implausible jump
      else if (e > 0.2) exported += rand() * 0.04; // else flat
      values.eae1 = exported;
      readings.push({ deviceKey: dev, ts: t, values });
    }
    // Refreshed in two parts, so the second starts from the seeds the first left (a baseline above the
    // last register value where the first part ended on jitter).
    const half = start + 36 * HOUR_MS + 7 * MINUTE_MS;
    await ctx.store.write(readings.filter((r) => r.ts < half));
    await refresh();
    await ctx.store.write(readings.filter((r) => r.ts >= half));
    await refresh();
    const from = start + 7 * MINUTE_MS;
    const to = start + 3 * DAY - 11 * MINUTE_MS;
    for (const interval of ['15m', '30m', '1h', '1d'] as const) {
      const q: SeriesQuery = {
        deviceKey: dev,
        params: ['vave', 'vave1', 'pave', 'pave3'],
        from,
        to,
        interval,
        tz,
        stats: ['min', 'avg', 'max'],
      };
      const a = await ctx.store.series(q);
      const b = await ctx.store.series({ ...q, source: 'raw' });
      expect(a.t).toEqual(b.t);
      for (const p of q.params)
        for (const s of q.stats)
          expectClose(
            a.series[p]![s],
            b.series[p]![s]!.map((v) => v),
          );
      // Fewer statistics from raw readings, alone and beside another answer on the same parameter.
      const [maxOnly, avgMin, avgOnly] = await seriesOfMany(ctx.store, [
        { ...q, source: 'raw', stats: ['max'] },
        { ...q, source: 'raw', stats: ['avg', 'min'] },
        { ...q, source: 'raw', params: ['vave1'], stats: ['avg'] },
      ]);
      const alone = await ctx.store.series({ ...q, source: 'raw', stats: ['min'] });
      for (const p of q.params) {
        expect(Object.keys(maxOnly!.series[p]!)).toEqual(['max']);
        expect(maxOnly!.series[p]!.max).toEqual(b.series[p]!.max);
        expect(Object.keys(avgMin!.series[p]!).sort()).toEqual(['avg', 'min']);
        expectClose(avgMin!.series[p]!.avg, b.series[p]!.avg!);
        expect(avgMin!.series[p]!.min).toEqual(b.series[p]!.min);
        expect(Object.keys(alone.series[p]!)).toEqual(['min']);
        expect(alone.series[p]!.min).toEqual(b.series[p]!.min);
      }
      expect(Object.keys(avgOnly!.series)).toEqual(['vave1']);
      expectClose(avgOnly!.series.vave1!.avg, b.series.vave1!.avg!);
    }
    for (const interval of ['15m', '30m', '1h', '1d', '1mo'] as const) {
      const q: EnergyQuery = {
        deviceKey: dev,
        counters: ['eai', 'eai1', 'eai2', 'eae1'],
        from,
        to,
        interval,
        tz,
      };
      const a = await ctx.store.energy(q);
      const b = await ctx.store.energy({ ...q, source: 'raw' });
      expect(a.t).toEqual(b.t);
      for (const c of q.counters) expectClose(a.energy[c], b.energy[c]!);
      const key = (x: { counter: string; at?: number; to?: number }) => `${x.counter}@${x.at ?? x.to}`;
      expect(a.resets.map(key).sort()).toEqual(b.resets.map(key).sort());
      expect(a.implausible.map(key).sort()).toEqual(b.implausible.map(key).sort());
      // Without its events an answer keeps its energy.
      const bare = await ctx.store.energy({ ...q, events: false });
      expect(bare.t).toEqual(a.t);
      for (const c of q.counters) expect(bare.energy[c]).toEqual(a.energy[c]);
      expect([bare.resets, bare.implausible]).toEqual([[], []]);
    }
    // And the same as the reference implementation in core, bucket by bucket.
    const starts = fixedBucketStarts(from, to, HOUR_MS);
    const end = starts[starts.length - 1]! + HOUR_MS;
    for (const counter of ['eai2', 'eae1']) {
      const points = readings
        .filter((r) => r.values[counter] !== undefined && r.ts <= end)
        .map((r) => ({ ts: r.ts, value: r.values[counter]! }));
      // The readings at or before the first start replay the history before the range (the baseline).
      const ref = energyPerBucket(points, starts, end, counterRules(counter));
      const got = await ctx.store.energy({ deviceKey: dev, counters: [counter], from, to, interval: '1h' });
      expectClose(got.energy[counter], ref.energy);
      expect(got.resets.length + got.implausible.length).toBeGreaterThan(0);
      if (counter === 'eae1') expect(got.resets).toEqual([]);
    }
  });

  it('re-opens a closed bucket when late data arrives', async () => {
    const dev = newKey();
    const at = (m: number) => T0 + m * MINUTE_MS;
    const readings: Reading[] = [];
    // Minutes 0..119 except 30..45, +0.01 kWh per minute: the quarter (30, 45] holds no reading.
    for (let m = 0; m < 120; m++) {
      if (m >= 30 && m <= 45) continue;
      readings.push({ deviceKey: dev, ts: at(m), values: { eai1: 100 + m * 0.01, vave1: 230 } });
    }
    await ctx.store.write(readings);
    const first = await ctx.store.refreshRollups(at(240));
    expect(first.buckets).toBeGreaterThan(0);
    const q = () =>
      ctx.store.energy({ deviceKey: dev, counters: ['eai1'], from: at(0), to: at(60), interval: '15m' });
    // The reading at 0 is the baseline; across the gap, 29 → 46 lands in the quarter 46 closes.
    expectClose((await q()).energy.eai1, [0.15, 0.14, null, 0.31]);
    // Late readings fill the gap, one with a voltage dip, hours after the bucket closed.
    await ctx.store.write(
      Array.from({ length: 16 }, (_, i) => ({
        deviceKey: dev,
        ts: at(30 + i),
        values: { eai1: 100 + (30 + i) * 0.01, vave1: i === 7 ? 180 : 230 },
      })),
    );
    const second = await ctx.store.refreshRollups(at(300));
    expect(second.buckets).toBeGreaterThan(0);
    expectClose((await q()).energy.eai1, [0.15, 0.15, 0.15, 0.15]);
    const s = await ctx.store.series({
      deviceKey: dev,
      params: ['vave1'],
      from: at(0),
      to: at(120),
      interval: '1h',
      stats: ['min'],
    });
    expectClose(s.series.vave1!.min, [180, 230]);
    const h = await ctx.store.energy({
      deviceKey: dev,
      counters: ['eai1'],
      from: at(0),
      to: at(120),
      interval: '1h',
    });
    // (0, 60] holds the steps of minutes 1..60, (60, 120] those of 61..119.
    expectClose(h.energy.eai1, [0.6, 0.59]);
  });
}
