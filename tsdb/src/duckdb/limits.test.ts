/**
 * The bulk memory limit (limits.ts): DuckDB works under it while history is bulk-loaded, a large rollup
 * refresh runs or a raw stream is read, and under the store's whole limit otherwise; when DuckDB runs out
 * of memory under it, the store gives it up and the work is done under the whole limit, nothing lost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading } from '@kilowatch/core';
import { afterAll, describe, expect, it } from 'vitest';
import { expectClose } from '../conformance/context.ts';
import { createDuckDbStore, type DuckDbStore } from '../index.ts';
import { outOfMemory } from './limits.ts';

const dir = mkdtempSync(join(tmpdir(), 'kilowatch-limits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 2, 1);
const MIN = 60_000;
const DAY = 86_400_000;

/** `days` of one-minute readings of one three-phase meter. */
function history(deviceKey: string, days: number): Reading[] {
  const out: Reading[] = [];
  for (let i = 0; i < days * 1440; i++) {
    const values: Record<string, number> = {};
    for (let p = 1; p <= 3; p++) {
      values[`vave${p}`] = 230 + Math.sin(i / 50 + p) * 5;
      values[`pave${p}`] = 1000 + Math.sin(i / 30 + p) * 400;
      values[`eai${p}`] = 1000 + i * 0.02 * p;
    }
    out.push({ deviceKey, ts: T0 + i * MIN, values });
  }
  return out;
}

async function* batches(readings: readonly Reading[], size: number, during?: () => Promise<void>) {
  for (let i = 0; i < readings.length; i += size) {
    yield readings.slice(i, i + size);
    await during?.();
  }
}

/** Daily energy of the month from the rollups equals that from raw readings. */
async function expectRollupEnergyOfRaw(s: DuckDbStore, deviceKey: string, counter: string): Promise<void> {
  const q = { deviceKey, counters: [counter], from: T0, to: T0 + 30 * DAY, interval: '1d' } as const;
  const rolled = await s.energy(q);
  const raw = await s.energy({ ...q, source: 'raw' });
  expect(rolled.t).toEqual(raw.t);
  expectClose(rolled.energy[counter]!, raw.energy[counter]!);
}

const store = (file: string, bulkMemoryLimit: string) =>
  createDuckDbStore({ path: join(dir, file), memoryLimit: '512MB', bulkMemoryLimit });

describe('the bulk memory limit', () => {
  it('is in force while a bulk load and a raw stream run, the whole limit before and after', async () => {
    const s = await store('limits.duckdb', '128MB');
    try {
      expect(await s.memoryLimit()).toMatch(/^488\.\d MiB$/);
      expect(s.memoryLimits()).toEqual({ inForceBytes: 512_000_000, bulkLimitGivenUp: false });
      const seen: string[] = [];
      const counted: unknown[] = [];
      await s.writeBulk(
        batches(history('ab0000000001', 2), 1440, async () => {
          seen.push(await s.memoryLimit());
          counted.push(s.memoryLimits());
        }),
      );
      expect(counted[0]).toEqual({ inForceBytes: 128_000_000, bulkLimitGivenUp: false });
      expect(seen.length).toBe(2);
      for (const limit of seen) expect(limit).toMatch(/^122\.\d MiB$/);
      expect(await s.memoryLimit()).toMatch(/^488\.\d MiB$/);

      const during: string[] = [];
      let rows = 0;
      for await (const page of s.streamRaw({
        deviceKey: 'ab0000000001',
        from: T0,
        to: T0 + 2 * DAY,
        pageSize: 1000,
      })) {
        rows += page.length;
        during.push(await s.memoryLimit());
      }
      expect(rows).toBe(2 * 1440);
      for (const limit of during) expect(limit).toMatch(/^122\.\d MiB$/);
      expect(await s.memoryLimit()).toMatch(/^488\.\d MiB$/);
    } finally {
      await s.close();
    }
  }, 60_000);

  it('is not used when it is not below the memory limit', async () => {
    const s = await store('above.duckdb', '2GB');
    try {
      const seen: string[] = [];
      await s.writeBulk(
        batches(history('ab0000000002', 1), 1440, async () => {
          seen.push(await s.memoryLimit());
        }),
      );
      expect(seen).toEqual([expect.stringMatching(/^488\.\d MiB$/)]);
    } finally {
      await s.close();
    }
  }, 60_000);

  it.each(['4MB', '8MB'])(
    'is given up when DuckDB runs out of memory under it (%s): the load run again completes, nothing twice',
    async (limit) => {
      // Too little for 30 days of a meter: staging or inserting the first batches runs out of memory.
      const s = await store(`tiny-${limit}.duckdb`, limit);
      try {
        const readings = history('ab0000000003', 30);
        await expect(s.writeBulk(batches(readings, 20_000))).rejects.toSatisfy(outOfMemory);
        expect(s.memoryLimits()).toEqual({ inForceBytes: 512_000_000, bulkLimitGivenUp: true });
        // The lower limit is given up for good: the same load again runs under the whole limit.
        const seen: string[] = [];
        const { written } = await s.writeBulk(
          batches(readings, 20_000, async () => {
            seen.push(await s.memoryLimit());
          }),
        );
        expect(written).toBe(readings.length);
        for (const l of seen) expect(l).toMatch(/^488\.\d MiB$/);
        const stored: number[] = [];
        for await (const page of s.streamRaw({ deviceKey: 'ab0000000003', from: T0, to: T0 + 31 * DAY }))
          for (const r of page) stored.push(r.ts);
        expect(stored).toEqual(readings.map((r) => r.ts));
        // The month's refresh runs (under the whole limit now), and energy from rollups equals raw.
        await s.refreshRollups(T0 + 31 * DAY);
        await expectRollupEnergyOfRaw(s, 'ab0000000003', 'eai1');
      } finally {
        await s.close();
      }
    },
    120_000,
  );

  it('is given up when a large refresh runs out of memory under it: the refresh completes under the whole limit', async () => {
    const s = await createDuckDbStore({ path: join(dir, 'refresh.duckdb'), memoryLimit: '512MB' });
    const readings = history('ab0000000005', 30);
    try {
      await s.writeBulk(batches(readings, 20_000));
    } finally {
      await s.close();
    }
    // Opened again with a bulk limit too small for the month's refresh (its rollups are still to do).
    const t = await store('refresh.duckdb', '4MB');
    try {
      const { buckets } = await t.refreshRollups(T0 + 31 * DAY);
      expect(buckets).toBeGreaterThan(0);
      expect(await t.memoryLimit()).toMatch(/^488\.\d MiB$/);
      await expectRollupEnergyOfRaw(t, 'ab0000000005', 'eai2');
    } finally {
      await t.close();
    }
  }, 120_000);

  it('refuses a bulk limit that is not a size', async () => {
    await expect(store('bad.duckdb', 'a little')).rejects.toMatchObject({
      kind: 'configuration',
      message: 'the bulk memory limit must be a size such as 192MB, got "a little"',
    });
  });

  it('tells DuckDB running out of memory from other failures', () => {
    const oom = new Error(
      'Out of Memory Error: failed to pin block of size 256.0 KiB (183.1 MiB/183.1 MiB used)',
    );
    expect(outOfMemory(oom)).toBe(true);
    expect(outOfMemory(new Error('bulk write failed', { cause: oom }))).toBe(true);
    expect(
      outOfMemory(
        new Error('TransactionContext Error: Failed to commit: could not allocate block of size 256.0 KiB'),
      ),
    ).toBe(true);
    expect(
      outOfMemory(new Error('Failed to append: Failed to commit: failed to pin block of size 256.0 KiB')),
    ).toBe(true);
    expect(outOfMemory(new Error('Constraint Error: duplicate key'))).toBe(false);
    expect(outOfMemory('Out of Memory Error')).toBe(false);
  });
});
