/**
 * The idle trim of DuckDB's cache (trim.ts): a trim gives memory back and keeps the working limit, never
 * runs beside a read, and a read that starts during one waits for it and answers as before.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading } from '@kilowatch/core';
import { afterAll, describe, expect, it } from 'vitest';
import { expectClose } from '../conformance/context.ts';
import { describeTelemetryStoreConformance } from '../conformance.ts';
import { createDuckDbStore } from '../index.ts';
import type { SeriesQuery, SeriesResult } from '../port.ts';

const dir = mkdtempSync(join(tmpdir(), 'kilowatch-trim-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MB = 1_000_000;
const T0 = Date.UTC(2026, 4, 4);
const MIN = 60_000;

// The whole suite with a trim attempted every second whenever no read runs.
describeTelemetryStoreConformance('duckdb on disk, trimmed whenever idle', () =>
  createDuckDbStore({
    path: join(dir, 'conformance.duckdb'),
    memoryLimit: '512MB',
    idleMemoryLimit: '16MB',
    idleTrimMs: 0,
  }),
);

/** Two meters with every phase, a reading a minute for `days` days. */
function history(days: number): Reading[] {
  const out: Reading[] = [];
  for (let i = 0; i < days * 1440; i++) {
    for (const deviceKey of ['aa0000000001', 'aa0000000002']) {
      const values: Record<string, number> = {};
      for (let p = 1; p <= 3; p++) {
        values[`vave${p}`] = 230 + Math.sin(i / 50 + p) * 5;
        values[`iave${p}`] = 5 + Math.cos(i / 70 + p);
        values[`pave${p}`] = 1000 + Math.sin(i / 30 + p) * 400;
        values[`eai${p}`] = 1000 + i * 0.02 * p;
      }
      out.push({ deviceKey, ts: T0 + i * MIN, values });
    }
  }
  return out;
}

/**
 * The same answer: times, minima and maxima exactly; averages to the last bits (DuckDB sums in parallel,
 * so the order of the additions, and the last bit of a sum, may differ between two runs).
 */
function expectSame(a: SeriesResult, b: SeriesResult): void {
  expect(a.t).toEqual(b.t);
  expect(Object.keys(a.series)).toEqual(Object.keys(b.series));
  for (const [p, s] of Object.entries(b.series)) {
    expect(a.series[p]!.min).toEqual(s.min);
    expect(a.series[p]!.max).toEqual(s.max);
    expectClose(a.series[p]!.avg!, s.avg!);
  }
}

/** A file store with a 16MB idle limit whose timer never fires in a test: trims are asked for by hand. */
const trimmedByHand = (file: string, memoryLimit: string) =>
  createDuckDbStore({ path: join(dir, file), memoryLimit, idleMemoryLimit: '16MB', idleTrimMs: 3_600_000 });

describe('idle trim of the DuckDB cache', () => {
  it('gives the cache back down to the idle limit and keeps the working limit', async () => {
    const store = await trimmedByHand('trim.duckdb', '512MB');
    try {
      const readings = history(60);
      for (let i = 0; i < readings.length; i += 20_000) await store.write(readings.slice(i, i + 20_000));
      await store.refreshRollups(T0 + 61 * 86_400_000);
      const q: SeriesQuery = {
        deviceKey: 'aa0000000001',
        params: ['vave1', 'pave2', 'iave3'],
        from: T0,
        to: T0 + 60 * 86_400_000,
        interval: '15m',
        stats: ['min', 'avg', 'max'],
        source: 'raw',
      };
      const before = await store.series(q);
      expect(await store.memoryUsage()).toBeGreaterThan(16 * MB);
      expect(await store.trimMemory()).toBe('trimmed');
      expect(await store.memoryUsage()).toBeLessThanOrEqual(16 * MB);
      const limit = await store.memoryLimit();
      expect(limit).toBe('488.2 MiB');
      // Nothing ran since: nothing to give back.
      expect(await store.trimMemory()).toBe('small');
      // A read started while a trim runs waits for it, and answers the same.
      const [trimmed, during] = await Promise.all([
        (async () => {
          await store.series(q);
          return store.trimMemory();
        })(),
        store.series(q),
      ]);
      expect(['trimmed', 'busy']).toContain(trimmed);
      expectSame(during, before);
      expectSame(await store.series(q), before);
      expect(await store.memoryLimit()).toBe(limit);
    } finally {
      await store.close();
    }
  });

  it('does not trim while a read is in progress', async () => {
    const store = await trimmedByHand('busy.duckdb', '256MB');
    try {
      await store.write(history(2));
      const pages = store
        .streamRaw({
          deviceKey: 'aa0000000001',
          params: ['vave1'],
          from: T0,
          to: T0 + 2 * 86_400_000,
          pageSize: 100,
        })
        [Symbol.asyncIterator]();
      expect((await pages.next()).done).toBe(false);
      expect(await store.trimMemory()).toBe('busy');
      let rows = 100;
      for (let p = await pages.next(); !p.done; p = await pages.next()) rows += p.value.length;
      expect(rows).toBe(2 * 1440);
      const limit = await store.memoryLimit();
      expect(await store.trimMemory()).not.toBe('busy');
      expect(await store.memoryLimit()).toBe(limit);
    } finally {
      await store.close();
    }
  });

  it('checkpoints after a large refresh: its rows leave the in-memory table segments', async () => {
    const store = await trimmedByHand('checkpointed.duckdb', '512MB');
    const inMemory = async () =>
      (await store.memoryByTag()).find((m) => m.tag === 'IN_MEMORY_TABLE')?.memoryBytes ?? 0;
    try {
      const readings = history(60);
      await store.writeBulk(
        (async function* () {
          for (let i = 0; i < readings.length; i += 20_000) yield readings.slice(i, i + 20_000);
        })(),
      );
      const held = await inMemory();
      const { buckets } = await store.refreshRollups(T0 + 61 * 86_400_000);
      expect(buckets).toBeGreaterThan(50_000);
      // The refresh's rows sit in memory until the checkpoint it asked for has run.
      expect(await inMemory()).toBeGreaterThan(held + 4 * MB);
      const deadline = Date.now() + 20_000;
      while ((await inMemory()) > held + MB && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await inMemory()).toBeLessThanOrEqual(held + MB);
      // And nothing was lost on the way: the rollups answer what the raw readings do.
      const q = {
        deviceKey: 'aa0000000001',
        counters: ['eai1'],
        from: T0,
        to: T0 + 60 * 86_400_000,
      } as const;
      const rolled = await store.energy({ ...q, interval: '1d' });
      const raw = await store.energy({ ...q, interval: '1d', source: 'raw' });
      expect(rolled.t).toEqual(raw.t);
      expectClose(rolled.energy.eai1, raw.energy.eai1!);
    } finally {
      await store.close();
    }
  }, 90_000);

  it('refuses an idle limit that is not a size, or without a limit to go back to', async () => {
    await expect(
      createDuckDbStore({ path: join(dir, 'bad.duckdb'), memoryLimit: '1GB', idleMemoryLimit: 'half' }),
    ).rejects.toMatchObject({ kind: 'configuration' });
    await expect(
      createDuckDbStore({ path: join(dir, 'bad.duckdb'), idleMemoryLimit: '64MB' }),
    ).rejects.toMatchObject({
      kind: 'configuration',
      message: 'an idle memory limit needs a memory limit to go back to',
    });
  });
});
