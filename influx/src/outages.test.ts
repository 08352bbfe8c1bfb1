/**
 * The InfluxDB engine beside other writers and through server trouble: two ingest processes sharing the
 * rollup work, a marker left by another writer, a server restart, an outage and a paused server. These
 * stop and restart their influxd, so they have one of their own; the rest of the engine: store.test.ts.
 */
import { HOUR_MS } from '@kilowatch/core';
import type { InfluxTestServer } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InfluxClient } from './client.ts';
import { createInfluxStore, type InfluxTelemetryStore } from './store.ts';
import { device, MIN, skip, startEngine, stopEngine, T0 } from './testing.ts';

describe.skipIf(skip !== null)('InfluxDB engine with other writers and server outages', () => {
  let server: InfluxTestServer;
  let store: InfluxTelemetryStore;
  beforeAll(async () => ({ server, store } = await startEngine()), 60_000);
  afterAll(() => stopEngine(server, store));

  it('two ingest processes taking turns refresh each dirty range once: the second finds it done', async () => {
    const d = device();
    const other = await createInfluxStore({ url: server.url, database: server.database });
    try {
      const readings = Array.from({ length: 8 }, (_, i) => ({
        deviceKey: d,
        ts: T0 + i * 15 * MIN,
        values: { eai1: i },
      }));
      await store.write(readings.slice(0, 4));
      await other.write(readings.slice(4));
      // Both markers are inside the look-back margin for both stores: only the first refresh does them.
      const first = await store.refreshRollups(T0 + 3 * HOUR_MS);
      const second = await other.refreshRollups(T0 + 3 * HOUR_MS);
      expect(first.buckets).toBeGreaterThan(0);
      expect(second.buckets).toBe(0);
      const again = await store.refreshRollups(T0 + 3 * HOUR_MS);
      expect(again.buckets).toBe(0);
      // A new write is done by whichever refreshes next.
      await store.write([{ deviceKey: d, ts: T0 + 2 * HOUR_MS, values: { eai1: 8 } }]);
      expect((await other.refreshRollups(T0 + 3 * HOUR_MS)).buckets).toBeGreaterThan(0);
      expect((await store.refreshRollups(T0 + 3 * HOUR_MS)).buckets).toBe(0);
      const res = await other.energy({
        deviceKey: d,
        counters: ['eai1'],
        from: T0,
        to: T0 + 3 * HOUR_MS,
        interval: '1h',
      });
      // Each reading closes the quarter before it: the one at 02:00 closes the second hour.
      expect(res.energy.eai1).toEqual([4, 4, null]);
    } finally {
      await other.close();
    }
  });

  it('keeps rollup work across a store and server restart', async () => {
    const d = device();
    await store.write([
      { deviceKey: d, ts: T0, values: { eai1: 1 } },
      { deviceKey: d, ts: T0 + 30 * MIN, values: { eai1: 3 } },
    ]);
    await server.restart();
    const again = await createInfluxStore({ url: server.url, database: server.database });
    await again.refreshRollups(T0 + HOUR_MS);
    const res = await again.energy({
      deviceKey: d,
      counters: ['eai1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
    });
    expect(res.energy.eai1).toEqual([2]);
    await again.close();
  });

  it('rides out a server outage: a write retries until the server is back, losing nothing', async () => {
    const d = device();
    const patient = await createInfluxStore({
      url: server.url,
      database: server.database,
      retry: { maxAttempts: 60, baseDelayMs: 50, maxDelayMs: 500 },
    });
    const impatient = await createInfluxStore({
      url: server.url,
      database: server.database,
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    });
    server.kill('SIGKILL');
    const failed = await impatient
      .write([{ deviceKey: d, ts: T0, values: { vave1: 1 } }])
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ name: 'StoreError', retryable: true, kind: 'unavailable' });
    const pending = patient.write([{ deviceKey: d, ts: T0 + MIN, values: { vave1: 2 } }]);
    await server.restart();
    expect(await pending).toEqual({ written: 1 });
    expect(patient.stats().retries).toBeGreaterThan(0);
    expect(await store.latest(d)).toEqual({ ts: T0 + MIN, values: { vave1: 2 } });
  });

  it('times out against a paused server with a retryable error, and restarts it cleanly', async () => {
    const d = device();
    const quick = await createInfluxStore({
      url: server.url,
      database: server.database,
      timeoutMs: 300,
      retry: { maxAttempts: 2, baseDelayMs: 1 },
    });
    server.kill('SIGSTOP');
    try {
      const err = await quick
        .write([{ deviceKey: d, ts: T0, values: { vave1: 1 } }])
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'StoreError', retryable: true, kind: 'unavailable' });
      expect((err as Error).message).toMatch(/Timeout/i);
      expect(await quick.health()).toMatchObject({ ok: false });
    } finally {
      // Restarting a paused server resumes it first, then stops and starts it on the same ports.
      await server.restart();
    }
    await quick.write([{ deviceKey: d, ts: T0, values: { vave1: 2 } }]);
    expect(await store.latest(d)).toEqual({ ts: T0, values: { vave1: 2 } });
  });

  it('processes a marker written by another writer, and prunes markers a day behind the cursor', async () => {
    const d = device();
    const client = new InfluxClient({ url: server.url, database: server.database });
    const old = device();
    await client.write(
      [
        `readings,device=${d} eai1=1 ${T0}`,
        `readings,device=${d} eai1=4 ${T0 + 20 * MIN}`,
        // Another process's batch, still inside the margin behind the cursor.
        `rollup_dirty,device=${d},writer=other from=${T0},to=${T0 + 20 * MIN} ${Date.now() - 30_000}`,
        // Long done.
        `rollup_dirty,device=${old},writer=other from=${T0},to=${T0} ${Date.now() - 48 * HOUR_MS}`,
      ].join('\n'),
    );
    const fresh = await createInfluxStore({ url: server.url, database: server.database });
    await fresh.refreshRollups();
    const e = await fresh.energy({
      deviceKey: d,
      counters: ['eai1'],
      from: T0,
      to: T0 + HOUR_MS,
      interval: '1h',
    });
    expect(e.energy.eai1).toEqual([3]);
    const [left] = await client.query(
      `SELECT count("from") FROM rollup_dirty WHERE time < ${Date.now() - 24 * HOUR_MS}ms`,
    );
    expect(left?.series).toBeUndefined();
    await fresh.close();
  });
});
