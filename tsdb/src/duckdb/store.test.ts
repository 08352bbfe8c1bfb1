import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeTelemetryStoreConformance } from '../conformance.ts';
import { createDuckDbStore } from '../index.ts';

const dir = mkdtempSync(join(tmpdir(), 'kilowatch-tsdb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describeTelemetryStoreConformance('duckdb in memory', () => createDuckDbStore());
describeTelemetryStoreConformance('duckdb on disk', () =>
  createDuckDbStore({ path: join(dir, 'conformance.duckdb') }),
);

describe('DuckDB engine', () => {
  const T0 = Date.UTC(2026, 4, 4);
  const MIN = 60_000;

  it('keeps readings, rollups and pending rollup work across a restart', async () => {
    const path = join(dir, 'restart.duckdb');
    const dev = 'a1b2c3d4e5f6';
    let store = await createDuckDbStore({ path });
    await store.write(
      Array.from({ length: 60 }, (_, i) => ({
        deviceKey: dev,
        ts: T0 + i * MIN,
        values: { eai1: i * 0.1, vave1: 230 },
      })),
    );
    await store.refreshRollups(T0 + 120 * MIN);
    // Late data written but not rolled up before the restart.
    await store.write([{ deviceKey: dev, ts: T0 + 60 * MIN, values: { eai1: 7, vave1: 200 } }]);
    await store.close();

    store = await createDuckDbStore({ path });
    expect(await store.devices()).toEqual([dev]);
    const pending = await store.refreshRollups(T0 + 180 * MIN);
    expect(pending.buckets).toBeGreaterThan(0);
    expect((await store.refreshRollups(T0 + 180 * MIN)).buckets).toBe(0);
    const e = await store.energy({
      deviceKey: dev,
      counters: ['eai1'],
      from: T0,
      to: T0 + 2 * 60 * MIN,
      interval: '1h',
    });
    expect(e.energy.eai1![0]).toBeCloseTo(5.9, 9);
    expect(e.energy.eai1![1]).toBeCloseTo(1.1, 9);
    const s = await store.series({
      deviceKey: dev,
      params: ['vave1'],
      from: T0,
      to: T0 + 2 * 60 * MIN,
      interval: '1h',
      stats: ['min'],
    });
    expect(s.series.vave1!.min).toEqual([230, 200]);
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

  it('stores nothing for a reading without values', async () => {
    const store = await createDuckDbStore();
    const dev = 'c1b2c3d4e5f6';
    expect(await store.write([{ deviceKey: dev, ts: T0, values: {} }])).toEqual({ written: 1 });
    expect(await store.latest(dev)).toBeNull();
    expect(await store.devices()).toEqual([]);
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
