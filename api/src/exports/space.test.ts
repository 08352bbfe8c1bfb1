/**
 * The space export files may take, per user and in all, on PGlite and on a real PostgreSQL: a new export
 * is refused before any work while the files kept fill it (409 for the user's own, 503 for everyone's), a
 * job that grows past it mid-run fails with a clear message and leaves no partial file, and deleting an
 * export frees its space.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Reading } from '@kilowatch/core';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, engines, signUp, type TestApp } from '../testing/helper.ts';

const DAY0 = Date.parse('2026-05-01T00:00:00Z');
const NOW = Date.parse('2026-05-03T00:00:00Z');
const USER_BYTES = 40_000;
const TOTAL_BYTES = 100_000;

describe.each(engines())('space for export files on %s', (engine) => {
  let store: TelemetryStore;
  let dir: string;
  let t: TestApp;
  let alice: Account;
  let bob: Account;
  let carol: Account;
  let meter: Meter;
  let bobs: Meter;
  let carols: Meter;

  beforeAll(async () => {
    store = await createDuckDbStore();
    dir = await mkdtemp(path.join(tmpdir(), 'kw-space-'));
    t = await buildTestApp(engine, {
      store,
      now: () => NOW,
      liveServices: {
        exports: { dir, pollMs: 60_000, maxUserBytes: USER_BYTES, maxTotalBytes: TOTAL_BYTES },
      },
    });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    carol = await signUp(t.app);
    meter = await claimMeter(t.app, alice, await locationOf(t.app, alice));
    bobs = await claimMeter(t.app, bob, await locationOf(t.app, bob));
    carols = await claimMeter(t.app, carol, await locationOf(t.app, carol));
    // A day of minute readings: its CSV of every parameter is ~150 KB, an hour of one ~3 KB.
    const readings: Reading[] = [];
    for (let i = 0; i < 24 * 60; i++)
      for (const m of [meter, bobs, carols])
        readings.push({
          deviceKey: m.deviceKey,
          ts: DAY0 + i * 60_000,
          values: { vave1: 230 + (i % 7) / 10, vave2: 231.25, vave3: 229.5, iave1: 1.5, eai1: 100 + i / 60 },
        });
    await store.write(readings);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const small = (m: Meter) => ({
    deviceIds: [m.id],
    params: ['vave1'],
    format: 'csv',
    from: iso(DAY0),
    to: iso(DAY0 + 3_600_000),
  });
  const large = (m: Meter) => ({
    deviceIds: [m.id],
    params: 'all',
    format: 'csv',
    from: iso(DAY0),
    to: iso(DAY0 + 86_400_000),
  });
  const post = (who: Account, payload: object) =>
    as(t.app, who, { method: 'POST', url: '/api/exports', payload });
  const filesOf = async (id: number) => (await readdir(dir)).filter((f) => f.startsWith(`${id}-`));

  /** A finished export of `bytes` on disk, as an earlier job would have left it. */
  async function keptFile(userId: number, bytes: number): Promise<number> {
    const file = path.join(dir, `kept-${userId}-${bytes}.csv`);
    await writeFile(file, Buffer.alloc(bytes, 'x'));
    const { rows } = await t.app.sql.query<{ id: number }>(
      `insert into export_jobs (user_id, status, progress, request, file_name, format, created_at, updated_at, file_path, size, expires_at)
       values ($1, 'done', 1, '{}', 'kept.csv', 'csv', $2, $2, $3, $4, $5) returning id`,
      [userId, NOW, file, bytes, NOW + 86_400_000],
    );
    return Number(rows[0]!.id);
  }

  it('a job that grows past the user’s space fails with a clear message and leaves no partial file', async () => {
    const res = await post(alice, large(meter));
    expect(res.statusCode, res.body).toBe(202);
    const { id } = res.json() as { id: number };
    await t.app.exports.idle();
    const job = (await as(t.app, alice, { method: 'GET', url: `/api/exports/${id}` })).json();
    expect(job).toMatchObject({
      status: 'failed',
      size: null,
      error:
        'The export grew past the space allowed for export files. Choose fewer devices or parameters, or a shorter range.',
    });
    expect(await filesOf(id)).toEqual([]);
    // Nothing of it counts any more: a small export runs to the end.
    const next = await post(alice, small(meter));
    expect(next.statusCode, next.body).toBe(202);
    await t.app.exports.idle();
    const done = (await as(t.app, alice, { method: 'GET', url: `/api/exports/${next.json().id}` })).json();
    expect(done.status).toBe('done');
    expect(done.size).toBeGreaterThan(0);
    expect(await filesOf(next.json().id)).toHaveLength(1);
  });

  it('refuses a new export with 409 while the user’s files fill their space; deleting one frees it', async () => {
    const userId = (await as(t.app, bob, { method: 'GET', url: '/api/account/userInfo' })).json().id;
    const kept = await keptFile(userId, USER_BYTES);
    const refused = await post(bob, small(bobs));
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({
      message: 'Your export files use all the space allowed. Delete older exports or wait until they expire.',
    });
    // Someone else's space is their own.
    const theirs = await post(carol, small(carols));
    expect(theirs.statusCode, theirs.body).toBe(202);
    await t.app.exports.idle();
    // Another user cannot delete it; its owner can, and the file goes with it.
    expect((await as(t.app, alice, { method: 'DELETE', url: `/api/exports/${kept}` })).statusCode).toBe(404);
    expect((await as(t.app, bob, { method: 'DELETE', url: `/api/exports/${kept}` })).statusCode).toBe(204);
    expect((await readdir(dir)).some((f) => f.startsWith(`kept-${userId}-`))).toBe(false);
    expect((await as(t.app, bob, { method: 'GET', url: `/api/exports/${kept}` })).statusCode).toBe(404);
    const again = await post(bob, small(bobs));
    expect(again.statusCode, again.body).toBe(202);
    await t.app.exports.idle();
  });

  it('refuses new exports with 503 and Retry-After while everyone’s files fill the total space', async () => {
    const carolId = (await as(t.app, carol, { method: 'GET', url: '/api/account/userInfo' })).json().id;
    const aliceId = (await as(t.app, alice, { method: 'GET', url: '/api/account/userInfo' })).json().id;
    const { user, total } = await t.app.exports.usage(carolId);
    expect(user).toBeLessThan(USER_BYTES);
    // Alice's files fill what is left of the server's space; Carol's own is far from full.
    const ids = [await keptFile(aliceId, TOTAL_BYTES - total)];
    const refused = await post(carol, small(carols));
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toEqual({
      message: 'Export unavailable: the server has no room for more export files. Try again later.',
    });
    expect(refused.headers['retry-after']).toBeDefined();
    await t.app.sql.query(`delete from export_jobs where id = any($1::int[])`, [ids]);
    const again = await post(carol, small(carols));
    expect(again.statusCode, again.body).toBe(202);
    await t.app.exports.idle();
  });
});
