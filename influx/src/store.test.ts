/**
 * The InfluxDB engine against a real influxd, beyond the conformance suite: idempotent writes, paging,
 * latest, series and energy from rollups equal to raw (DST days, months, phases, older counter rules),
 * late data, deletes, refused input and odd device keys. Other writers and server outages:
 * outages.test.ts.
 */
import { addLocalDays, HOUR_MS, type Reading, zonedTimeToUtc } from '@kilowatch/core';
import type { InfluxTestServer } from '@kilowatch/testkit';
import { StoreError } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InfluxClient } from './client.ts';
import { createInfluxStore, type InfluxTelemetryStore } from './store.ts';
import { device, MIN, skip, startEngine, stopEngine, T0 } from './testing.ts';

describe.skipIf(skip !== null)('InfluxDB engine against a real influxd', () => {
  let server: InfluxTestServer;
  let store: InfluxTelemetryStore;
  beforeAll(async () => ({ server, store } = await startEngine()), 60_000);
  afterAll(() => stopEngine(server, store));

  it('writes idempotently: a re-write replaces the values it carries and keeps the others', async () => {
    const d = device();
    expect(await store.write([{ deviceKey: d, ts: T0, values: { vave1: 230, vave2: 231 } }])).toEqual({
      written: 1,
    });
    await store.write([{ deviceKey: d, ts: T0, values: { vave1: 229.5 } }]);
    const page = await store.readRaw({ deviceKey: d, from: T0, to: T0 + 1, limit: 10 });
    expect(page).toEqual({ items: [{ ts: T0, values: { vave1: 229.5, vave2: 231 } }], nextCursor: null });
  });

  it('pages raw readings with a cursor and streams them in bounded pages', async () => {
    const d = device();
    const rows: Reading[] = Array.from({ length: 25 }, (_, i) => ({
      deviceKey: d,
      ts: T0 + i * MIN,
      values: { pave1: i, vave1: 230 + i / 10 },
    }));
    await store.write(rows);
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await store.readRaw({
        deviceKey: d,
        from: T0,
        to: T0 + HOUR_MS,
        params: ['pave1'],
        limit: 10,
        cursor,
      });
      for (const r of page.items) {
        expect(Object.keys(r.values)).toEqual(['pave1']);
        seen.push(r.values.pave1!);
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(rows.map((_, i) => i));
    const streamed: number[] = [];
    for await (const page of store.streamRaw({
      deviceKey: d,
      from: T0 + 5 * MIN,
      to: T0 + 20 * MIN,
      pageSize: 4,
    })) {
      expect(page.length).toBeLessThanOrEqual(4);
      for (const r of page) streamed.push(r.ts);
    }
    expect(streamed).toEqual(rows.slice(5, 20).map((r) => r.ts));
  });

  it('answers latest with the newest value of every parameter', async () => {
    const d = device();
    expect(await store.latest(d)).toBeNull();
    await store.write([
      { deviceKey: d, ts: T0, values: { vave1: 230, eai1: 10 } },
      { deviceKey: d, ts: T0 + MIN, values: { vave1: 231 } },
    ]);
    expect(await store.latest(d)).toEqual({ ts: T0 + MIN, values: { vave1: 231, eai1: 10 } });
  });

  it('answers latest for a live meter from its last day, with what it reported only before, and for a silent one from its history', async () => {
    const DAY = 86_400_000;
    const now = Math.floor(Date.now() / 1000) * 1000;
    const [live, quiet, other] = [device(), device(), device()];
    await store.write([
      { deviceKey: live, ts: now - 3 * DAY, values: { eai1: 10, iave1: 1 } },
      { deviceKey: live, ts: now - 2 * DAY, values: { eai1: 11 } },
      { deviceKey: live, ts: now - MIN, values: { vave1: 231, iave1: 2 } },
      { deviceKey: other, ts: now - MIN, values: { tempmain: 21.5 } },
      { deviceKey: quiet, ts: now - 5 * DAY, values: { vave1: 229 } },
      { deviceKey: quiet, ts: now - 4 * DAY, values: { eai1: 3 } },
    ]);
    expect(await store.latest(live)).toEqual({ ts: now - MIN, values: { eai1: 11, iave1: 2, vave1: 231 } });
    expect(await store.latest(quiet)).toEqual({ ts: now - 4 * DAY, values: { eai1: 3, vave1: 229 } });
    expect(await store.latest(other)).toEqual({ ts: now - MIN, values: { tempmain: 21.5 } });
  });

  it('answers bucketed series from rollups, equal to raw, with gaps and combined parameters', async () => {
    const d = device();
    const rows: Reading[] = [];
    // Two hours of minute data, then an hour's gap, then one more hour.
    for (let i = 0; i < 240; i++) {
      if (i >= 120 && i < 180) continue;
      rows.push({
        deviceKey: d,
        ts: T0 + i * MIN,
        values: { vave1: 220 + (i % 7), vave2: 230, vave3: 240 - (i % 5), pave1: 100 * (i % 3), pave2: 50 },
      });
    }
    await store.write(rows);
    await store.refreshRollups(T0 + 5 * HOUR_MS);
    for (const interval of ['15m', '30m', '1h'] as const) {
      const q = {
        deviceKey: d,
        params: ['vave1', 'vave', 'pave'],
        from: T0,
        to: T0 + 4 * HOUR_MS,
        interval,
        stats: ['avg', 'min', 'max'] as const,
      };
      const auto = await store.series(q);
      const raw = await store.series({ ...q, source: 'raw' });
      expect(auto.t).toEqual(raw.t);
      expect(auto.t.length).toBe(
        (4 * HOUR_MS) / (interval === '15m' ? 15 * MIN : interval === '30m' ? 30 * MIN : HOUR_MS),
      );
      for (const p of q.params) {
        for (const s of q.stats) {
          const a = auto.series[p]![s]!;
          const r = raw.series[p]![s]!;
          expect(a.map((v) => v === null)).toEqual(r.map((v) => v === null));
          a.forEach((v, i) => {
            if (v !== null) expect(v).toBeCloseTo(r[i]!, 9);
          });
        }
      }
    }
    const hourly = await store.series({
      deviceKey: d,
      params: ['vave', 'pave', 'vave2'],
      from: T0,
      to: T0 + 4 * HOUR_MS,
      interval: '1h',
      stats: ['avg', 'max'],
    });
    expect(hourly.t).toEqual([0, 1, 2, 3].map((h) => T0 + h * HOUR_MS));
    expect(hourly.series.vave2!.avg).toEqual([230, 230, null, 230]);
    // pave = pave1 + pave2 per reading: 50 + (0|100|200).
    expect(hourly.series.pave!.max).toEqual([250, 250, null, 250]);
    const vave = hourly.series.vave!.avg!;
    expect(vave[2]).toBeNull();
    const firstHour = rows.filter((r) => r.ts < T0 + HOUR_MS);
    const expected =
      firstHour.reduce((s, r) => s + (r.values.vave1! + r.values.vave2! + r.values.vave3!) / 3, 0) /
      firstHour.length;
    expect(vave[0]).toBeCloseTo(expected, 9);
  });

  it('computes counter energy with jitter, resets, implausible jumps and gaps, from rollups and raw alike', async () => {
    const d = device();
    const at = (m: number) => T0 + m * MIN;
    const rows: Reading[] = [
      { deviceKey: d, ts: at(0), values: { eai1: 100 } },
      { deviceKey: d, ts: at(10), values: { eai1: 101 } }, // +1
      { deviceKey: d, ts: at(20), values: { eai1: 100.995 } }, // jitter
      { deviceKey: d, ts: at(25), values: { eai1: 101.5 } }, // +0.5 from the kept baseline 101
      { deviceKey: d, ts: at(40), values: { eai1: 3 } }, // reset: nothing
      { deviceKey: d, ts: at(50), values: { eai1: 4 } }, // +1
      { deviceKey: d, ts: at(55), values: { eai1: 2004 } }, // 2000 kWh in 5 min: implausible
      { deviceKey: d, ts: at(70), values: { eai1: 2005 } }, // +1
      // gap: no readings 75..134
      { deviceKey: d, ts: at(135), values: { eai1: 2007 } }, // +2 lands in the bucket 135 closes
    ];
    await store.write(rows);
    await store.refreshRollups(at(200));
    const q = { deviceKey: d, counters: ['eai1', 'eai'], from: at(0), to: at(150), interval: '15m' as const };
    const auto = await store.energy(q);
    const raw = await store.energy({ ...q, source: 'raw' });
    // Buckets are (start, end]: the reading at 0 is the baseline, the one at 135 closes (120, 135].
    const expected = [1, 0.5, 0, 1, 1, null, null, null, 2, null];
    expect(auto.t.length).toBe(10);
    expect(auto.energy.eai1).toEqual(expected);
    expect(auto.energy.eai).toEqual(expected);
    expect(raw.energy).toEqual(auto.energy);
    expect(auto.resets).toEqual([{ counter: 'eai1', at: at(40) }]);
    expect(auto.implausible).toEqual([{ counter: 'eai1', from: at(50), to: at(55), delta: 2000 }]);
    expect(raw.resets).toEqual(auto.resets);
    expect(raw.implausible).toEqual(auto.implausible);
    const hourly = await store.energy({ ...q, interval: '1h' });
    expect(hourly.energy.eai1).toEqual([2.5, 1, 2]);
  });

  it('rebuilds rollups of an older counter rule before answering: (start, end] without a manual step', async () => {
    const database = 'upgrade';
    const admin = new InfluxClient({ url: server.url, database });
    await admin.query(`CREATE DATABASE "${database}"`);
    const d = device();
    const H8 = Date.UTC(2026, 0, 12, 8);
    const first = await createInfluxStore({ url: server.url, database });
    await first.write(
      [100, 101, 103, 106].map((v, i) => ({ deviceKey: d, ts: H8 + i * HOUR_MS, values: { eai1: v } })),
    );
    await first.refreshRollups(H8 + 6 * HOUR_MS);
    const q = { deviceKey: d, counters: ['eai1'], from: H8, to: H8 + 3 * HOUR_MS, interval: '1h' } as const;
    expect((await first.energy(q)).energy.eai1).toEqual([1, 2, 3]);
    await first.close();
    // The rollups as the old rule ([start, end)) wrote them: each reading's step in the bucket it opens.
    const oldRule = async () => {
      await admin.query('DELETE FROM "rollup_15m"; DELETE FROM "rollup_30m"; DELETE FROM "rollup_1h"');
      const lines = ['rollup_15m', 'rollup_30m', 'rollup_1h'].flatMap((m) =>
        [0, 1, 2, 3].map(
          (e, i) => `${m},device=${d} eai1_e=${e},eai1_sum=${100 + e} ${(H8 + i * HOUR_MS) * 1e6}`,
        ),
      );
      await fetch(`${server.url}/write?db=${database}`, { method: 'POST', body: lines.join('\n') });
    };
    await oldRule();
    const current = await createInfluxStore({ url: server.url, database });
    expect((await current.energy(q)).energy.eai1).toEqual([0, 1, 2]);
    await current.close();
    // The same rollups in a database without a rollup version: rebuilt before the first answer.
    await oldRule();
    await admin.query('DELETE FROM "rollup_version"');
    const upgraded = await createInfluxStore({ url: server.url, database });
    expect((await upgraded.energy(q)).energy.eai1).toEqual([1, 2, 3]);
    expect((await upgraded.energy({ ...q, interval: '15m' })).energy.eai1).toEqual([
      null,
      null,
      null,
      1,
      null,
      null,
      null,
      2,
      null,
      null,
      null,
      3,
    ]);
    const tz = 'Europe/Warsaw';
    const day = zonedTimeToUtc(2026, 1, 12, 0, 0, 0, tz);
    const daily = await upgraded.energy({ ...q, from: day, to: day + 24 * HOUR_MS, interval: '1d', tz });
    expect(daily.energy.eai1).toEqual([6]);
    await upgraded.close();
  });

  it('carries the jitter baseline across incremental refreshes, equal to raw', async () => {
    const d = device();
    await store.write([
      { deviceKey: d, ts: T0, values: { eai1: 100 } },
      { deviceKey: d, ts: T0 + 10 * MIN, values: { eai1: 101 } },
      { deviceKey: d, ts: T0 + 50 * MIN, values: { eai1: 100.995 } }, // jitter: baseline stays 101
    ]);
    await store.refreshRollups(T0 + HOUR_MS);
    // A later batch: its refresh starts at the next hour and must not count from the jittered 100.995.
    await store.write([{ deviceKey: d, ts: T0 + 70 * MIN, values: { eai1: 101.5 } }]);
    await store.refreshRollups(T0 + 2 * HOUR_MS);
    const q = {
      deviceKey: d,
      counters: ['eai1'],
      from: T0 + HOUR_MS,
      to: T0 + 2 * HOUR_MS,
      interval: '1h' as const,
    };
    const auto = await store.energy(q);
    expect(auto.energy.eai1![0]).toBeCloseTo(0.5, 12);
    expect((await store.energy({ ...q, source: 'raw' })).energy.eai1![0]).toBeCloseTo(0.5, 12);
  });

  it('sums phases into combined energy, a bucket null only when every phase is', async () => {
    const d = device();
    await store.write([
      { deviceKey: d, ts: T0, values: { eai1: 1, eai2: 10 } },
      { deviceKey: d, ts: T0 + 20 * MIN, values: { eai1: 2, eai2: 12 } },
      { deviceKey: d, ts: T0 + 40 * MIN, values: { eai1: 4 } },
    ]);
    await store.refreshRollups(T0 + 2 * HOUR_MS);
    const res = await store.energy({
      deviceKey: d,
      counters: ['eai', 'eai2'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '15m',
    });
    // The readings at T0 close the quarter before the range: (T0, T0 + 15 min] holds none.
    expect(res.energy.eai).toEqual([null, 3, 2, null]);
    expect(res.energy.eai2).toEqual([null, 2, null, null]);
  });

  describe.each([
    ['Europe/Warsaw', 2026, 3, 29, 23],
    ['Europe/Warsaw', 2026, 10, 25, 25],
    ['Asia/Kolkata', 2026, 3, 29, 24],
  ])('daily energy in %s on %i-%i-%i', (tz, y, m, day, hours) => {
    it(`sums exactly the ${hours} hours of the local day, from rollups and raw`, async () => {
      const d = device();
      const dayStart = zonedTimeToUtc(y, m, day, 0, 0, 0, tz);
      const from = dayStart - 2 * 24 * HOUR_MS;
      const to = dayStart + 3 * 24 * HOUR_MS;
      const rows: Reading[] = [];
      // One kWh per quarter hour: a reading every 15 minutes, the register counting up.
      for (let t = from, v = 0; t < to; t += 15 * MIN, v += 1)
        rows.push({ deviceKey: d, ts: t, values: { eai1: v } });
      await store.write(rows);
      await store.refreshRollups(to);
      const q = {
        deviceKey: d,
        counters: ['eai1'],
        from: addLocalDays(dayStart, -1, tz),
        to: addLocalDays(dayStart, 2, tz),
        tz,
      };
      const daily = await store.energy({ ...q, interval: '1d' });
      const raw = await store.energy({ ...q, interval: '1d', source: 'raw' });
      expect(daily.t[1]).toBe(dayStart);
      expect(daily.t.length).toBe(3);
      expect(daily.energy.eai1![1]).toBe(hours * 4);
      expect(daily.energy.eai1![0]).toBe(24 * 4);
      expect(raw.energy).toEqual(daily.energy);
      const series = await store.series({
        deviceKey: d,
        params: ['eai1'],
        from: dayStart,
        to: dayStart + 1,
        interval: '1d',
        stats: ['min', 'max'],
        tz,
      });
      expect(series.t).toEqual([dayStart]);
      expect(series.series.eai1!.max![0]! - series.series.eai1!.min![0]!).toBe(hours * 4 - 1);
    });
  });

  it('answers monthly energy in the zone', async () => {
    const d = device();
    const tz = 'Europe/Warsaw';
    const rows: Reading[] = [];
    const jan = zonedTimeToUtc(2025, 1, 1, 0, 0, 0, tz);
    const apr = zonedTimeToUtc(2025, 4, 1, 0, 0, 0, tz);
    for (let t = jan - HOUR_MS, v = 0; t <= apr; t += HOUR_MS, v += 0.5)
      rows.push({ deviceKey: d, ts: t, values: { eae1: v } });
    await store.write(rows);
    await store.refreshRollups(apr + HOUR_MS);
    const res = await store.energy({
      deviceKey: d,
      counters: ['eae1'],
      from: jan,
      to: apr,
      interval: '1mo',
      tz,
    });
    expect(res.t).toEqual([
      jan,
      zonedTimeToUtc(2025, 2, 1, 0, 0, 0, tz),
      zonedTimeToUtc(2025, 3, 1, 0, 0, 0, tz),
    ]);
    // March 2025 has 743 hours in Warsaw (DST starts on the 30th).
    expect(res.energy.eae1).toEqual([31 * 24 * 0.5, 28 * 24 * 0.5, 743 * 0.5]);
  });

  it('re-opens a closed bucket when late data arrives', async () => {
    const d = device();
    await store.write([
      { deviceKey: d, ts: T0, values: { vave1: 230 } },
      { deviceKey: d, ts: T0 + 20 * MIN, values: { vave1: 240 } },
    ]);
    await store.refreshRollups(T0 + 3 * HOUR_MS);
    const q = {
      deviceKey: d,
      params: ['vave1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h' as const,
      stats: ['avg'] as const,
    };
    expect((await store.series(q)).series.vave1!.avg).toEqual([235]);
    await store.write([{ deviceKey: d, ts: T0 + 5 * MIN, values: { vave1: 250 } }]);
    const run = await store.refreshRollups(T0 + 3 * HOUR_MS);
    expect(run.buckets).toBeGreaterThan(0);
    expect((await store.series(q)).series.vave1!.avg).toEqual([240]);
  });

  it('deletes every reading and rollup of a device and lists devices', async () => {
    const d = device();
    const other = device();
    await store.write([
      { deviceKey: d, ts: T0, values: { eai1: 1 } },
      { deviceKey: other, ts: T0, values: { eai1: 1 } },
    ]);
    await store.refreshRollups(T0 + HOUR_MS);
    expect(await store.devices()).toEqual(expect.arrayContaining([d, other]));
    await store.deleteDevice(d);
    expect(await store.devices()).not.toContain(d);
    expect(await store.devices()).toContain(other);
    expect(await store.latest(d)).toBeNull();
    const e = await store.energy({
      deviceKey: d,
      counters: ['eai1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
    });
    expect(e.energy.eai1).toEqual([null]);
  });

  it('rejects bad input with a clear error and writes nothing of the batch', async () => {
    const d = device();
    const bad: Reading[] = [
      { deviceKey: d, ts: T0, values: { vave1: 230 } },
      { deviceKey: d, ts: T0 + MIN, values: { vave1: Number.NaN } },
    ];
    await expect(store.write(bad)).rejects.toThrow(/reading 1 rejected.*vave1 must be a finite number/);
    await expect(store.write([{ deviceKey: d, ts: T0, values: { nope: 1 } }])).rejects.toThrow(
      /unknown parameter: nope/,
    );
    await expect(store.write([{ deviceKey: 'ab\\', ts: T0, values: { vave1: 1 } }])).rejects.toThrow(
      /backslash/,
    );
    expect(await store.latest(d)).toBeNull();
    const err = await store
      // A reversed range (`from == to` is an empty range, answered empty on every engine).
      .series({ deviceKey: d, params: ['vave1'], from: T0, to: T0 - 1, interval: '1h', stats: ['avg'] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ retryable: false, kind: 'rejected' });
    await expect(
      store.readRaw({ deviceKey: d, from: T0, to: T0 + 1, limit: 5, cursor: 'x' }),
    ).rejects.toThrow(/invalid cursor/);
    await expect(
      store.energy({ deviceKey: d, counters: ['vave1'], from: T0, to: T0 + HOUR_MS, interval: '1h' }),
    ).rejects.toThrow(/not an energy counter/);
  });

  it('keeps a device key with spaces, commas, equals signs and quotes intact', async () => {
    const d = `odd key,=x'y"z ${device()}`;
    await store.write([
      { deviceKey: d, ts: T0, values: { eai1: 1 } },
      { deviceKey: d, ts: T0 + 20 * MIN, values: { eai1: 2 } },
    ]);
    expect(await store.latest(d)).toEqual({ ts: T0 + 20 * MIN, values: { eai1: 2 } });
    expect(await store.devices()).toContain(d);
    await store.refreshRollups();
    const e = await store.energy({
      deviceKey: d,
      counters: ['eai1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
    });
    expect(e.energy.eai1).toEqual([1]);
    await store.deleteDevice(d);
    expect(await store.devices()).not.toContain(d);
  });

  it('reports health from /ping', async () => {
    expect(await store.health()).toMatchObject({ ok: true, engine: 'influxdb' });
  });
});
