/** The export queue on each metadata engine (PGlite, and PostgreSQL when its server runs): every job runs once. */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, engines, signUp, type TestApp } from '../testing/helper.ts';

const T0 = Date.parse('2026-05-01T00:00:00Z');

describe.each(engines())('export queue on %s', (engine) => {
  let t: TestApp;
  let store: TelemetryStore;
  let dir: string;
  let account: Account;
  let meter: Meter;

  beforeAll(async () => {
    store = await createDuckDbStore();
    dir = await mkdtemp(path.join(tmpdir(), 'kw-queue-'));
    t = await buildTestApp(engine, {
      store,
      liveServices: { exports: { dir, concurrency: 3, maxQueuedPerUser: 10, pollMs: 60_000 } },
    });
    account = await signUp(t.app);
    meter = await claimMeter(t.app, account, await locationOf(t.app, account));
    await store.write(
      Array.from({ length: 120 }, (_, i) => ({
        deviceKey: meter.deviceKey,
        ts: T0 + i * 60_000,
        values: { vave1: 230 },
      })),
    );
  });

  afterAll(async () => {
    await t?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('claims every queued job exactly once with bounded concurrency', async () => {
    const ids = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const res = await as(t.app, account, {
          method: 'POST',
          url: '/api/exports',
          payload: {
            deviceIds: [meter.id],
            params: ['vave1'],
            format: 'csv',
            fileName: `part ${i}`,
            from: iso(T0),
            to: iso(T0 + 2 * 3_600_000),
          },
        });
        expect(res.statusCode, res.body).toBe(202);
        return res.json().id as number;
      }),
    );
    await t.app.exports.idle();
    const jobs = (await as(t.app, account, { method: 'GET', url: '/api/exports' })).json() as {
      id: number;
      status: string;
      size: number;
    }[];
    expect(jobs.filter((j) => ids.includes(j.id)).map((j) => j.status)).toEqual(Array(6).fill('done'));
    const files = await readdir(dir);
    expect(files.filter((f) => f.endsWith('.csv'))).toHaveLength(6);
    expect(files.filter((f) => f.includes('.part'))).toEqual([]);
  });

  it('fails a running job whose process stopped reporting, with a clear error', async () => {
    const { rows } = await t.sql.query<{ id: number }>(
      `insert into export_jobs (user_id, status, progress, request, file_name, format, created_at, updated_at)
       values ($1, 'running', 0.4, '{}', 'lost.csv', 'csv', 0, 0) returning id`,
      [account.userId],
    );
    expect(await t.app.exports.failStale()).toBeGreaterThan(0);
    const job = (await as(t.app, account, { method: 'GET', url: `/api/exports/${rows[0]!.id}` })).json();
    expect(job).toMatchObject({ status: 'failed', error: 'Exporting data failed.' });
  });
});
