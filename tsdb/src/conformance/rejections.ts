/** What every engine refuses, and how: malformed writes and queries are `rejected`, a closed store `unavailable`. */
import { HOUR_MS, MINUTE_MS } from '@kilowatch/core';
import { expect, it } from 'vitest';
import type { Reading, SeriesQuery } from '../port.ts';
import { MAX_DEVICE_KEY_LENGTH, MAX_STORED_TS, MIN_STORED_TS, readingProblem } from '../readingCheck.ts';
import { type Conformance, newKey } from './context.ts';

export function rejectionCases(ctx: Conformance): void {
  const { T0, refresh, open } = ctx;

  it('refuses a batch with an unknown parameter or a non-finite value and stores none of it', async () => {
    const dev = newKey();
    await ctx.store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230 } }]);
    await expect(
      ctx.store.write([
        { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 231 } },
        { deviceKey: dev, ts: T0 + 2 * MINUTE_MS, values: { nosuch: 1 } },
      ]),
    ).rejects.toMatchObject({ name: 'StoreError', retryable: false });
    await expect(
      ctx.store.write([{ deviceKey: dev, ts: T0 + 3 * MINUTE_MS, values: { vave1: Number.NaN } }]),
    ).rejects.toMatchObject({ name: 'StoreError', retryable: false });
    const page = await ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 100 });
    expect(page.items).toEqual([{ ts: T0, values: { vave1: 230 } }]);
  });

  it('refuses the same bad readings on every engine as rejected, writing nothing of their batch', async () => {
    const dev = newKey();
    await ctx.store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230 } }]);
    const good = { deviceKey: dev, ts: T0 + MINUTE_MS, values: { vave1: 231 } };
    const refused = { name: 'StoreError', kind: 'rejected', retryable: false };
    for (const bad of [
      null,
      { deviceKey: '', ts: T0, values: { vave1: 1 } },
      { deviceKey: 'ab\\', ts: T0, values: { vave1: 1 } },
      { deviceKey: 'a\nb', ts: T0, values: { vave1: 1 } },
      { deviceKey: 'k'.repeat(MAX_DEVICE_KEY_LENGTH + 1), ts: T0, values: { vave1: 1 } },
      { deviceKey: 42, ts: T0, values: { vave1: 1 } },
      { deviceKey: dev, ts: T0 + 0.5, values: { vave1: 1 } },
      { deviceKey: dev, ts: Number.NaN, values: { vave1: 1 } },
      { deviceKey: dev, ts: String(T0), values: { vave1: 1 } },
      { deviceKey: dev, ts: MAX_STORED_TS + 1, values: { vave1: 1 } },
      { deviceKey: dev, ts: MIN_STORED_TS - 1, values: { vave1: 1 } },
      { deviceKey: dev, ts: T0, values: null },
      { deviceKey: dev, ts: T0, values: { nosuch: 1 } },
      { deviceKey: dev, ts: T0, values: { vave1: Number.POSITIVE_INFINITY } },
      { deviceKey: dev, ts: T0, values: { vave1: '230' } },
    ]) {
      await expect(
        ctx.store.write([good, bad] as unknown as Reading[]),
        JSON.stringify(bad),
      ).rejects.toMatchObject(refused);
      expect(readingProblem(bad), JSON.stringify(bad)).not.toBeNull();
    }
    const page = await ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 100 });
    expect(page.items).toEqual([{ ts: T0, values: { vave1: 230 } }]);
    // The edges of the stored range are storable on every engine.
    expect(readingProblem({ deviceKey: dev, ts: MAX_STORED_TS, values: {} })).toBeNull();
  });

  it('refuses a malformed query the same way on every engine, and answers an empty range empty', async () => {
    const dev = newKey();
    await ctx.store.write([{ deviceKey: dev, ts: T0, values: { vave1: 230, eai1: 100 } }]);
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
      await expect(ctx.store.series(bad), JSON.stringify(bad)).rejects.toMatchObject(refused);
    }
    await expect(ctx.store.energy({ ...energy, to: T0 - 1 })).rejects.toMatchObject(refused);
    await expect(ctx.store.energy({ ...energy, counters: ['vave1'] })).rejects.toMatchObject(refused);
    await expect(
      ctx.store.readRaw({ deviceKey: dev, from: T0 + HOUR_MS, to: T0, limit: 10 }),
    ).rejects.toMatchObject(refused);
    await expect(
      ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0 + HOUR_MS, limit: 0 }),
    ).rejects.toMatchObject(refused);

    // `from == to` is an empty range: no buckets, no rows.
    const empty = await ctx.store.series({ ...series, to: T0 });
    expect(empty.t).toEqual([]);
    expect(empty.series.vave1?.avg ?? []).toEqual([]);
    expect((await ctx.store.energy({ ...energy, to: T0 })).t).toEqual([]);
    expect((await ctx.store.readRaw({ deviceKey: dev, from: T0, to: T0, limit: 10 })).items).toEqual([]);
    // No statistics listed means all three.
    const all = await ctx.store.series({ ...series, stats: [] });
    expect(Object.keys(all.series.vave1 ?? {}).sort()).toEqual(['avg', 'max', 'min']);
    expect(all.series.vave1?.min?.[0]).toBe(230);
  });

  it('a closed store refuses every call as unavailable (503), not as a fault', async () => {
    const other = await open();
    await other.close();
    const unavailable = { name: 'StoreError', kind: 'unavailable', retryable: true };
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
    await expect(other.write([{ deviceKey: newKey(), ts: T0, values: { vave1: 1 } }])).rejects.toMatchObject(
      unavailable,
    );
    await expect(other.latest(newKey())).rejects.toMatchObject(unavailable);
  });
}
