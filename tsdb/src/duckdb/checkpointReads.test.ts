/**
 * Reads beside a checkpoint (checkpoints.ts): a checkpoint held open by the test (`holdCheckpoint`, the
 * write lock held, writes journaled) for as long as it likes. Series, energy, newest values, raw pages,
 * the device list and an export's stream all answer before it ends — the checkpoint can only end once the
 * test lets it, so an answer is proof — newest values and raw pages show the journaled readings, and the
 * aggregates take them in once they are applied. Neither a trim nor the bulk memory limit asked for
 * meanwhile holds a read back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading } from '@kilowatch/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createDuckDbStore } from '../index.ts';
import type { EnergyQuery, SeriesQuery } from '../port.ts';
import type { DuckDbStore, DuckDbStoreOptions } from './store.ts';
import { bigBatch } from './test/journalBatches.ts';

const dir = mkdtempSync(join(tmpdir(), 'kilowatch-checkpoint-reads-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 4, 4);
const MIN = 60_000;
const HOUR = 60 * MIN;
const DEV = 'cc0000000001';
/** A device whose only readings arrive while the checkpoint is held. */
const NEW_DEV = 'cc0000000002';

/** Two hours of a meter, a reading a minute: a register rising 0.1 a minute, a steady voltage. */
const stored: Reading[] = Array.from({ length: 120 }, (_, i) => ({
  deviceKey: DEV,
  ts: T0 + i * MIN,
  values: { eai1: 100 + i * 0.1, vave1: 230 },
}));
/** Written while the checkpoint is held: the third hour, and the last stored minute's voltage again. */
const journaled: Reading[] = [
  { deviceKey: DEV, ts: T0 + 119 * MIN, values: { vave1: 999 } },
  ...Array.from({ length: 60 }, (_, i) => ({
    deviceKey: DEV,
    ts: T0 + (120 + i) * MIN,
    values: { eai1: 112 + i * 0.2, vave1: 240 },
  })),
];
const fresh: Reading[] = [{ deviceKey: NEW_DEV, ts: T0 + 30 * MIN, values: { pave1: 1500 } }];

const seriesQ: SeriesQuery = {
  deviceKey: DEV,
  params: ['vave1'],
  from: T0,
  to: T0 + 3 * HOUR,
  interval: '1h',
  stats: ['min', 'max'],
};
const energyQ: EnergyQuery = {
  deviceKey: DEV,
  counters: ['eai1'],
  from: T0,
  to: T0 + 3 * HOUR,
  interval: '1h',
};

/** The first checkpoint the store runs is held at its end until `release`; `entered` once it is. */
function holdFirst() {
  let entered!: () => void;
  let release!: () => void;
  const enteredP = new Promise<void>((r) => {
    entered = r;
  });
  const released = new Promise<void>((r) => {
    release = r;
  });
  let armed = true;
  return {
    hook: () => {
      if (!armed) return Promise.resolve();
      armed = false;
      entered();
      return released;
    },
    entered: enteredP,
    release,
  };
}

/**
 * A file store with `stored` written and rolled up, in a checkpoint held open: large batches of another
 * meter are written until one starts it, and it has run DuckDB's CHECKPOINT.
 */
async function heldStore(file: string, opts: DuckDbStoreOptions = {}) {
  const hold = holdFirst();
  const store = await createDuckDbStore({ path: join(dir, file), ...opts, holdCheckpoint: hold.hook });
  await store.write(stored);
  await store.refreshRollups(T0 + 3 * HOUR);
  for (let b = 0; b < 40 && !store.writeStats().checkpointing; b++) await store.write(bigBatch(b));
  expect(store.writeStats().checkpointing).toBe(true);
  await hold.entered;
  return { store, release: hold.release };
}

/** An in-memory store holding `readings`, rolled up: what the file store must answer. */
async function reference(readings: readonly Reading[]): Promise<DuckDbStore> {
  const ref = await createDuckDbStore();
  await ref.write(readings);
  await ref.refreshRollups(T0 + 3 * HOUR);
  return ref;
}

describe('reads while a checkpoint runs', () => {
  it('answer before it ends: newest values and raw pages with the journaled readings, aggregates without them until applied', async () => {
    const { store, release } = await heldStore('held.duckdb');
    const before = await reference(stored);
    const after = await reference([...stored, ...journaled, ...fresh]);
    try {
      await store.write(journaled);
      await store.write(fresh);
      expect(store.writeStats()).toMatchObject({ journaledBatches: 2, pendingBatches: 2 });

      // Newest values: exact from the journal, for a device DuckDB has never seen too.
      expect(await store.latest(DEV)).toEqual({ ts: T0 + 179 * MIN, values: journaled[60]!.values });
      expect(await store.latest(NEW_DEV)).toEqual({ ts: T0 + 30 * MIN, values: { pave1: 1500 } });
      expect(await store.devices()).toEqual(expect.arrayContaining([DEV, NEW_DEV]));

      // Raw pages: the journaled rows laid over the stored ones, in order, paged by the same cursor.
      const first = await store.readRaw({
        deviceKey: DEV,
        from: T0 + 118 * MIN,
        to: T0 + 4 * HOUR,
        limit: 4,
      });
      expect(first.items).toEqual([
        { ts: T0 + 118 * MIN, values: stored[118]!.values },
        // The stored register value kept, the journaled voltage over it.
        { ts: T0 + 119 * MIN, values: { eai1: stored[119]!.values.eai1, vave1: 999 } },
        { ts: T0 + 120 * MIN, values: journaled[1]!.values },
        { ts: T0 + 121 * MIN, values: journaled[2]!.values },
      ]);
      const next = await store.readRaw({
        deviceKey: DEV,
        from: T0 + 118 * MIN,
        to: T0 + 4 * HOUR,
        limit: 100,
        cursor: first.nextCursor,
      });
      expect(next.items.map((r) => r.ts)).toEqual(journaled.slice(3).map((r) => r.ts));
      expect(next.nextCursor).toBeNull();
      const onlyNew = await store.readRaw({ deviceKey: NEW_DEV, from: T0, to: T0 + HOUR, limit: 10 });
      expect(onlyNew.items).toEqual([{ ts: T0 + 30 * MIN, values: { pave1: 1500 } }]);
      expect(
        await store.readRaw({ deviceKey: NEW_DEV, params: ['vave1'], from: T0, to: T0 + HOUR, limit: 10 }),
      ).toEqual({ items: [], nextCursor: null });
      let exported = 0;
      for await (const page of store.streamRaw({ deviceKey: DEV, from: T0, to: T0 + 4 * HOUR, pageSize: 50 }))
        exported += page.length;
      expect(exported).toBe(180);

      // Series and energy: what DuckDB has committed, from the rollups and from raw readings.
      const held = {
        series: await store.series(seriesQ),
        rawSeries: await store.series({ ...seriesQ, source: 'raw' }),
        energy: await store.energy(energyQ),
        rawEnergy: await store.energy({ ...energyQ, source: 'raw' }),
        many: await store.seriesMany([seriesQ, { ...seriesQ, source: 'raw' }]),
      };
      // All of it answered while the checkpoint is still held.
      expect(store.writeStats()).toMatchObject({ checkpointing: true, pendingBatches: 2 });
      expect(held.series).toEqual(await before.series(seriesQ));
      expect(held.rawSeries.series.vave1!.max).toEqual([230, 230, null]);
      expect(held.energy).toEqual(await before.energy(energyQ));
      expect(held.rawEnergy).toEqual(await before.energy({ ...energyQ, source: 'raw' }));
      expect(held.many[1]).toEqual(held.rawSeries);

      release();
      await store.settle();
      expect(store.writeStats()).toMatchObject({ checkpointing: false, pendingBatches: 0 });
      // Applied: raw aggregates take the journaled readings in at once, the rollups at the next refresh.
      const raw = await store.series({ ...seriesQ, source: 'raw' });
      expect(raw.series.vave1!.max).toEqual([230, 999, 240]);
      expect(raw).toEqual(await after.series({ ...seriesQ, source: 'raw' }));
      expect(await store.energy({ ...energyQ, source: 'raw' })).toEqual(
        await after.energy({ ...energyQ, source: 'raw' }),
      );
      await store.refreshRollups(T0 + 3 * HOUR);
      expect(await store.series(seriesQ)).toEqual(await after.series(seriesQ));
      const energy = await store.energy(energyQ);
      expect(energy).toEqual(await after.energy(energyQ));
      expect(energy.energy.eai1![2]).not.toBeNull();
      expect(await store.latest(DEV)).toEqual(await after.latest(DEV));
      expect(await store.latest(NEW_DEV)).toEqual(await after.latest(NEW_DEV));
    } finally {
      release();
      await Promise.all([store.close(), before.close(), after.close()]);
    }
  }, 60_000);

  it('answer while an idle trim waits for the write lock behind it', async () => {
    const { store, release } = await heldStore('trim.duckdb', {
      memoryLimit: '512MB',
      idleMemoryLimit: '16MB',
      // Never by the timer: the trim below is asked for by hand.
      idleTrimMs: 3_600_000,
    });
    try {
      await store.series(seriesQ);
      const trim = store.trimMemory();
      // Asked for again (the timer keeps asking while the lock is held): the same trim.
      expect(store.trimMemory()).toBe(trim);
      await store.write(journaled);
      expect(await store.series({ ...seriesQ, source: 'raw' })).toMatchObject({
        series: { vave1: { max: [230, 230, null] } },
      });
      expect((await store.latest(DEV))?.ts).toBe(T0 + 179 * MIN);
      expect(
        (await store.readRaw({ deviceKey: DEV, from: T0, to: T0 + 4 * HOUR, limit: 1000 })).items,
      ).toHaveLength(180);
      expect(store.writeStats().checkpointing).toBe(true);
      release();
      expect(['trimmed', 'small', 'busy']).toContain(await trim);
      await store.settle();
      expect((await store.series({ ...seriesQ, source: 'raw' })).series.vave1!.max).toEqual([230, 999, 240]);
    } finally {
      release();
      await store.close();
    }
  }, 60_000);

  it('stream an export without waiting for the write lock to set the bulk memory limit, and answer beside a bulk load waiting for it', async () => {
    const { store, release } = await heldStore('limits.duckdb', {
      memoryLimit: '512MB',
      bulkMemoryLimit: '128MB',
    });
    try {
      await store.write(journaled);
      const pages: number[] = [];
      for await (const page of store.streamRaw({
        deviceKey: DEV,
        from: T0,
        to: T0 + 4 * HOUR,
        pageSize: 100,
      }))
        pages.push(page.length);
      expect(pages).toEqual([100, 80]);
      // The limit in force is still the whole one: the lower one waits for the write lock.
      expect(await store.memoryLimit()).toMatch(/^488\.\d MiB$/);
      // A bulk load waits for the write lock to register its device and set its limit; reads do not.
      const bulk = store.writeBulk(
        (async function* () {
          yield Array.from({ length: 1440 }, (_, i) => ({
            deviceKey: 'cc0000000003',
            ts: T0 + i * MIN,
            values: { vave1: 231 },
          }));
        })(),
      );
      expect(await store.energy(energyQ)).toMatchObject({ t: [T0, T0 + HOUR, T0 + 2 * HOUR] });
      expect(
        (await store.readRaw({ deviceKey: DEV, from: T0, to: T0 + 4 * HOUR, limit: 1000 })).items,
      ).toHaveLength(180);
      expect(store.writeStats().checkpointing).toBe(true);
      release();
      expect((await bulk).written).toBe(1440);
      await store.settle();
      // A live write queues behind the limit's settings (the write lock): once it is done, so are they.
      await store.write(fresh);
      expect(await store.memoryLimit()).toMatch(/^488\.\d MiB$/);
      expect(store.memoryLimits()).toEqual({ inForceBytes: 512_000_000, bulkLimitGivenUp: false });
    } finally {
      release();
      await store.close();
    }
  }, 60_000);
});
