/**
 * The export queue's fair share, on the real app (PGlite, DuckDB): a free worker goes to the account
 * below its share before the older job of an account at it; demo workspaces export shorter ranges, one
 * job each and half of the queue together; and signing out of a demo workspace cancels its running
 * export and removes its files.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
const T0 = Date.parse('2026-05-01T00:00:00Z');
const NOW = Date.parse('2026-06-01T00:00:00Z');

/** The real store, except that reading a range's raw rows waits until the test opens the gate of its start. */
function gatedStore(store: TelemetryStore) {
  const gates = new Map<number, { open: () => void; opened: Promise<void> }>();
  let allOpen = false;
  const gate = (from: number) => {
    let g = gates.get(from);
    if (!g) {
      let open!: () => void;
      const opened = new Promise<void>((r) => {
        open = r;
      });
      g = { open, opened };
      gates.set(from, g);
      if (allOpen) open();
    }
    return g;
  };
  const gated: TelemetryStore = Object.assign(Object.create(store) as TelemetryStore, {
    streamRaw: (q: Parameters<TelemetryStore['streamRaw']>[0]) =>
      (async function* () {
        await gate(q.from).opened;
        yield [{ ts: q.from, values: { vave1: 230 } }];
      })(),
  });
  return {
    store: gated,
    open: (from: number) => gate(from).open(),
    openAll: () => {
      allOpen = true;
      for (const g of gates.values()) g.open();
    },
  };
}

describe('export fair share', () => {
  let base: TelemetryStore;
  let dir: string;

  beforeAll(async () => {
    base = await createDuckDbStore();
    dir = await mkdtemp(path.join(tmpdir(), 'kw-share-'));
  });
  afterAll(async () => {
    await base?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const body = (meter: Meter, hour: number, hours = 1) => ({
    deviceIds: [meter.id],
    params: ['vave1'],
    format: 'csv',
    from: iso(T0 + hour * H),
    to: iso(T0 + (hour + hours) * H),
  });
  const exportOf = async (t: TestApp, who: Account, payload: Record<string, unknown>) =>
    as(t.app, who, { method: 'POST', url: '/api/exports', payload });
  const statusOf = async (t: TestApp, who: Account, id: number) =>
    (await t.app.exports.get(who.userId, id))?.status;
  const makeDemo = (t: TestApp, who: Account) =>
    t.sql.query('update users set is_demo = true, workspace_expires_at = $2 where id = $1', [
      who.userId,
      NOW + 24 * H,
    ]);

  it('gives a free worker to the account below its share before the older job of one at it', async () => {
    const gated = gatedStore(base);
    const t = await buildTestApp('pglite', {
      store: gated.store,
      now: () => NOW,
      liveServices: {
        exports: { dir: path.join(dir, 'fair'), concurrency: 2, maxQueuedPerUser: 5, pollMs: 60_000 },
      },
    });
    try {
      const alice = await signUp(t.app);
      const bob = await signUp(t.app);
      const a = await claimMeter(t.app, alice, await locationOf(t.app, alice));
      const b = await claimMeter(t.app, bob, await locationOf(t.app, bob));
      const a1 = (await exportOf(t, alice, body(a, 0))).json().id as number;
      const a2 = (await exportOf(t, alice, body(a, 1))).json().id as number;
      // Alice alone: both workers are hers.
      await vi.waitFor(async () => {
        expect(await statusOf(t, alice, a1)).toBe('running');
        expect(await statusOf(t, alice, a2)).toBe('running');
      });
      const a3 = (await exportOf(t, alice, body(a, 2))).json().id as number;
      const b1 = (await exportOf(t, bob, body(b, 3))).json().id as number;
      // Alice's first export finishes: the worker goes to Bob (two accounts: one worker each), not to
      // Alice's older third job.
      gated.open(T0);
      await vi.waitFor(async () => expect(await statusOf(t, bob, b1)).toBe('running'), { timeout: 10_000 });
      expect(await statusOf(t, alice, a1)).toBe('done');
      expect(await statusOf(t, alice, a3)).toBe('queued');
      gated.openAll();
      await vi.waitFor(async () => expect(await statusOf(t, alice, a3)).toBe('done'), { timeout: 10_000 });
    } finally {
      gated.openAll();
      await t.close();
    }
  });

  it('counts every demo workspace together as one party: an account gets a worker beside them', async () => {
    const gated = gatedStore(base);
    const t = await buildTestApp('pglite', {
      store: gated.store,
      now: () => NOW,
      liveServices: {
        exports: { dir: path.join(dir, 'demo-share'), concurrency: 2, maxQueued: 10, pollMs: 60_000 },
      },
    });
    try {
      const visitors: [Account, Meter][] = [];
      for (let i = 0; i < 3; i++) {
        const v = await signUp(t.app);
        const m = await claimMeter(t.app, v, await locationOf(t.app, v));
        await makeDemo(t, v);
        visitors.push([v, m]);
      }
      const ids: [Account, number][] = [];
      for (const [i, [v, m]] of visitors.entries())
        ids.push([v, (await exportOf(t, v, body(m, i))).json().id as number]);
      // The visitors alone: both workers are theirs.
      await vi.waitFor(async () => {
        const states = await Promise.all(ids.map(([v, id]) => statusOf(t, v, id)));
        expect(states.filter((s) => s === 'running')).toHaveLength(2);
      });
      const alice = await signUp(t.app);
      const a = await claimMeter(t.app, alice, await locationOf(t.app, alice));
      const a1 = (await exportOf(t, alice, body(a, 5))).json().id as number;
      // The first visitor's export finishes: the worker goes to Alice (two parties: the visitors
      // together, and her), not to the third visitor's waiting job.
      gated.open(T0);
      await vi.waitFor(async () => expect(await statusOf(t, alice, a1)).toBe('running'), { timeout: 10_000 });
      expect(await statusOf(t, ids[2]![0], ids[2]![1])).toBe('queued');
      gated.openAll();
      await vi.waitFor(async () => expect(await statusOf(t, ids[2]![0], ids[2]![1])).toBe('done'), {
        timeout: 10_000,
      });
    } finally {
      gated.openAll();
      await t.close();
    }
  });

  it('bounds a demo workspace: its range, one job at a time, and half of the queue for all of them', async () => {
    const t = await buildTestApp('pglite', {
      store: base,
      now: () => NOW,
      // No worker runs: every job stays queued.
      liveServices: {
        exports: { dir: path.join(dir, 'demo'), concurrency: 0, maxQueued: 4, pollMs: 60_000 },
      },
    });
    try {
      const visitors: [Account, Meter][] = [];
      for (let i = 0; i < 3; i++) {
        const v = await signUp(t.app);
        const m = await claimMeter(t.app, v, await locationOf(t.app, v));
        await makeDemo(t, v);
        visitors.push([v, m]);
      }
      const [[v1, m1], [v2, m2], [v3, m3]] = visitors as [
        [Account, Meter],
        [Account, Meter],
        [Account, Meter],
      ];
      const long = await exportOf(t, v1, body(m1, 0, 32 * 24));
      expect(long.statusCode).toBe(400);
      expect(long.json()).toEqual({
        message: 'A demo workspace exports at most 31 days at once.',
        errors: { to: ['A demo workspace exports at most 31 days at once.'] },
      });
      expect((await exportOf(t, v1, body(m1, 0, 31 * 24))).statusCode).toBe(202);
      // One job at a time for a demo workspace.
      expect((await exportOf(t, v1, body(m1, 1))).statusCode).toBe(503);
      expect((await exportOf(t, v2, body(m2, 1))).statusCode).toBe(202);
      // Demo workspaces hold half of the queue of 4: a third one waits, an account does not.
      expect((await exportOf(t, v3, body(m3, 1))).statusCode).toBe(503);
      const real = await signUp(t.app);
      const rm1 = await claimMeter(t.app, real, await locationOf(t.app, real));
      expect((await exportOf(t, real, body(rm1, 1))).statusCode).toBe(202);
    } finally {
      await t.close();
    }
  });

  it('signing out of a demo workspace cancels its running export and removes its files', async () => {
    const gated = gatedStore(base);
    const own = path.join(dir, 'signout');
    const t = await buildTestApp('pglite', {
      store: gated.store,
      now: () => NOW,
      liveServices: { exports: { dir: own, concurrency: 1, pollMs: 60_000 } },
    });
    try {
      const visitor = await signUp(t.app);
      const meter = await claimMeter(t.app, visitor, await locationOf(t.app, visitor));
      await makeDemo(t, visitor);
      // A finished export, its file on disk.
      gated.open(T0);
      const done = (await exportOf(t, visitor, body(meter, 0))).json().id as number;
      await vi.waitFor(async () => expect(await statusOf(t, visitor, done)).toBe('done'), {
        timeout: 10_000,
      });
      expect((await readdir(own)).filter((f) => f.startsWith(`${done}-`))).toHaveLength(1);
      const running = (await exportOf(t, visitor, body(meter, 1))).json().id as number;
      await vi.waitFor(async () => expect(await statusOf(t, visitor, running)).toBe('running'));

      const out = await as(t.app, visitor, { method: 'GET', url: '/api/account/logout' });
      expect(out.statusCode).toBe(204);
      // The workspace is gone, and with it the jobs; the running one stops at its next page.
      gated.open(T0 + H);
      await t.app.exports.idle();
      const { rows } = await t.sql.query('select id from export_jobs where user_id = $1', [visitor.userId]);
      expect(rows).toEqual([]);
      expect(await readdir(own)).toEqual([]);
    } finally {
      gated.openAll();
      await t.close();
    }
  });
});
