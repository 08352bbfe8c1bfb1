/**
 * The DuckDB engine across restarts and crashes: a file reopened keeps readings, rollups and pending
 * rollup work; files from an older counter rule or catalogue are brought up to date on open; a SIGKILL
 * (during a checkpoint too) loses nothing committed or journaled; the checkpoint journal is replayed and
 * emptied.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { HOUR_MS } from '@kilowatch/core';
import { afterAll, describe, expect, it } from 'vitest';
import { columnize } from '../columns.ts';
import { createDuckDbStore } from '../index.ts';
import { journalRecord } from './journal.ts';
import { STORED } from './schema.ts';
import { CRASH_DEVICES, CRASH_T0, crashBatches } from './test/crashBatches.ts';
import { bigBatch, JOURNAL_DEVICE, JOURNAL_T0, MARKED_DEVICE, marked } from './test/journalBatches.ts';

const dir = mkdtempSync(join(tmpdir(), 'kilowatch-tsdb-durability-'));

/** Runs a writer script (under `test/`) on the database at `path` in a child process that kills itself. */
const runChild = (script: string, path: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, script), path], {
    encoding: 'utf8',
    timeout: 120_000,
  });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('DuckDB engine across restarts and crashes', () => {
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
    expect(await store.latest(dev)).toEqual({ ts: T0 + 60 * MIN, values: { eai1: 7, vave1: 200 } });
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
    // The late reading at 01:00 closes the first hour ((start, end]): 5.9 + 1.1 there, none after it.
    expect(e.energy.eai1![0]).toBeCloseTo(7, 9);
    expect(e.energy.eai1![1]).toBeNull();
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

  it('rebuilds rollups made by an older counter rule on open: answers follow (start, end] without a manual step', async () => {
    const path = join(dir, 'old-rule.duckdb');
    const dev = 'a0a0a0a0a0a0';
    const H8 = Date.UTC(2026, 0, 12, 8);
    let store = await createDuckDbStore({ path });
    await store.write(
      [100, 101, 103, 106].map((v, i) => ({ deviceKey: dev, ts: H8 + i * HOUR_MS, values: { eai1: v } })),
    );
    await store.refreshRollups(H8 + 6 * HOUR_MS);
    await store.close();
    const q = { deviceKey: dev, counters: ['eai1'], from: H8, to: H8 + 3 * HOUR_MS, interval: '1h' } as const;
    // Rollups as the old rule left them ([start, end): 08:00 → 0, 09:00 → 1, 10:00 → 2), still marked as
    // current: answered as stored.
    const tamper = async (sql: string[]) => {
      const db = await DuckDBInstance.create(path);
      const c = await db.connect();
      for (const x of sql) await c.run(x);
      c.closeSync();
      db.closeSync();
    };
    const oldRule = [
      `UPDATE rollup_1h SET e = CASE bucket WHEN ${H8} THEN 0 WHEN ${H8 + HOUR_MS} THEN 1 WHEN ${H8 + 2 * HOUR_MS} THEN 2 ELSE 3 END WHERE param = 'eai1'`,
    ];
    await tamper(oldRule);
    store = await createDuckDbStore({ path });
    expect((await store.energy(q)).energy.eai1).toEqual([0, 1, 2]);
    await store.close();
    // The same rollups in a file from before the rule's version was recorded: rebuilt on open.
    await tamper([...oldRule, `DELETE FROM meta WHERE k = 'rollup_version'`]);
    store = await createDuckDbStore({ path });
    expect((await store.energy(q)).energy.eai1).toEqual([1, 2, 3]);
    expect((await store.energy({ ...q, interval: '15m' })).energy.eai1).toEqual([
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
    expect((await store.energy({ ...q, source: 'raw' })).energy.eai1).toEqual([1, 2, 3]);
    await store.close();
    // Rebuilt once: the version is recorded, the next open keeps the rollups.
    await tamper(oldRule);
    store = await createDuckDbStore({ path });
    expect((await store.energy(q)).energy.eai1).toEqual([0, 1, 2]);
    await store.close();
  });

  it('opens a file written with an earlier catalogue: a parameter added since gets its column, the data reads back', async () => {
    const path = join(dir, 'old-catalogue.duckdb');
    const dev = 'c0c0c0c0c0c0';
    const T = Date.UTC(2026, 2, 2, 10);
    // The newest parameter of the catalogue stands for one added after the file was written.
    const added = STORED[STORED.length - 1]!;
    let store = await createDuckDbStore({ path });
    await store.write(
      [0, 1, 2].map((i) => ({ deviceKey: dev, ts: T + i * MIN, values: { vave1: 230 + i, eai1: 10 + i } })),
    );
    await store.refreshRollups(T + HOUR_MS);
    await store.close();
    // The file as the earlier catalogue wrote it: no column for the added parameter.
    const db = await DuckDBInstance.create(path);
    const c = await db.connect();
    await c.run(`ALTER TABLE readings DROP COLUMN "${added}"`);
    c.closeSync();
    db.closeSync();

    store = await createDuckDbStore({ path });
    const page = await store.readRaw({ deviceKey: dev, from: T, to: T + HOUR_MS, limit: 10 });
    expect(page.items.map((r) => [r.ts, r.values.vave1, r.values.eai1])).toEqual([
      [T, 230, 10],
      [T + MIN, 231, 11],
      [T + 2 * MIN, 232, 12],
    ]);
    expect((await store.latest(dev))?.values).toMatchObject({ vave1: 232, eai1: 12 });
    // The added parameter is stored and read like any other.
    await store.write([{ deviceKey: dev, ts: T + 3 * MIN, values: { vave1: 233, [added]: 7 } }]);
    const after = await store.readRaw({ deviceKey: dev, from: T + 3 * MIN, to: T + HOUR_MS, limit: 10 });
    expect(after.items[0]?.values).toEqual({ vave1: 233, [added]: 7 });
    expect((await store.latest(dev))?.values[added]).toBe(7);
    await store.close();
  });

  it('after a crash (SIGKILL, no close) keeps every committed reading, newest value and pending rollup', async () => {
    const path = join(dir, 'crash.duckdb');
    const child = runChild('test/crashWriter.ts', path);
    expect(child.stdout).toBe('written\n');
    expect(child.signal).toBe('SIGKILL');

    // The same batches into a store that closes normally: the reference.
    const ref = await createDuckDbStore();
    for (const batch of crashBatches) await ref.write(batch);
    const store = await createDuckDbStore({ path });
    const [a, b] = CRASH_DEVICES;
    expect(await store.devices()).toEqual([a, b]);
    expect(await store.latest(a)).toEqual({
      ts: CRASH_T0 + 21 * MIN,
      values: { vave1: 250, eai1: 21, tempmain: 21.5 },
    });
    expect(await store.latest(b)).toEqual({ ts: CRASH_T0 + 6 * MIN, values: { vave1: 228 } });
    for (const dev of CRASH_DEVICES) expect(await store.latest(dev)).toEqual(await ref.latest(dev));
    // Re-sent readings after the restart are recognised as stored (no duplicate rows).
    await store.write(crashBatches[1]!);
    const raw = await store.readRaw({ deviceKey: a, from: CRASH_T0, to: CRASH_T0 + 60 * MIN, limit: 100 });
    expect(raw.items).toHaveLength(22);
    expect(raw.items.find((r) => r.ts === CRASH_T0 + 3 * MIN)?.values.vave1).toBe(200);
    // Rollup work pending at the crash is still pending.
    expect((await store.refreshRollups(CRASH_T0 + 60 * MIN)).buckets).toBeGreaterThan(0);
    await ref.refreshRollups(CRASH_T0 + 60 * MIN);
    const q = {
      deviceKey: a,
      counters: ['eai1'],
      from: CRASH_T0,
      to: CRASH_T0 + 60 * MIN,
      interval: '15m',
    } as const;
    expect(await store.energy(q)).toEqual(await ref.energy(q));
    await ref.close();
    // Closed normally, the snapshot holds it all: a second open reads the same.
    await store.close();
    const again = await createDuckDbStore({ path });
    expect(await again.latest(a)).toEqual({
      ts: CRASH_T0 + 21 * MIN,
      values: { vave1: 250, eai1: 21, tempmain: 21.5 },
    });
    await again.close();
  });

  it('keeps every reading across checkpoints taken while writes go on, and after reopening', async () => {
    const path = join(dir, 'checkpoints.duckdb');
    const dev = 'f4b2c3d4e5f6';
    let store = await createDuckDbStore({ path });
    const values: Record<string, number> = {};
    for (const p of ['vave', 'vmin', 'vmax', 'iave', 'imin', 'imax', 'pave', 'pmin', 'pmax'])
      for (const n of [1, 2, 3]) values[`${p}${n}`] = n;
    // 12 × 5,000 readings × 29 columns: well past the bytes between checkpoints.
    const writes: Promise<unknown>[] = [];
    for (let b = 0; b < 12; b++) {
      writes.push(
        store.write(
          Array.from({ length: 5000 }, (_, i) => ({
            deviceKey: dev,
            ts: T0 + (b * 5000 + i) * MIN,
            values: { ...values, pave1: b * 5000 + i },
          })),
        ),
      );
    }
    await Promise.all(writes);
    await store.close();
    store = await createDuckDbStore({ path });
    let rows = 0;
    let sum = 0;
    for await (const page of store.streamRaw({
      deviceKey: dev,
      from: T0,
      to: T0 + 60_000 * MIN,
      pageSize: 10_000,
    })) {
      rows += page.length;
      for (const r of page) sum += r.values.pave1 ?? 0;
    }
    expect(rows).toBe(60_000);
    expect(sum).toBe((60_000 * 59_999) / 2);
    await store.close();
  });

  it('acknowledges writes made while a checkpoint runs from its journal; reads see them, the journal empties', async () => {
    const path = join(dir, 'journal.duckdb');
    const store = await createDuckDbStore({ path });
    let b = 0;
    for (; b < 40 && !store.writeStats().checkpointing; b++) await store.write(bigBatch(b));
    expect(store.writeStats().checkpointing).toBe(true);
    await store.write(marked);
    // The same readings again with new voltages: applied together with the first, the later one wins.
    await store.write(marked.map((r) => ({ ...r, values: { vave1: r.values.vave1! + 100 } })));
    expect(store.writeStats()).toMatchObject({ journaledBatches: 2 });
    // The read lays the journaled batches over what DuckDB holds, whether the checkpoint still runs or not.
    const page = await store.readRaw({ deviceKey: MARKED_DEVICE, from: 0, to: 2 ** 50, limit: 10 });
    expect(page.items.map((r) => r.values)).toEqual([
      { vave1: 331, eai1: 10 },
      { vave1: 332, eai1: 11 },
      { vave1: 333, eai1: 12 },
    ]);
    expect(await store.latest(MARKED_DEVICE)).toEqual({
      ts: marked[2]!.ts,
      values: { vave1: 333, eai1: 12 },
    });
    // Reads do not wait for the checkpoint: it is over once `settle` resolves.
    await store.settle();
    expect(store.writeStats()).toMatchObject({ checkpointing: false, pendingBatches: 0 });
    expect(statSync(`${path}.journal`).size).toBe(0);
    // Writes commit directly again.
    await store.write(bigBatch(b));
    expect(store.writeStats().journaledBatches).toBe(2);
    const all = await store.readRaw({ deviceKey: JOURNAL_DEVICE, from: JOURNAL_T0, to: 2 ** 50, limit: 1 });
    expect(all.items[0]?.values.pave1).toBe(0);
    await store.close();
  });

  it('past a full journal, writes wait for DuckDB and still land in the order they were made', async () => {
    const path = join(dir, 'journal-full.duckdb');
    const store = await createDuckDbStore({ path, journalMaxRows: 4 });
    for (let b = 0; b < 40 && !store.writeStats().checkpointing; b++) await store.write(bigBatch(b));
    expect(store.writeStats().checkpointing).toBe(true);
    // Ten writes of the same two readings with rising values, all at once: two fit the journal.
    const ts = JOURNAL_T0 + 400 * 86_400_000;
    await Promise.all(
      Array.from({ length: 10 }, (_, k) =>
        store.write([
          { deviceKey: MARKED_DEVICE, ts, values: { vave1: 200 + k } },
          { deviceKey: MARKED_DEVICE, ts: ts + MIN, values: { vave1: 300 + k } },
        ]),
      ),
    );
    expect(store.writeStats().journaledBatches).toBe(2);
    const page = await store.readRaw({ deviceKey: MARKED_DEVICE, from: ts, to: ts + 2 * MIN, limit: 10 });
    expect(page.items.map((r) => r.values.vave1)).toEqual([209, 309]);
    expect(store.writeStats()).toMatchObject({ checkpointing: false, pendingBatches: 0 });
    await store.close();
  });

  it('after a crash with journaled writes (SIGKILL during a checkpoint) applies them on open', async () => {
    const path = join(dir, 'journal-crash.duckdb');
    const child = runChild('test/journalWriter.ts', path);
    expect(child.signal).toBe('SIGKILL');
    const said = JSON.parse(child.stdout) as { journaledBatches: number; journalBytes: number };
    // The marked batch was acknowledged from the journal, not from a DuckDB commit.
    expect(said.journaledBatches).toBe(1);
    expect(said.journalBytes).toBeGreaterThan(0);
    const store = await createDuckDbStore({ path });
    const page = await store.readRaw({ deviceKey: MARKED_DEVICE, from: 0, to: 2 ** 50, limit: 10 });
    expect(page.items).toEqual(marked.map((r) => ({ ts: r.ts, values: r.values })));
    expect(statSync(`${path}.journal`).size).toBe(0);
    await store.close();
  });

  it('empties a journal left with only a torn record, so later records are replayed', async () => {
    const path = join(dir, 'journal-torn.duckdb');
    writeFileSync(`${path}.journal`, Buffer.from([9, 0, 0, 0, 1, 2]));
    let store = await createDuckDbStore({ path });
    expect(statSync(`${path}.journal`).size).toBe(0);
    await store.close();
    // A record appended after opening is found by the next open (the torn bytes are gone).
    appendFileSync(`${path}.journal`, journalRecord(columnize(marked)));
    store = await createDuckDbStore({ path });
    const page = await store.readRaw({ deviceKey: MARKED_DEVICE, from: 0, to: 2 ** 50, limit: 10 });
    expect(page.items.map((r) => r.values.vave1)).toEqual([231, 232, 233]);
    await store.close();
  });
});
