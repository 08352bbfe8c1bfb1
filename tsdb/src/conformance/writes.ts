/** Writing readings, reading them back raw (pages and stream), the newest values and deleting a device. */
import { HOUR_MS, MINUTE_MS, type Reading } from '@kilowatch/core';
import { expect, it } from 'vitest';
import { type Conformance, collect, DAY, expectClose, newKey } from './context.ts';

export function writeCases(ctx: Conformance): void {
  const { T0, refresh } = ctx;

  it('writes idempotently on (device, ts); a partial re-write replaces only the values it carries', async () => {
    const dev = newKey();
    expect(await ctx.store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230, iave1: 5 } }])).toEqual({
      written: 1,
    });
    await ctx.store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230, iave1: 5 } }]);
    await ctx.store.write([{ deviceKey: dev, ts: T0, values: { vave1: 231.5 } }]);
    // Duplicates within one batch merge as well; the later value wins.
    await ctx.store.write([
      { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 1, iave1: 2 } },
      { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 3 } },
    ]);
    const page = await ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 100 });
    expect(page.items).toEqual([
      { ts: T0, values: { vave1: 231.5, iave1: 5 } },
      { ts: T0 + MINUTE_MS, values: { vave1: 3, iave1: 2 } },
    ]);
    expect(page.nextCursor).toBeNull();
    expect(await ctx.store.devices()).toContain(dev);
  });

  it('reads raw readings in pages with a cursor and as a stream, in time order', async () => {
    const dev = newKey();
    const readings: Reading[] = Array.from({ length: 25 }, (_, i) => ({
      deviceKey: dev,
      ts: T0 + i * MINUTE_MS,
      values: { vave1: 200 + i, iave1: i },
    }));
    // Written out of order on purpose.
    await ctx.store.write(readings.slice(10));
    await ctx.store.write(readings.slice(0, 10));
    const seen: number[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    for (let guard = 0; guard < 10; guard++) {
      const page = await ctx.store.readRaw({
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
      ctx.store.streamRaw({ deviceKey: dev, from: T0 + 5 * MINUTE_MS, to: T0 + DAY, pageSize: 7 }),
    );
    expect(pages.map((p) => p.length)).toEqual([7, 7, 6]);
    expect(pages.flat().map((r) => r.ts)).toEqual(readings.slice(5).map((r) => r.ts));
    expect(pages[0]![0]!.values).toEqual({ vave1: 205, iave1: 5 });
  });

  it('streams a sparse four-year range with a dense stretch in full pages, nothing missed or repeated', async () => {
    const dev = newKey();
    // A reading every 20 days for four years, and 200 one-minute readings in the middle of it.
    const sparse = Array.from({ length: 73 }, (_, i) => T0 - 730 * DAY + i * 20 * DAY);
    const dense = Array.from({ length: 200 }, (_, i) => T0 + 5 * MINUTE_MS + i * MINUTE_MS);
    const all = [...sparse, ...dense].sort((a, b) => a - b);
    await ctx.store.write(all.map((ts, i) => ({ deviceKey: dev, ts, values: { vave1: i } })));
    const pages = await collect(
      ctx.store.streamRaw({ deviceKey: dev, from: T0 - 731 * DAY, to: T0 + 731 * DAY, pageSize: 64 }),
    );
    expect(pages.map((p) => p.length)).toEqual([64, 64, 64, 64, all.length - 256]);
    expect(pages.flat().map((r) => r.ts)).toEqual(all);
    expect(pages.flat().map((r) => r.values.vave1)).toEqual(all.map((_, i) => i));
  });

  it('returns the newest value of every parameter', async () => {
    const dev = newKey();
    expect(await ctx.store.latest(dev)).toBeNull();
    await ctx.store.write([
      { deviceKey: dev, ts: T0, values: { vave1: 1, iave1: 2 } },
      { deviceKey: dev, ts: T0 + 2 * MINUTE_MS, values: { vave1: 3 } },
      { deviceKey: dev, ts: T0 + MINUTE_MS, values: { iave1: 4, eai1: 7 } },
    ]);
    expect(await ctx.store.latest(dev)).toEqual({
      ts: T0 + 2 * MINUTE_MS,
      values: { vave1: 3, iave1: 4, eai1: 7 },
    });
  });

  it('deletes every reading and rollup of one device and keeps the others', async () => {
    const gone = newKey();
    const kept = newKey();
    for (const dev of [gone, kept]) {
      await ctx.store.write([
        { deviceKey: dev, ts: T0, values: { vave1: 230, eai1: 1 } },
        { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 231, eai1: 2 } },
      ]);
    }
    await refresh();
    await ctx.store.deleteDevice(gone);
    await refresh();
    expect(await ctx.store.latest(gone)).toBeNull();
    expect(
      (await ctx.store.readRaw({ deviceKey: gone, from: T0, to: T0 + HOUR_MS, limit: 10 })).items,
    ).toEqual([]);
    const s = await ctx.store.series({
      deviceKey: gone,
      params: ['vave1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
      stats: ['avg'],
    });
    expect(s.series.vave1!.avg).toEqual([null]);
    const e = await ctx.store.energy({
      deviceKey: gone,
      counters: ['eai1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
    });
    expect(e.energy.eai1).toEqual([null]);
    const devices = await ctx.store.devices();
    expect(devices).not.toContain(gone);
    expect(devices).toContain(kept);
    const k = await ctx.store.energy({
      deviceKey: kept,
      counters: ['eai1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
    });
    expectClose(k.energy.eai1, [1]);
  });

  it('a time deleted and written again holds only what is written since; its rollups follow (an import undone)', async () => {
    const dev = newKey();
    // A counter every 15 minutes for 2 hours, 1 kWh a quarter; an import then replaced 00:30 and 00:45
    // (adding a gauge at 00:45) and undo puts them back: removed, and written again as they were.
    const readings: Reading[] = Array.from({ length: 9 }, (_, i) => ({
      deviceKey: dev,
      ts: T0 + i * 15 * MINUTE_MS,
      values: { eai1: 100 + i },
    }));
    await ctx.store.write(readings);
    await ctx.store.write([
      { deviceKey: dev, ts: T0 + 30 * MINUTE_MS, values: { eai1: 110 } },
      { deviceKey: dev, ts: T0 + 45 * MINUTE_MS, values: { eai1: 111, vave1: 230 } },
    ]);
    const hourly = async () =>
      (
        await ctx.store.energy({
          deviceKey: dev,
          counters: ['eai1'],
          from: T0,
          to: T0 + 2 * HOUR_MS,
          interval: '1h',
        })
      ).energy.eai1;
    await refresh();
    const gauge = await ctx.store.series({
      deviceKey: dev,
      params: ['vave1'],
      from: T0,
      to: T0 + 2 * HOUR_MS,
      interval: '1h',
      stats: ['avg'],
    });
    expect(gauge.series.vave1!.avg).toEqual([230, null]);
    await ctx.store.deleteReadings({ deviceKey: dev, from: T0 + 30 * MINUTE_MS, to: T0 + 46 * MINUTE_MS });
    await ctx.store.write(readings.slice(2, 4));
    await refresh();
    const page = await ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 10 });
    expect(page.items).toEqual(readings.slice(0, 4).map((r) => ({ ts: r.ts, values: r.values })));
    expectClose(await hourly(), [4, 4]);
    const after = await ctx.store.series({
      deviceKey: dev,
      params: ['vave1'],
      from: T0,
      to: T0 + 2 * HOUR_MS,
      interval: '1h',
      stats: ['avg'],
    });
    expect(after.series.vave1!.avg).toEqual([null, null]);
    expect(await ctx.store.latest(dev)).toEqual({ ts: T0 + 2 * HOUR_MS, values: { eai1: 108 } });
  });

  it('deletes the readings of one device in [from, to); the rest, the newest values and the rollups follow', async () => {
    const dev = newKey();
    const other = newKey();
    // A counter and a gauge every 15 minutes for 6 hours: the counter gains 1 each quarter.
    const readings = (key: string): Reading[] =>
      Array.from({ length: 25 }, (_, i) => ({
        deviceKey: key,
        ts: T0 + i * 15 * MINUTE_MS,
        values: { eai1: 100 + i, vave1: 230 + (i % 3) },
      }));
    await ctx.store.write(readings(dev));
    await ctx.store.write(readings(other));
    await refresh();
    const hourly = async (key: string) =>
      (
        await ctx.store.energy({
          deviceKey: key,
          counters: ['eai1'],
          from: T0,
          to: T0 + 6 * HOUR_MS,
          interval: '1h',
        })
      ).energy.eai1;
    expectClose(await hourly(dev), [4, 4, 4, 4, 4, 4]);
    // Hours 2 and 3 (the readings of 02:00 to 03:45): their energy lands in the hour after the gap.
    await ctx.store.deleteReadings({ deviceKey: dev, from: T0 + 2 * HOUR_MS, to: T0 + 4 * HOUR_MS });
    // An empty range deletes nothing.
    await ctx.store.deleteReadings({ deviceKey: dev, from: T0, to: T0 });
    await refresh();
    const left = (await ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0 + DAY, limit: 100 })).items;
    expect(left.map((r) => (r.ts - T0) / (15 * MINUTE_MS))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 24,
    ]);
    // (start, end]: hour 1 lost its step at 02:00; 01:45 → 04:00 is one step of 9, closing the quarter
    // 03:45–04:00, so hour 3 holds it and hour 2 is a gap.
    expectClose(await hourly(dev), [4, 3, null, 9, 4, 4]);
    const s = await ctx.store.series({
      deviceKey: dev,
      params: ['vave1'],
      from: T0,
      to: T0 + 6 * HOUR_MS,
      interval: '1h',
      stats: ['avg'],
    });
    expect(s.series.vave1!.avg![2]).toBeNull();
    expect(s.series.vave1!.avg![3]).toBeNull();
    expectClose(await hourly(other), [4, 4, 4, 4, 4, 4]);
    // The newest readings go: the newest values are those of what is left.
    await ctx.store.deleteReadings({ deviceKey: dev, from: T0 + 5 * HOUR_MS, to: T0 + DAY });
    expect(await ctx.store.latest(dev)).toEqual({
      ts: T0 + 5 * HOUR_MS - 15 * MINUTE_MS,
      values: { eai1: 119, vave1: 230 + (19 % 3) },
    });
    // Everything: no readings, no rollups.
    await ctx.store.deleteReadings({ deviceKey: dev, from: T0 - DAY, to: T0 + DAY });
    await refresh();
    expect(await ctx.store.latest(dev)).toBeNull();
    expect(await hourly(dev)).toEqual([null, null, null, null, null, null]);
    expect((await ctx.store.latest(other))?.ts).toBe(T0 + 6 * HOUR_MS);
  });
}
