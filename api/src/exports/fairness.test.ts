/**
 * The export queue shared fairly and stopped cleanly, on PGlite and on a real PostgreSQL: one user
 * cannot fill the queue, files a killed run left behind go at start, and shutdown does not wait for a
 * long export (the job goes back to the queue).
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimMeter, iso, locationOf } from '../analytics/testing.ts';
import { as, buildTestApp, engines, signUp } from '../testing/helper.ts';

const T0 = Date.parse('2026-05-01T00:00:00Z');
const NOW = Date.parse('2026-05-02T00:00:00Z');

describe.each(engines())('export fairness and shutdown on %s', (engine) => {
  let store: TelemetryStore;
  let dir: string;

  beforeAll(async () => {
    store = await createDuckDbStore();
    dir = await mkdtemp(path.join(tmpdir(), 'kw-fair-'));
  });
  afterAll(async () => {
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const exportBody = (deviceId: number) => ({
    deviceIds: [deviceId],
    params: ['vave1'],
    format: 'csv',
    from: iso(T0),
    to: iso(T0 + 3_600_000),
  });

  it('one user’s full share does not keep another user out', async () => {
    // No worker runs (concurrency 0): every job stays queued, as behind long-running exports.
    const t = await buildTestApp(engine, {
      store,
      now: () => NOW,
      liveServices: { exports: { dir, concurrency: 0, maxQueued: 20, maxQueuedPerUser: 3, pollMs: 60_000 } },
    });
    try {
      const greedy = await signUp(t.app);
      const other = await signUp(t.app);
      const g = await claimMeter(t.app, greedy, await locationOf(t.app, greedy));
      const o = await claimMeter(t.app, other, await locationOf(t.app, other));
      const codes: number[] = [];
      for (let i = 0; i < 5; i++)
        codes.push(
          (await as(t.app, greedy, { method: 'POST', url: '/api/exports', payload: exportBody(g.id) }))
            .statusCode,
        );
      expect(codes).toEqual([202, 202, 202, 503, 503]);
      const refused = await as(t.app, greedy, {
        method: 'POST',
        url: '/api/exports',
        payload: exportBody(g.id),
      });
      expect(refused.json()).toEqual({ message: 'Export unavailable' });
      expect(refused.headers['retry-after']).toBeDefined();
      const theirs = await as(t.app, other, {
        method: 'POST',
        url: '/api/exports',
        payload: exportBody(o.id),
      });
      expect(theirs.statusCode).toBe(202);
    } finally {
      await t.close();
    }
  });

  it('removes files a killed run left behind at start, and keeps finished files and foreign ones', async () => {
    const own = path.join(dir, 'orphans');
    await rm(own, { recursive: true, force: true });
    await (await import('node:fs/promises')).mkdir(own, { recursive: true });
    for (const name of ['9001-report.csv.part0', '9002-all.zip.partial', '9003-old.csv', 'README.txt'])
      await writeFile(path.join(own, name), 'x');
    const t = await buildTestApp(engine, {
      store,
      now: () => NOW,
      liveServices: { exports: { dir: own, concurrency: 0, pollMs: 60_000 } },
    });
    try {
      expect((await readdir(own)).sort()).toEqual(['README.txt']);
    } finally {
      await t.close();
    }
  });

  it('shutdown stops within its limit and puts a long-running export back in the queue', async () => {
    const slowDir = path.join(dir, 'slow');
    // The real store, except that every page of raw readings takes 200 ms: a year-long export.
    const slow: TelemetryStore = Object.assign(Object.create(store) as TelemetryStore, {
      streamRaw: (q: Parameters<TelemetryStore['streamRaw']>[0]) =>
        (async function* () {
          for (let i = 0; i < 10_000; i++) {
            await new Promise((r) => setTimeout(r, 200));
            yield [{ ts: q.from + i * 60_000, values: { vave1: 230 } }];
          }
        })(),
    });
    const t = await buildTestApp(engine, {
      store: slow,
      now: () => NOW,
      liveServices: { exports: { dir: slowDir, concurrency: 1, pollMs: 60_000, shutdownMs: 300 } },
    });
    const account = await signUp(t.app);
    const meter = await claimMeter(t.app, account, await locationOf(t.app, account));
    const res = await as(t.app, account, {
      method: 'POST',
      url: '/api/exports',
      payload: exportBody(meter.id),
    });
    expect(res.statusCode).toBe(202);
    const id = res.json().id as number;
    await vi.waitFor(async () =>
      expect((await t.app.exports.get(account.userId, id))?.status).toBe('running'),
    );
    // The export needs 10,000 pages of 200 ms (over half an hour): close returns without it, and the
    // job is queued again, not left running or failed.
    await t.app.close();
    const { rows } = await t.sql.query<{ status: string; progress: number }>(
      'select status, progress from export_jobs where id = $1',
      [id],
    );
    expect(rows[0]?.status).toBe('queued');
    expect(Number(rows[0]?.progress)).toBe(0);
    // Nothing of the stopped run stays on disk.
    expect((await readdir(slowDir)).filter((f) => f.startsWith(`${id}-`))).toEqual([]);
    await t.sql.close();
  });
});
