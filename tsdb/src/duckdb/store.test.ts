/**
 * The DuckDB engine: the conformance suite in memory and on disk, then what is particular to it — its
 * memory limit, bulk loads beside live writes, large and overlapping batches, incremental rollup
 * refreshes, and the caller's batches left untouched. Restarts, crashes and the checkpoint journal:
 * durability.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading } from '@kilowatch/core';
import { afterAll, describe, expect, it } from 'vitest';
import { columnize } from '../columns.ts';
import { describeTelemetryStoreConformance } from '../conformance.ts';
import { createDuckDbStore } from '../index.ts';
import type { SeriesQuery } from '../port.ts';

const dir = mkdtempSync(join(tmpdir(), 'kilowatch-tsdb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeTelemetryStoreConformance('duckdb in memory', () => createDuckDbStore());
describeTelemetryStoreConformance('duckdb on disk', () =>
  createDuckDbStore({ path: join(dir, 'conformance.duckdb') }),
);

describe('DuckDB engine', () => {
  const T0 = Date.UTC(2026, 4, 4);
  const MIN = 60_000;

  it('works under the memory limit it is given, and refuses a limit that is not a size', async () => {
    const limited = await createDuckDbStore({ path: join(dir, 'limited.duckdb'), memoryLimit: '300MB' });
    const unlimited = await createDuckDbStore();
    try {
      // DuckDB writes the limit in binary units: 300 MB is 286.1 MiB.
      expect(await limited.memoryLimit()).toBe('286.1 MiB');
      expect(await unlimited.memoryLimit()).not.toBe('286.1 MiB');
      const dev = 'c0ffee000001';
      await limited.write(
        Array.from({ length: 120 }, (_, i) => ({
          deviceKey: dev,
          ts: T0 + i * MIN,
          values: { vave1: 230 + i },
        })),
      );
      expect(
        (await limited.readRaw({ deviceKey: dev, from: T0, to: T0 + 120 * MIN, limit: 500 })).items,
      ).toHaveLength(120);
    } finally {
      await limited.close();
      await unlimited.close();
    }
    for (const bad of ['lots', '2', '-1GB', '1 GB; DROP TABLE readings', '']) {
      await expect(createDuckDbStore({ memoryLimit: bad })).rejects.toMatchObject({
        kind: 'configuration',
        message: `the DuckDB memory limit must be a size such as 512MB or 2GB, got "${bad}"`,
      });
    }
    const binary = await createDuckDbStore({ memoryLimit: ' 1.5GiB ' });
    expect(await binary.memoryLimit()).toBe('1.5 GiB');
    await binary.close();
  });

  it('bulk-loads history beside live writes: keeps stored readings, lists devices, rolls up, survives a reopen', async () => {
    const path = join(dir, 'bulk.duckdb');
    let store = await createDuckDbStore({ path });
    const devs = ['b01c00000001', 'b01c00000002', 'b01c00000003'];
    // A live reading inside the history's range and one after it.
    await store.write([
      { deviceKey: devs[0]!, ts: T0 + 10 * MIN, values: { vave1: 199 } },
      { deviceKey: devs[0]!, ts: T0 + 200_000 * MIN, values: { vave1: 240, eai1: 5000 } },
    ]);
    const minutes = 100_000; // 300,000 readings: two bulk transactions
    async function* history() {
      for (let m0 = 0; m0 < minutes; m0 += 20_000) {
        const batch: Reading[] = [];
        for (let m = m0; m < m0 + 20_000; m++)
          for (const [i, d] of devs.entries())
            batch.push({ deviceKey: d, ts: T0 + m * MIN, values: { vave1: 220 + i, eai1: m / 100 } });
        yield batch;
      }
    }
    let live = 0;
    const bulk = store.writeBulk!(history());
    // Live writes commit while the bulk load runs.
    for (let k = 0; k < 5; k++) {
      await store.write([{ deviceKey: devs[1]!, ts: T0 + (300_000 + k) * MIN, values: { vave1: 230 } }]);
      live++;
    }
    expect(await bulk).toEqual({ written: 300_000 });
    expect(live).toBe(5);
    const check = async () => {
      expect(await store.devices()).toEqual(devs);
      // The reading stored before the load is kept as it was.
      const kept = await store.readRaw({
        deviceKey: devs[0]!,
        from: T0 + 10 * MIN,
        to: T0 + 11 * MIN,
        limit: 5,
      });
      expect(kept.items).toEqual([{ ts: T0 + 10 * MIN, values: { vave1: 199 } }]);
      expect(await store.latest(devs[0]!)).toEqual({
        ts: T0 + 200_000 * MIN,
        values: { vave1: 240, eai1: 5000 },
      });
      expect(await store.latest(devs[2]!)).toEqual({
        ts: T0 + (minutes - 1) * MIN,
        values: { vave1: 222, eai1: (minutes - 1) / 100 },
      });
      const all = await store.readRaw({ deviceKey: devs[2]!, from: T0, to: T0 + minutes * MIN, limit: 1 });
      expect(all.items[0]).toEqual({ ts: T0, values: { vave1: 222, eai1: 0 } });
    };
    await check();
    await store.refreshRollups(T0 + 400_000 * MIN);
    const q = {
      deviceKey: devs[2]!,
      counters: ['eai1'],
      from: T0,
      to: T0 + 1440 * MIN * 10,
      interval: '1d',
      tz: 'UTC',
    } as const;
    const fromRollups = await store.energy(q);
    // (T0, T0 + 1 day]: the 1,440 steps of minutes 1..1440 (the reading at T0 is the baseline).
    expect(fromRollups.energy.eai1![0]).toBeCloseTo(14.4, 9);
    expect(fromRollups).toEqual(await store.energy({ ...q, source: 'raw' }));
    await store.close();
    store = await createDuckDbStore({ path });
    await check();
    await store.close();
  });

  it('rollups refreshed while a bulk load commits still take in what it wrote', async () => {
    // The demo's order: the recent days are written live first, then the year before them in bulk,
    // with the rollup scheduler running all along.
    const store = await createDuckDbStore({ path: join(dir, 'bulk-refresh.duckdb') });
    const dev = 'b01c00000009';
    const days = 30;
    const reading = (m: number): Reading => ({
      deviceKey: dev,
      ts: T0 + m * MIN,
      values: { vave1: 220 + (m % 7), eai1: (m * 12) / 1000 },
    });
    const recent: Reading[] = [];
    for (let m = days * 1440; m < (days + 2) * 1440; m++) recent.push(reading(m));
    await store.write(recent);
    await store.refreshRollups(T0 + (days + 2) * 1440 * MIN);
    async function* history() {
      for (let m0 = 0; m0 < days * 1440; m0 += 10_000) {
        const batch: Reading[] = [];
        for (let m = m0; m < Math.min(days * 1440, m0 + 10_000); m++) batch.push(reading(m));
        yield batch;
      }
    }
    let done = false;
    const bulk = store.writeBulk!(history()).finally(() => {
      done = true;
    });
    let refreshes = 0;
    while (!done) {
      await store.refreshRollups(T0 + (days + 2) * 1440 * MIN);
      refreshes++;
      await new Promise((r) => setImmediate(r));
    }
    expect(await bulk).toEqual({ written: days * 1440 });
    expect(refreshes).toBeGreaterThan(1);
    await store.refreshRollups(T0 + (days + 2) * 1440 * MIN);
    const range = { deviceKey: dev, from: T0, to: T0 + (days + 2) * 1440 * MIN, tz: 'UTC' } as const;
    const energy = { ...range, counters: ['eai1'], interval: '1d' } as const;
    const fromRollups = await store.energy(energy);
    // 1,440 minutes × 12 Wh a day, each day closed by the reading at its end (the last day, whose
    // closing reading is not there yet, one step less): none empty, none holding the days before it.
    expect(fromRollups.energy.eai1).toHaveLength(days + 2);
    for (const [d, e] of fromRollups.energy.eai1!.entries())
      expect(e, `day ${d}`).toBeCloseTo(d === days + 1 ? 17.268 : 17.28, 9);
    expect(fromRollups).toEqual(await store.energy({ ...energy, source: 'raw' }));
    const series = { ...range, params: ['vave1'], interval: '1h', stats: ['avg', 'min', 'max'] } as const;
    expect(await store.series(series)).toEqual(await store.series({ ...series, source: 'raw' }));
    await store.close();
  });

  it('writes a large batch in one call and reads it all back', async () => {
    const store = await createDuckDbStore();
    const dev = 'b1b2c3d4e5f6';
    const n = 30_000;
    const readings = Array.from({ length: n }, (_, i) => ({
      deviceKey: dev,
      ts: T0 + i * MIN,
      values: { vave1: 230, vave2: 231, vave3: 232, iave1: 1, iave2: 2, iave3: 3, eai1: i * 0.01 },
    }));
    expect(await store.write(readings)).toEqual({ written: n });
    // Re-writing the whole batch (a redelivery) stores nothing twice.
    expect(await store.write(readings)).toEqual({ written: n });
    let rows = 0;
    let last = -1;
    for await (const page of store.streamRaw({
      deviceKey: dev,
      from: T0,
      to: T0 + n * MIN,
      pageSize: 10_000,
    })) {
      for (const r of page) {
        expect(r.ts).toBeGreaterThan(last);
        last = r.ts;
      }
      rows += page.length;
    }
    expect(rows).toBe(n);
    await store.refreshRollups();
    const e = await store.energy({
      deviceKey: dev,
      counters: ['eai'],
      from: T0,
      to: T0 + n * MIN,
      interval: '1mo',
    });
    expect(e.energy.eai!.reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).toBeCloseTo((n - 1) * 0.01, 6);
    await store.close();
  });

  it('incremental refreshes (in order, then late and re-written data) give the numbers of raw', async () => {
    const store = await createDuckDbStore();
    const dev = 'd1b2c3d4e5f6';
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const readings: Reading[] = [];
    let c = 500;
    for (let i = 0; i < 3000; i++) {
      if (rand() < 0.05) continue;
      const r = rand();
      c = r < 0.003 ? rand() * 3 : r < 0.006 ? c + 5000 : c + rand() * 0.05;
      readings.push({
        deviceKey: dev,
        ts: T0 + i * MIN,
        values: { eai1: r > 0.9 ? c - 0.004 : c, vave1: 220 + rand() * 20 },
      });
    }
    // Chunks in time order with a refresh after each, holding back every 7th reading as late data.
    const late = readings.filter((_, i) => i % 7 === 3);
    const onTime = readings.filter((_, i) => i % 7 !== 3);
    for (let off = 0; off < onTime.length; off += 400) {
      await store.write(onTime.slice(off, off + 400));
      await store.refreshRollups();
    }
    for (let off = late.length - 100; off > -100; off -= 100) {
      await store.write(late.slice(Math.max(off, 0), off + 100));
      await store.refreshRollups();
    }
    // A re-write of a span with changed voltages.
    await store.write(readings.slice(1000, 1100).map((r) => ({ ...r, values: { vave1: 300 } })));
    await store.refreshRollups();
    const from = T0;
    const to = T0 + 3000 * MIN;
    for (const interval of ['15m', '1h', '1d'] as const) {
      const q = { deviceKey: dev, counters: ['eai1'], from, to, interval };
      const a = await store.energy(q);
      const b = await store.energy({ ...q, source: 'raw' });
      expect(a.energy.eai1!.length).toBe(b.energy.eai1!.length);
      a.energy.eai1!.forEach((v, i) => {
        const w = b.energy.eai1![i]!;
        if (w === null) expect(v).toBeNull();
        else expect(v).toBeCloseTo(w, 9);
      });
      expect(a.resets).toEqual(b.resets);
      expect(a.implausible.length).toBe(b.implausible.length);
      const sq = { deviceKey: dev, params: ['vave1'], from, to, interval, stats: ['max', 'avg'] as const };
      const sa = await store.series({ ...sq, stats: [...sq.stats] });
      const sb = await store.series({ ...sq, stats: [...sq.stats], source: 'raw' });
      sa.series.vave1!.avg!.forEach((v, i) => {
        expect(v).toBeCloseTo(sb.series.vave1!.avg![i]!, 9);
      });
      expect(sa.series.vave1!.max).toEqual(sb.series.vave1!.max);
    }
    const all = await store.energy({ deviceKey: dev, counters: ['eai1'], from, to, interval: '1h' });
    expect(all.resets.length).toBeGreaterThan(0);
    await store.close();
  });

  it('short refreshes of meters of different kinds in one statement give the numbers of raw', async () => {
    // Refreshed every ten minutes, as live readings are: each refresh spans well under the six hours up to
    // which every device shares one statement (rollups.ts), so a single-phase meter and a three-phase one
    // with a net register that drops (its counter stepped in full, the others without the running
    // maximum) are refreshed together.
    const store = await createDuckDbStore();
    const single = 'e1e2e3e4e5e6';
    const three = 'f1f2f3f4f5f6';
    const readings: Reading[] = [];
    let imp = 100;
    let net = 50;
    for (let i = 0; i < 600; i++) {
      imp += 0.01 + (i % 7) * 0.002;
      // A net register: runs back while exporting (resets), and wobbles a digit below (jitter).
      net += i % 90 < 45 ? 0.02 : -0.015;
      const wobble = i % 5 === 2 && i % 90 < 45 ? -0.025 : 0; // 0.005 below the reading before
      readings.push({ deviceKey: single, ts: T0 + i * MIN, values: { eai1: imp, vave1: 229 + (i % 5) } });
      readings.push({
        deviceKey: three,
        ts: T0 + i * MIN + 7_000,
        values: {
          eai1: imp * 2,
          eai2: imp * 3,
          eai3: imp * 4,
          energy3phases: net + wobble,
          pave1: 100 + i,
          vave2: 231 - (i % 3),
        },
      });
    }
    for (let off = 0; off < readings.length; off += 20) {
      await store.write(readings.slice(off, off + 20));
      await store.refreshRollups(T0 + 700 * MIN);
    }
    const from = T0;
    const to = T0 + 600 * MIN;
    for (const [dev, counters, params] of [
      [single, ['eai1'], ['vave1']],
      [three, ['eai1', 'eai2', 'eai3', 'energy3phases'], ['pave1', 'vave2']],
    ] as const) {
      for (const interval of ['15m', '1h'] as const) {
        const q = { deviceKey: dev, counters: [...counters], from, to, interval };
        const a = await store.energy(q);
        const b = await store.energy({ ...q, source: 'raw' });
        for (const c of counters) {
          expect(a.energy[c]!.length).toBe(b.energy[c]!.length);
          a.energy[c]!.forEach((v, i) => {
            const w = b.energy[c]![i]!;
            if (w === null) expect(v).toBeNull();
            else expect(v).toBeCloseTo(w, 9);
          });
        }
        expect(a.resets).toEqual(b.resets);
        const sq = { deviceKey: dev, params: [...params], from, to, interval, stats: ['min', 'avg', 'max'] };
        const sa = await store.series(sq as SeriesQuery);
        const sb = await store.series({ ...sq, source: 'raw' } as SeriesQuery);
        for (const p of params) {
          expect(sa.series[p]!.min).toEqual(sb.series[p]!.min);
          expect(sa.series[p]!.max).toEqual(sb.series[p]!.max);
          sa.series[p]!.avg!.forEach((v, i) => {
            expect(v).toBeCloseTo(sb.series[p]!.avg![i]!, 9);
          });
        }
      }
    }
    await store.close();
  });

  it('keeps values bit-exact through the write path and latest', async () => {
    const store = await createDuckDbStore();
    const dev = 'e1b2c3d4e5f6';
    const values = { vave1: 0.1 + 0.2, pave1: -1e-9, eai1: 123456789.12345679, pfave1: 1 / 3 };
    await store.write([{ deviceKey: dev, ts: T0, values }]);
    expect((await store.latest(dev))?.values).toEqual(values);
    expect(
      (await store.readRaw({ deviceKey: dev, from: T0, to: T0 + 1, limit: 1 })).items[0]?.values,
    ).toEqual(values);
    await store.close();
  });

  it('stores nothing for a reading without values', async () => {
    const store = await createDuckDbStore();
    const dev = 'c1b2c3d4e5f6';
    expect(await store.write([{ deviceKey: dev, ts: T0, values: {} }])).toEqual({ written: 1 });
    expect(await store.latest(dev)).toBeNull();
    expect(await store.devices()).toEqual([]);
    await store.close();
  });

  it('a batch overlapping stored readings replaces the values it carries and appends the rest', async () => {
    const store = await createDuckDbStore();
    const dev = 'f1b2c3d4e5f6';
    const other = 'f2b2c3d4e5f6';
    await store.write(
      Array.from({ length: 10 }, (_, i) => ({
        deviceKey: dev,
        ts: T0 + i * MIN,
        values: { vave1: 230, iave1: i },
      })),
    );
    // Minutes 5..14 of `dev` (5..9 stored, 10..14 new) and a new device, in one batch.
    await store.write([
      ...Array.from({ length: 10 }, (_, i) => ({
        deviceKey: dev,
        ts: T0 + (5 + i) * MIN,
        values: { vave1: 240 },
      })),
      { deviceKey: other, ts: T0, values: { vave1: 1 } },
    ]);
    const page = await store.readRaw({ deviceKey: dev, from: T0, to: T0 + 20 * MIN, limit: 100 });
    expect(page.items.map((r) => r.ts)).toEqual(Array.from({ length: 15 }, (_, i) => T0 + i * MIN));
    expect(page.items[4]?.values).toEqual({ vave1: 230, iave1: 4 });
    expect(page.items[7]?.values).toEqual({ vave1: 240, iave1: 7 });
    expect(page.items[12]?.values).toEqual({ vave1: 240 });
    expect(await store.devices()).toEqual([dev, other]);
    await store.close();
  });

  it('merges readings repeating a (device, ts) inside one batch: the later value wins, value by value', async () => {
    const store = await createDuckDbStore();
    const dev = 'f3b2c3d4e5f6';
    await store.write([
      { deviceKey: dev, ts: T0 + MIN, values: { vave1: 1, iave1: 1 } },
      { deviceKey: dev, ts: T0, values: { vave1: 2 } },
      { deviceKey: dev, ts: T0 + MIN, values: { vave1: 3 } },
      { deviceKey: dev, ts: T0 + 2 * MIN, values: { pave1: 5 } },
      { deviceKey: dev, ts: T0 + MIN, values: { pave1: 4 } },
    ]);
    const page = await store.readRaw({ deviceKey: dev, from: T0, to: T0 + 10 * MIN, limit: 100 });
    expect(page.items).toEqual([
      { ts: T0, values: { vave1: 2 } },
      { ts: T0 + MIN, values: { vave1: 3, iave1: 1, pave1: 4 } },
      { ts: T0 + 2 * MIN, values: { pave1: 5 } },
    ]);
    expect(await store.latest(dev)).toEqual({
      ts: T0 + 2 * MIN,
      values: { vave1: 3, iave1: 1, pave1: 5 },
    });
    await store.close();
  });

  it("leaves the caller's batches as they were: readings, column batches, bulk loads, new and stored devices", async () => {
    const store = await createDuckDbStore({ path: join(dir, 'untouched.duckdb') });
    const devs = ['a11ce0000001', 'a11ce0000002'];
    const readings = (from: number, n: number, dev = devs[0]!): Reading[] =>
      Array.from({ length: n }, (_, i) => ({
        deviceKey: dev,
        ts: T0 + (from + i) * MIN,
        values: { vave1: 230 + i, eai1: from + i },
      }));
    const unchanged = async (write: () => Promise<unknown>, batch: unknown) => {
      const before = structuredClone(batch);
      await write();
      expect(batch).toStrictEqual(before);
    };
    // New devices (ids assigned), then a batch after what is stored, then one overlapping it (merged).
    const first = readings(0, 50);
    await unchanged(() => store.write(first), first);
    const cols = columnize([...readings(50, 50), ...readings(0, 50, devs[1])]);
    await unchanged(() => store.writeColumns(cols), cols);
    const overlap = columnize(readings(25, 50));
    await unchanged(() => store.writeColumns(overlap), overlap);
    // A bulk load of readings and of column batches, for a stored device and a new one.
    const bulkReadings = readings(1000, 200);
    const bulkCols = columnize(readings(2000, 200, 'a11ce0000003'));
    await unchanged(async () => {
      await store.writeBulk!(
        (async function* () {
          yield bulkReadings;
          yield bulkCols;
        })(),
      );
    }, [bulkReadings, bulkCols]);
    // What was written is stored.
    expect(await store.devices()).toEqual([...devs, 'a11ce0000003']);
    expect(await store.latest('a11ce0000003')).toEqual({
      ts: T0 + 2199 * MIN,
      values: { vave1: 429, eai1: 2199 },
    });
    await store.close();
  });

  it('stores device keys holding quotes as they are', async () => {
    const store = await createDuckDbStore();
    const dev = "meter'); DROP TABLE readings; --";
    await store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230 } }]);
    await store.write([{ deviceKey: `${dev}'`, ts: T0, values: { vave1: 231 } }]);
    expect(await store.devices()).toEqual([dev, `${dev}'`].sort());
    expect((await store.latest(`${dev}'`))?.values).toEqual({ vave1: 231 });
    await store.close();
  });

  it('refuses bad queries with a clear error', async () => {
    const store = await createDuckDbStore();
    await expect(
      store.series({ deviceKey: 'x', params: ['nosuch'], from: 0, to: 1, interval: '1h', stats: ['avg'] }),
    ).rejects.toThrow(/unknown parameter/);
    await expect(
      store.energy({ deviceKey: 'x', counters: ['vave1'], from: 0, to: 1, interval: '1h' }),
    ).rejects.toThrow(/not an energy counter/);
    await expect(
      store.series({
        deviceKey: 'x',
        params: ['vave1'],
        from: 0,
        to: 1,
        interval: '1d',
        stats: ['avg'],
        tz: 'Mars/Base',
      }),
    ).rejects.toThrow(/time zone/);
    await expect(
      store.readRaw({ deviceKey: 'x', from: 0, to: 1, limit: 10, cursor: 'garbage' }),
    ).rejects.toThrow(/cursor/);
    await store.close();
  });
});
