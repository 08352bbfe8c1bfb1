/** Counter buckets are (start, end]: where a reading exactly on a bucket edge counts. */
import {
  calendarBucketStarts,
  HOUR_MS,
  hourlyBalance,
  MINUTE_MS,
  type Reading,
  zonedTimeToUtc,
} from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import type { EnergyQuery } from '../port.ts';
import { type Conformance, DAY, expectClose, newKey } from './context.ts';

export function edgeCases(ctx: Conformance): void {
  const { refresh } = ctx;

  describe('counter buckets are (start, end]: a reading on an edge closes the bucket that ends there', () => {
    const H8 = Date.UTC(2026, 0, 12, 8); // a Monday, 08:00 UTC
    const both = [undefined, 'raw'] as const;
    const energyOf = (dev: string, q: Omit<EnergyQuery, 'deviceKey'>) =>
      ctx.store.energy({ deviceKey: dev, ...q });

    it('an hourly-only meter: 100, 101, 103, 106 kWh at 08:00..11:00 give 1, 2, 3 for 08:00, 09:00, 10:00', async () => {
      const dev = newKey();
      await ctx.store.write(
        [100, 101, 103, 106].map((v, i) => ({ deviceKey: dev, ts: H8 + i * HOUR_MS, values: { eai1: v } })),
      );
      await refresh();
      for (const source of both) {
        const src = source ? { source } : {};
        const h = await energyOf(dev, {
          counters: ['eai1', 'eai'],
          from: H8,
          to: H8 + 3 * HOUR_MS,
          interval: '1h',
          ...src,
        });
        expect(h.t).toEqual([H8, H8 + HOUR_MS, H8 + 2 * HOUR_MS]);
        expectClose(h.energy.eai1, [1, 2, 3]);
        expectClose(h.energy.eai, [1, 2, 3]);
        // Each reading closes the last quarter and the last half hour of the hour before it.
        const q = await energyOf(dev, {
          counters: ['eai1'],
          from: H8,
          to: H8 + 3 * HOUR_MS,
          interval: '15m',
          ...src,
        });
        expectClose(q.energy.eai1, [null, null, null, 1, null, null, null, 2, null, null, null, 3]);
        const h30 = await energyOf(dev, {
          counters: ['eai1'],
          from: H8,
          to: H8 + 3 * HOUR_MS,
          interval: '30m',
          ...src,
        });
        expectClose(h30.energy.eai1, [null, 1, null, 2, null, 3]);
        // A range starting at 09:00 takes the 09:00 reading as its baseline, and one ending there its last.
        const later = await energyOf(dev, {
          counters: ['eai1'],
          from: H8 + HOUR_MS,
          to: H8 + 4 * HOUR_MS,
          interval: '1h',
          ...src,
        });
        expectClose(later.energy.eai1, [2, 3, null]);
        const earlier = await energyOf(dev, {
          counters: ['eai1'],
          from: H8 - HOUR_MS,
          to: H8 + HOUR_MS,
          interval: '1h',
          ...src,
        });
        // The first reading closes 07:00–08:00 with nothing counted before it: 0, not a gap.
        expectClose(earlier.energy.eai1, [0, 1]);
      }
    });

    it('a meter reporting every minute on the minute: each quarter holds the 15 minutes that end in it', async () => {
      const dev = newKey();
      const readings: Reading[] = [];
      // +m/1000 kWh in the minute ending at minute m, so every minute's step is told apart.
      let v = 500;
      for (let m = 0; m <= 120; m++) {
        if (m > 0) v += m / 1000;
        readings.push({
          deviceKey: dev,
          ts: H8 + m * MINUTE_MS,
          values: { eai2: v, vave2: 230 + (m % 60 === 0 ? 10 : 0) },
        });
      }
      await ctx.store.write(readings);
      await refresh();
      const sumOf = (a: number, b: number) => {
        let x = 0;
        for (let m = a; m <= b; m++) x += m / 1000;
        return x;
      };
      for (const source of both) {
        const src = source ? { source } : {};
        const q = await energyOf(dev, {
          counters: ['eai2'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '15m',
          ...src,
        });
        expectClose(
          q.energy.eai2,
          Array.from({ length: 8 }, (_, i) => sumOf(15 * i + 1, 15 * i + 15)),
        );
        const h = await energyOf(dev, {
          counters: ['eai2'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '1h',
          ...src,
        });
        expectClose(h.energy.eai2, [sumOf(1, 60), sumOf(61, 120)]);
        // Gauges keep [start, end): the sample at 09:00 is one of the 09:00 hour.
        const g = await ctx.store.series({
          deviceKey: dev,
          params: ['vave2'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '1h',
          stats: ['max', 'min'],
          ...src,
        });
        expectClose(g.series.vave2!.max, [240, 240]);
        expectClose(g.series.vave2!.min, [230, 230]);
      }
    });

    it('a 15-minute profile meter: each quarter and hour holds the readings stamped at its end', async () => {
      const dev = newKey();
      const steps = [0.1, 0.2, 0.3, 0.4, 1.1, 1.2, 1.3, 1.4];
      const readings: Reading[] = [{ deviceKey: dev, ts: H8, values: { energy3phases_import: 20 } }];
      let v = 20;
      steps.forEach((d, i) => {
        v += d;
        readings.push({
          deviceKey: dev,
          ts: H8 + (i + 1) * 15 * MINUTE_MS,
          values: { energy3phases_import: v },
        });
      });
      await ctx.store.write(readings);
      await refresh();
      for (const source of both) {
        const src = source ? { source } : {};
        const q = await energyOf(dev, {
          counters: ['energy3phases_import'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '15m',
          ...src,
        });
        expectClose(q.energy.energy3phases_import, steps);
        const h = await energyOf(dev, {
          counters: ['energy3phases_import'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '1h',
          ...src,
        });
        expectClose(h.energy.energy3phases_import, [1, 5]);
      }
    });

    it('a reset exactly on an edge contributes nothing to the hour it closes, and is an event of that hour', async () => {
      const dev = newKey();
      const q15 = 15 * MINUTE_MS;
      const values = [10, 10.5, 11, 11.5, 0.2, 0.6, 1, 1.4, 1.8];
      await ctx.store.write(
        values.map((v, i) => ({ deviceKey: dev, ts: H8 + i * q15, values: { eai3: v } })),
      );
      await refresh();
      for (const source of both) {
        const src = source ? { source } : {};
        const h = await energyOf(dev, {
          counters: ['eai3'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '1h',
          ...src,
        });
        expectClose(h.energy.eai3, [1.5, 1.6]);
        expect(h.resets).toEqual([{ counter: 'eai3', at: H8 + HOUR_MS }]);
        const q = await energyOf(dev, {
          counters: ['eai3'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '15m',
          ...src,
        });
        expectClose(q.energy.eai3, [0.5, 0.5, 0.5, 0, 0.4, 0.4, 0.4, 0.4]);
        // The hour starting at the reset does not hold it.
        const after = await energyOf(dev, {
          counters: ['eai3'],
          from: H8 + HOUR_MS,
          to: H8 + 2 * HOUR_MS,
          interval: '1h',
          ...src,
        });
        expectClose(after.energy.eai3, [1.6]);
        expect(after.resets).toEqual([]);
      }
    });

    it('local midnights close their days, on the DST days of Europe/Warsaw too', async () => {
      const tz = 'Europe/Warsaw';
      for (const [y, mo, d, hours] of [
        [2026, 3, 29, 23],
        [2026, 10, 25, 25],
      ] as const) {
        const dev = newKey();
        const dayStart = zonedTimeToUtc(y, mo, d, 0, 0, 0, tz);
        const from = dayStart - DAY;
        const to = zonedTimeToUtc(y, mo, d + 2, 0, 0, 0, tz);
        const midnights = new Set(calendarBucketStarts(from - DAY, to + 2 * DAY, 'day', tz));
        // Hourly readings; the hour ending at a local midnight adds 100 kWh, every other hour 1 kWh.
        const readings: Reading[] = [];
        let v = 1000;
        for (let t = from - DAY; t <= to + DAY; t += HOUR_MS) {
          v += midnights.has(t) ? 100 : 1;
          readings.push({ deviceKey: dev, ts: t, values: { eai1: v } });
        }
        await ctx.store.write(readings);
        await refresh();
        for (const source of both) {
          const src = source ? { source } : {};
          const e = await energyOf(dev, { counters: ['eai1'], from, to, interval: '1d', tz, ...src });
          expect(e.t).toEqual(calendarBucketStarts(from, to, 'day', tz));
          expectClose(e.energy.eai1, [123, hours - 1 + 100, 123]);
          const m = await energyOf(dev, {
            counters: ['eai1'],
            from: dayStart,
            to: dayStart + hours * HOUR_MS,
            interval: '1h',
            tz,
            ...src,
          });
          expect(m.t).toHaveLength(hours);
          expectClose(m.energy.eai1, [...new Array(hours - 1).fill(1), 100]);
        }
      }
    });

    it('the hourly balance: L1 importing 1.0 kWh while L2 exports 0.6 in 08:00–09:00 nets +0.4', async () => {
      const dev = newKey();
      const tz = 'Europe/Warsaw';
      const readings: Reading[] = [];
      // Minute readings 08:00..10:00; L1 imports 1.0 then 0.2 kWh an hour, L2 exports 0.6 then 1.2.
      for (let m = 0; m <= 120; m++) {
        const h1 = Math.min(m, 60) / 60;
        const h2 = Math.max(m - 60, 0) / 60;
        readings.push({
          deviceKey: dev,
          ts: H8 + m * MINUTE_MS,
          values: { eai1: 300 + h1 * 1.0 + h2 * 0.2, eae1: 7, eai2: 40, eae2: 90 + h1 * 0.6 + h2 * 1.2 },
        });
      }
      await ctx.store.write(readings);
      await refresh();
      for (const source of both) {
        const src = source ? { source } : {};
        const h = await energyOf(dev, {
          counters: ['eai', 'eae'],
          from: H8,
          to: H8 + 2 * HOUR_MS,
          interval: '1h',
          tz,
          ...src,
        });
        const b = hourlyBalance([h.energy.eai!], [h.energy.eae!]);
        expectClose(b.balance, [0.4, -1.0]);
        const day = zonedTimeToUtc(2026, 1, 12, 0, 0, 0, tz);
        const d = await energyOf(dev, {
          counters: ['eai', 'eae'],
          from: day,
          to: day + DAY,
          interval: '1d',
          tz,
          ...src,
        });
        expectClose(hourlyBalance([d.energy.eai!], [d.energy.eae!]).balance, [-0.6]);
      }
    });
  });
}
