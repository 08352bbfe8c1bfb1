/**
 * The idle trim of DuckDB's cache (trim.ts): a trim gives the file's cached blocks back, keeps the rows
 * not yet checkpointed in memory and the working limit, never runs beside a read, and a read that starts
 * during one waits for it and answers as before. The minute's refresh is trimmed at once when nobody reads.
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
import type { DuckDbStore } from './store.ts';

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

/** DuckDB's memory by tag: held, and written to its temporary file. */
async function memory(store: DuckDbStore): Promise<{ tables: number; rows: number; spilled: number }> {
  const tags = await store.memoryByTag();
  const of = (tag: string) => tags.find((m) => m.tag === tag)?.memoryBytes ?? 0;
  return {
    tables: of('BASE_TABLE'),
    rows: of('IN_MEMORY_TABLE'),
    spilled: tags.reduce((sum, m) => sum + m.temporaryBytes, 0),
  };
}

/** `history(days)` through the bulk path, in batches of 20,000 readings. */
async function bulkHistory(store: DuckDbStore, days: number): Promise<void> {
  const readings = history(days);
  await store.writeBulk(
    (async function* () {
      for (let i = 0; i < readings.length; i += 20_000) yield readings.slice(i, i + 20_000);
    })(),
  );
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
      const held = await memory(store);
      expect(held.tables).toBeGreaterThan(16 * MB);
      expect(await store.trimMemory()).toBe('trimmed');
      // The file's blocks go down to the idle limit; the rows not yet checkpointed stay, none spilled.
      const after = await memory(store);
      expect(after.tables).toBeLessThanOrEqual(16 * MB);
      expect(after.rows).toBe(held.rows);
      expect(after.spilled).toBe(0);
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
      // The read before it may have loaded less than a trim leaves (8 MiB above the rows in memory): then
      // the trim is 'small' and the read beside it runs as any other.
      expect(trimmed).not.toBe('closed');
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

  /**
   * A store after 60 days of bulk history and the large refresh of their rollups, whose rows sit in memory
   * until the checkpoint it asked for has run; `held` is the in-memory rows before the refresh.
   */
  async function afterLargeRefresh(file: string) {
    const store = await trimmedByHand(file, '512MB');
    const inMemory = async () => (await memory(store)).rows;
    try {
      await bulkHistory(store, 60);
      const held = await inMemory();
      expect((await store.refreshRollups(T0 + 61 * 86_400_000)).buckets).toBeGreaterThan(50_000);
      expect(await inMemory()).toBeGreaterThan(held + 4 * MB);
      return { store, inMemory, held };
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  it('checkpoints after a large refresh: its rows leave the in-memory table segments', async () => {
    const { store, inMemory, held } = await afterLargeRefresh('checkpointed.duckdb');
    try {
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

  it('settles: the checkpoint a large refresh asked for runs at once, and settle returns when it is over', async () => {
    const { store, inMemory, held } = await afterLargeRefresh('settled.duckdb');
    try {
      await store.settle();
      expect(await inMemory()).toBeLessThanOrEqual(held + MB);
      expect(store.writeStats().checkpointing).toBe(false);
      // Nothing more to wait for: a second call returns at once and the store still answers.
      await store.settle();
      const day = await store.series({
        deviceKey: 'aa0000000002',
        params: ['vave1'],
        interval: '1d',
        stats: ['max'],
        from: T0,
        to: T0 + 2 * 86_400_000,
        tz: 'UTC',
      });
      expect(day.series.vave1!.max).toHaveLength(2);
      expect(day.series.vave1!.max![0]).toBeCloseTo(235, 0);
    } finally {
      await store.close();
    }
  }, 90_000);

  /**
   * A year-like file in short: 60 days written and checkpointed, so that the minute's refresh after a late
   * reading reads the file's blocks (the live rows of a real server are in them after each checkpoint).
   */
  async function checkpointed(file: string, idleTrimMs: number): Promise<DuckDbStore> {
    const store = await createDuckDbStore({
      path: join(dir, file),
      memoryLimit: '512MB',
      idleMemoryLimit: '16MB',
      idleTrimMs,
    });
    await bulkHistory(store, 60);
    expect((await store.refreshRollups(T0 + 61 * 86_400_000)).buckets).toBeGreaterThan(50_000);
    // The large refresh's checkpoint: its rows leave memory.
    await store.settle();
    return store;
  }

  /** A late reading of the first meter in the file's last day, and the refresh that follows it. */
  async function lateRefresh(store: DuckDbStore): Promise<void> {
    const at = T0 + 59 * 86_400_000 + 30_000;
    await store.write([
      { deviceKey: 'aa0000000001', ts: at, values: { vave1: 231, eai1: 1000 + 0.02 * 84_961 } },
    ]);
    const { buckets } = await store.refreshRollups(T0 + 61 * 86_400_000);
    expect(buckets).toBeGreaterThan(0);
    expect(buckets).toBeLessThan(50_000);
  }

  /** DuckDB's memory once `ok` holds for it, or after 5 s. */
  const memoryOnce = async (store: DuckDbStore, ok: (m: Awaited<ReturnType<typeof memory>>) => boolean) => {
    const deadline = Date.now() + 5_000;
    let m = await memory(store);
    while (!ok(m) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      m = await memory(store);
    }
    return m;
  };

  it('trims the minute refresh at once when nobody reads, and keeps it while someone does', async () => {
    // Idle after 300 ms: the refresh's blocks go right after it, as soon as the last read is that old.
    const idle = await checkpointed('refresh-idle.duckdb', 300);
    try {
      await new Promise((r) => setTimeout(r, 400));
      expect((await memoryOnce(idle, (m) => m.tables <= 16 * MB)).tables).toBeLessThanOrEqual(16 * MB);
      const rowsBefore = (await memory(idle)).rows;
      await lateRefresh(idle);
      const m = await memoryOnce(idle, (x) => x.tables <= 16 * MB);
      expect(m.tables).toBeLessThanOrEqual(16 * MB);
      expect(m.spilled).toBe(0);
      expect(m.rows).toBeGreaterThanOrEqual(rowsBefore);
    } finally {
      await idle.close();
    }
    // Someone read a moment ago (the idle time is an hour): the refresh's blocks stay for the next read.
    const busy = await checkpointed('refresh-busy.duckdb', 3_600_000);
    try {
      expect(await busy.trimMemory()).toBe('trimmed');
      await busy.series({
        deviceKey: 'aa0000000002',
        params: ['vave1'],
        from: T0 + 58 * 86_400_000,
        to: T0 + 59 * 86_400_000,
        interval: '15m',
        stats: ['avg'],
        source: 'raw',
      });
      const read = (await memory(busy)).tables;
      await lateRefresh(busy);
      await new Promise((r) => setTimeout(r, 300));
      expect((await memory(busy)).tables).toBeGreaterThan(read);
    } finally {
      await busy.close();
    }
  }, 120_000);

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
