/**
 * The TelemetryStore conformance suite: every engine runs it (DuckDB in memory and on disk, InfluxDB
 * against a real server). Each test uses fresh device keys, so one store can serve the whole suite.
 *
 *   describeTelemetryStoreConformance('duckdb (memory)', () => createDuckDbStore());
 */
import { randomBytes } from 'node:crypto';
import {
  calendarBucketStarts,
  counterRules,
  energyPerBucket,
  fixedBucketStarts,
  HOUR_MS,
  hourlyBalance,
  MINUTE_MS,
  type Reading,
  zonedTimeToUtc,
} from '@kilowatch/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EnergyQuery,
  type RawRow,
  type SeriesQuery,
  seriesOfMany,
  type TelemetryStore,
} from './port.ts';

const DAY = 24 * HOUR_MS;

function newKey(): string {
  return randomBytes(6).toString('hex');
}

function expectClose(
  actual: readonly (number | null)[] | undefined,
  expected: readonly (number | null)[],
): void {
  expect(actual).toBeDefined();
  expect(actual!.length).toBe(expected.length);
  actual!.forEach((v, i) => {
    const e = expected[i];
    if (e === null || e === undefined) expect(v, `bucket ${i}`).toBeNull();
    else {
      expect(v, `bucket ${i}`).not.toBeNull();
      expect(v!, `bucket ${i}`).toBeCloseTo(e, 9);
    }
  });
}

async function collect(it: AsyncIterable<RawRow[]>): Promise<RawRow[][]> {
  const pages: RawRow[][] = [];
  for await (const p of it) pages.push(p);
  return pages;
}

/** Deterministic pseudo-random numbers (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function describeTelemetryStoreConformance(label: string, open: () => Promise<TelemetryStore>): void {
  describe(`TelemetryStore conformance: ${label}`, () => {
    let store: TelemetryStore;
    beforeAll(async () => {
      store = await open();
    });
    afterAll(async () => {
      await store?.close();
    });

    const T0 = Date.UTC(2026, 0, 5); // a Monday, 00:00 UTC
    const refresh = () => store.refreshRollups(Date.UTC(2030, 0, 1));

    it('writes idempotently on (device, ts); a partial re-write replaces only the values it carries', async () => {
      const dev = newKey();
      expect(await store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230, iave1: 5 } }])).toEqual({
        written: 1,
      });
      await store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230, iave1: 5 } }]);
      await store.write([{ deviceKey: dev, ts: T0, values: { vave1: 231.5 } }]);
      // Duplicates within one batch merge as well; the later value wins.
      await store.write([
        { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 1, iave1: 2 } },
        { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 3 } },
      ]);
      const page = await store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 100 });
      expect(page.items).toEqual([
        { ts: T0, values: { vave1: 231.5, iave1: 5 } },
        { ts: T0 + MINUTE_MS, values: { vave1: 3, iave1: 2 } },
      ]);
      expect(page.nextCursor).toBeNull();
      expect(await store.devices()).toContain(dev);
    });

    it('refuses a batch with an unknown parameter or a non-finite value and stores none of it', async () => {
      const dev = newKey();
      await store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230 } }]);
      await expect(
        store.write([
          { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 231 } },
          { deviceKey: dev, ts: T0 + 2 * MINUTE_MS, values: { nosuch: 1 } },
        ]),
      ).rejects.toMatchObject({ name: 'StoreError', retryable: false });
      await expect(
        store.write([{ deviceKey: dev, ts: T0 + 3 * MINUTE_MS, values: { vave1: Number.NaN } }]),
      ).rejects.toMatchObject({ name: 'StoreError', retryable: false });
      const page = await store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 100 });
      expect(page.items).toEqual([{ ts: T0, values: { vave1: 230 } }]);
    });

    it('refuses a malformed query the same way on every engine, and answers an empty range empty', async () => {
      const dev = newKey();
      await store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230, eai1: 100 } }]);
      await refresh();
      const series = {
        deviceKey: dev,
        params: ['vave1'],
        from: T0,
        to: T0 + HOUR_MS,
        interval: '15m',
        stats: ['avg'],
      } as const;
      const energy = {
        deviceKey: dev,
        counters: ['eai1'],
        from: T0,
        to: T0 + HOUR_MS,
        interval: '1h',
      } as const;
      const refused = { name: 'StoreError', kind: 'rejected', retryable: false };
      for (const bad of [
        { ...series, to: T0 - HOUR_MS },
        { ...series, from: T0 + 0.5 },
        { ...series, to: Number.NaN },
        { ...series, params: ['nosuch'] },
        { ...series, stats: ['median' as never] },
        { ...series, interval: '5m' as never },
        { ...series, interval: '1d', tz: 'Mars/Olympus' },
      ] as SeriesQuery[]) {
        await expect(store.series(bad), JSON.stringify(bad)).rejects.toMatchObject(refused);
      }
      await expect(store.energy({ ...energy, to: T0 - 1 })).rejects.toMatchObject(refused);
      await expect(store.energy({ ...energy, counters: ['vave1'] })).rejects.toMatchObject(refused);
      await expect(
        store.readRaw({ deviceKey: dev, from: T0 + HOUR_MS, to: T0, limit: 10 }),
      ).rejects.toMatchObject(refused);
      await expect(
        store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 0 }),
      ).rejects.toMatchObject(refused);

      // `from == to` is an empty range: no buckets, no rows.
      const empty = await store.series({ ...series, to: T0 });
      expect(empty.t).toEqual([]);
      expect(empty.series.vave1?.avg ?? []).toEqual([]);
      expect((await store.energy({ ...energy, to: T0 })).t).toEqual([]);
      expect((await store.readRaw({ deviceKey: dev, from: T0, to: T0, limit: 10 })).items).toEqual([]);
      // No statistics listed means all three.
      const all = await store.series({ ...series, stats: [] });
      expect(Object.keys(all.series.vave1 ?? {}).sort()).toEqual(['avg', 'max', 'min']);
      expect(all.series.vave1?.min?.[0]).toBe(230);
    });

    it('a closed store refuses every call as unavailable (503), not as a fault', async () => {
      const other = await open();
      await other.close();
      const unavailable = { name: 'StoreError', kind: 'unavailable' };
      await expect(
        other.series({
          deviceKey: newKey(),
          params: ['vave1'],
          from: T0,
          to: T0 + HOUR_MS,
          interval: '1h',
          stats: ['avg'],
        }),
      ).rejects.toMatchObject(unavailable);
      await expect(
        other.write([{ deviceKey: newKey(), ts: T0, values: { vave1: 1 } }]),
      ).rejects.toMatchObject(unavailable);
      await expect(other.latest(newKey())).rejects.toMatchObject(unavailable);
    });

    it('reads raw readings in pages with a cursor and as a stream, in time order', async () => {
      const dev = newKey();
      const readings: Reading[] = Array.from({ length: 25 }, (_, i) => ({
        deviceKey: dev,
        ts: T0 + i * MINUTE_MS,
        values: { vave1: 200 + i, iave1: i },
      }));
      // Written out of order on purpose.
      await store.write(readings.slice(10));
      await store.write(readings.slice(0, 10));
      const seen: number[] = [];
      let cursor: string | null = null;
      const sizes: number[] = [];
      for (let guard = 0; guard < 10; guard++) {
        const page = await store.readRaw({
          deviceKey: dev,
          from: T0,
          to: T0 + DAY,
          limit: 10,
          params: ['vave1'],
          cursor,
        });
        sizes.push(page.items.length);
        for (const row of page.items) {
          expect(row.values).toEqual({ vave1: 200 + (row.ts - T0) / MINUTE_MS });
          seen.push(row.ts);
        }
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      expect(sizes).toEqual([10, 10, 5]);
      expect(seen).toEqual(readings.map((r) => r.ts));
      const pages = await collect(
        store.streamRaw({ deviceKey: dev, from: T0 + 5 * MINUTE_MS, to: T0 + DAY, pageSize: 7 }),
      );
      expect(pages.map((p) => p.length)).toEqual([7, 7, 6]);
      expect(pages.flat().map((r) => r.ts)).toEqual(readings.slice(5).map((r) => r.ts));
      expect(pages[0]![0]!.values).toEqual({ vave1: 205, iave1: 5 });
    });

    it('answers bucketed series (raw, 15m, 30m, 1h) with min/avg/max and null gaps', async () => {
      const dev = newKey();
      const readings: Reading[] = [];
      for (let m = 0; m < 30; m++)
        readings.push({ deviceKey: dev, ts: T0 + m * MINUTE_MS, values: { vave1: 200 + m } });
      for (let m = 90; m < 100; m++)
        readings.push({ deviceKey: dev, ts: T0 + m * MINUTE_MS, values: { vave1: 250 } });
      await store.write(readings);
      await refresh();
      const q = (interval: SeriesQuery['interval'], source?: 'raw') =>
        store.series({
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
      await store.write(readings);
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
          const many = await seriesOfMany(store, queries);
          expect(many).toHaveLength(queries.length);
          for (const [k, q] of queries.entries()) {
            const one = await store.series(q);
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
      await store.write(readings);
      await refresh();
      const buckets = 96;
      const inGap = (i: number) => i >= 48 && i < 72;
      for (const source of [undefined, 'raw'] as const) {
        const base = { from: T0, to: T0 + DAY, interval: '15m' as const, ...(source ? { source } : {}) };
        const label = source ?? 'rollups';
        const one = await store.series({
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
        const [ma, mb] = await seriesOfMany(store, [
          { ...base, deviceKey: a, params: ['vave2'], stats: ['avg'] },
          { ...base, deviceKey: b, params: ['vave2'], stats: ['avg'] },
        ]);
        expect(ma!.series.vave2!.avg, label).toEqual(one.series.vave2!.avg);
        expect(mb!.series.vave2!.avg, label).toEqual(new Array(buckets).fill(240));
      }
      // Raw readings from 11:00 to 13:00: vave2 is there for the first hour only.
      const raw = await store.series({
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
      await store.write([
        {
          deviceKey: dev,
          ts: T0,
          values: { vave1: 230, vave2: 232, vave3: 234, pave1: 100, pave2: 200, pave3: 300 },
        },
        { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 230, vave2: 240, pave1: 50 } },
      ]);
      await refresh();
      for (const source of [undefined, 'raw'] as const) {
        const s = await store.series({
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
      const raw = await store.series({
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
      await store.write(readings);
      await refresh();
      const q = (interval: EnergyQuery['interval'], source?: 'raw') =>
        store.energy({
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
        await store.write(readings);
        await refresh();
        const to = zonedTimeToUtc(y, mo, d + 2, 0, 0, 0, tz);
        for (const source of [undefined, 'raw'] as const) {
          const e = await store.energy({
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
          const s = await store.series({
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
      await store.write(readings);
      await refresh();
      for (const source of [undefined, 'raw'] as const) {
        const e = await store.energy({
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
        const s = await store.series({
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
      await store.write(readings);
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
        const e = await store.energy({
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

    it('returns the newest value of every parameter', async () => {
      const dev = newKey();
      expect(await store.latest(dev)).toBeNull();
      await store.write([
        { deviceKey: dev, ts: T0, values: { vave1: 1, iave1: 2 } },
        { deviceKey: dev, ts: T0 + 2 * MINUTE_MS, values: { vave1: 3 } },
        { deviceKey: dev, ts: T0 + MINUTE_MS, values: { iave1: 4, eai1: 7 } },
      ]);
      expect(await store.latest(dev)).toEqual({
        ts: T0 + 2 * MINUTE_MS,
        values: { vave1: 3, iave1: 4, eai1: 7 },
      });
    });

    it('gives the same numbers from rollups as from raw readings on random data', async () => {
      const dev = newKey();
      const rand = rng(42);
      const readings: Reading[] = [];
      const tz = 'Europe/Warsaw';
      const start = Date.UTC(2026, 2, 28, 12);
      const counters = [1000, 2000, 3000];
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
        readings.push({ deviceKey: dev, ts: t, values });
      }
      await store.write(readings);
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
        const a = await store.series(q);
        const b = await store.series({ ...q, source: 'raw' });
        expect(a.t).toEqual(b.t);
        for (const p of q.params)
          for (const s of q.stats)
            expectClose(
              a.series[p]![s],
              b.series[p]![s]!.map((v) => v),
            );
        // Fewer statistics from raw readings, alone and beside another answer on the same parameter.
        const [maxOnly, avgMin, avgOnly] = await seriesOfMany(store, [
          { ...q, source: 'raw', stats: ['max'] },
          { ...q, source: 'raw', stats: ['avg', 'min'] },
          { ...q, source: 'raw', params: ['vave1'], stats: ['avg'] },
        ]);
        const alone = await store.series({ ...q, source: 'raw', stats: ['min'] });
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
        const q: EnergyQuery = { deviceKey: dev, counters: ['eai', 'eai1', 'eai2'], from, to, interval, tz };
        const a = await store.energy(q);
        const b = await store.energy({ ...q, source: 'raw' });
        expect(a.t).toEqual(b.t);
        for (const c of q.counters) expectClose(a.energy[c], b.energy[c]!);
        const key = (x: { counter: string; at?: number; to?: number }) => `${x.counter}@${x.at ?? x.to}`;
        expect(a.resets.map(key).sort()).toEqual(b.resets.map(key).sort());
        expect(a.implausible.map(key).sort()).toEqual(b.implausible.map(key).sort());
        // Without its events an answer keeps its energy.
        const bare = await store.energy({ ...q, events: false });
        expect(bare.t).toEqual(a.t);
        for (const c of q.counters) expect(bare.energy[c]).toEqual(a.energy[c]);
        expect([bare.resets, bare.implausible]).toEqual([[], []]);
      }
      // And the same as the reference implementation in core, bucket by bucket.
      const starts = fixedBucketStarts(from, to, HOUR_MS);
      const end = starts[starts.length - 1]! + HOUR_MS;
      const points = readings
        .filter((r) => r.values.eai2 !== undefined && r.ts <= end)
        .map((r) => ({ ts: r.ts, value: r.values.eai2! }));
      // The readings at or before the first start replay the history before the range (the baseline).
      const ref = energyPerBucket(points, starts, end, counterRules('eai2'));
      const got = await store.energy({ deviceKey: dev, counters: ['eai2'], from, to, interval: '1h' });
      expectClose(got.energy.eai2, ref.energy);
      expect(got.resets.length + got.implausible.length).toBeGreaterThan(0);
    });

    it('deletes every reading and rollup of one device and keeps the others', async () => {
      const gone = newKey();
      const kept = newKey();
      for (const dev of [gone, kept]) {
        await store.write([
          { deviceKey: dev, ts: T0, values: { vave1: 230, eai1: 1 } },
          { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 231, eai1: 2 } },
        ]);
      }
      await refresh();
      await store.deleteDevice(gone);
      await refresh();
      expect(await store.latest(gone)).toBeNull();
      expect((await store.readRaw({ deviceKey: gone, from: T0, to: T0 + HOUR_MS, limit: 10 })).items).toEqual(
        [],
      );
      const s = await store.series({
        deviceKey: gone,
        params: ['vave1'],
        from: T0,
        to: T0 + HOUR_MS,
        interval: '1h',
        stats: ['avg'],
      });
      expect(s.series.vave1!.avg).toEqual([null]);
      const e = await store.energy({
        deviceKey: gone,
        counters: ['eai1'],
        from: T0,
        to: T0 + HOUR_MS,
        interval: '1h',
      });
      expect(e.energy.eai1).toEqual([null]);
      const devices = await store.devices();
      expect(devices).not.toContain(gone);
      expect(devices).toContain(kept);
      const k = await store.energy({
        deviceKey: kept,
        counters: ['eai1'],
        from: T0,
        to: T0 + HOUR_MS,
        interval: '1h',
      });
      expectClose(k.energy.eai1, [1]);
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
      await store.write(readings);
      const first = await store.refreshRollups(at(240));
      expect(first.buckets).toBeGreaterThan(0);
      const q = () =>
        store.energy({ deviceKey: dev, counters: ['eai1'], from: at(0), to: at(60), interval: '15m' });
      // The reading at 0 is the baseline; across the gap, 29 → 46 lands in the quarter 46 closes.
      expectClose((await q()).energy.eai1, [0.15, 0.14, null, 0.31]);
      // Late readings fill the gap, one with a voltage dip, hours after the bucket closed.
      await store.write(
        Array.from({ length: 16 }, (_, i) => ({
          deviceKey: dev,
          ts: at(30 + i),
          values: { eai1: 100 + (30 + i) * 0.01, vave1: i === 7 ? 180 : 230 },
        })),
      );
      const second = await store.refreshRollups(at(300));
      expect(second.buckets).toBeGreaterThan(0);
      expectClose((await q()).energy.eai1, [0.15, 0.15, 0.15, 0.15]);
      const s = await store.series({
        deviceKey: dev,
        params: ['vave1'],
        from: at(0),
        to: at(120),
        interval: '1h',
        stats: ['min'],
      });
      expectClose(s.series.vave1!.min, [180, 230]);
      const h = await store.energy({
        deviceKey: dev,
        counters: ['eai1'],
        from: at(0),
        to: at(120),
        interval: '1h',
      });
      // (0, 60] holds the steps of minutes 1..60, (60, 120] those of 61..119.
      expectClose(h.energy.eai1, [0.6, 0.59]);
    });
    describe('counter buckets are (start, end]: a reading on an edge closes the bucket that ends there', () => {
      const H8 = Date.UTC(2026, 0, 12, 8); // a Monday, 08:00 UTC
      const both = [undefined, 'raw'] as const;
      const energyOf = (dev: string, q: Omit<EnergyQuery, 'deviceKey'>) =>
        store.energy({ deviceKey: dev, ...q });

      it('an hourly-only meter: 100, 101, 103, 106 kWh at 08:00..11:00 give 1, 2, 3 for 08:00, 09:00, 10:00', async () => {
        const dev = newKey();
        await store.write(
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
        await store.write(readings);
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
          const g = await store.series({
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
        await store.write(readings);
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
        await store.write(values.map((v, i) => ({ deviceKey: dev, ts: H8 + i * q15, values: { eai3: v } })));
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
          await store.write(readings);
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
        await store.write(readings);
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
  });
}
