/**
 * Heavy reads on the real app and real DuckDB: at most `heavyReads` run at once, `heavyQueue` more wait,
 * the next is answered 503 with Retry-After in the contract's shape; short requests are answered
 * meanwhile; heavy work waits at its turns while a short request is being answered.
 *
 * The store's reads are held open by a latch (the real DuckDB read runs once it opens), so that requests
 * stay in flight for as long as the test needs, without any timing.
 */
import { nextTurn } from '@kilowatch/core';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Meter, userWithMeter } from '../../analytics/testing.ts';
import { HUB_PATH } from '../../hub/hub.ts';
import { createLocalLiveSource } from '../../hub/live-source.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../../testing/helper.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');

function latch() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

/** Resolves once `ready()` holds, checking at each turn of the event loop. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setImmediate(r));
}

describe('heavy reads', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let account: Account;
  let meter: Meter;
  let hold = latch();
  let seriesCalls = 0;
  let latestHeld = false;
  let latestHold = latch();

  beforeAll(async () => {
    store = await createDuckDbStore();
    const series = store.series.bind(store);
    store.series = async (q) => {
      seriesCalls++;
      await hold.opened;
      return series(q);
    };
    const latest = store.latest.bind(store);
    store.latest = async (key) => {
      if (latestHeld) await latestHold.opened;
      return latest(key);
    };
    t = await buildTestApp('pglite', {
      store,
      now: () => NOW,
      config: { heavyReads: 1, heavyQueue: 1 },
      // Long enough that a heavy turn can only go on because the short request was answered.
      lightFirstMaxMs: 600_000,
    });
    ({ account, meter } = await userWithMeter(t.app));
  });
  afterAll(async () => {
    hold.open();
    latestHold.open();
    await t?.close();
    await store?.close();
  });

  const series = () =>
    as(t.app, account, {
      method: 'GET',
      url: `/api/devices/${meter.id}/series?params=vave1&interval=1h&from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z`,
    });

  it('one runs, one waits, the next is told the server is busy; short requests are answered meanwhile', async () => {
    hold = latch();
    seriesCalls = 0;
    const first = series();
    await until(() => seriesCalls === 1);
    const second = series();
    await until(() => t.app.heavyReads.queued() === 1);
    expect(t.app.heavyReads.running()).toBe(1);

    const third = await series();
    expect(third.statusCode).toBe(503);
    expect(third.json()).toEqual({ message: 'The server is busy. Try again later.' });
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);

    const page = await as(t.app, account, { method: 'GET', url: `/api/devices/${meter.id}` });
    expect(page.statusCode).toBe(200);
    const health = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(200);
    // The queued one has not reached the store.
    expect(seriesCalls).toBe(1);

    hold.open();
    expect((await first).statusCode).toBe(200);
    expect((await second).statusCode).toBe(200);
    expect(seriesCalls).toBe(2);
    expect(t.app.heavyReads.running()).toBe(0);
    expect(t.app.heavyReads.queued()).toBe(0);
    expect(t.app.heavyReads.light()).toBe(0);
  });

  it('a refused heavy request (bad range, no token) does not take a place', async () => {
    const bad = await as(t.app, account, {
      method: 'GET',
      url: `/api/devices/${meter.id}/series?params=vave1&interval=1h&from=2026-11-20T00:00:00Z&to=2026-11-19T00:00:00Z`,
    });
    expect(bad.statusCode).toBe(400);
    const anonymous = await t.app.inject({ method: 'GET', url: `/api/devices/${meter.id}/series` });
    expect(anonymous.statusCode).toBe(401);
    expect(t.app.heavyReads.running()).toBe(0);
    hold.open();
    expect((await series()).statusCode).toBe(200);
  });

  it('heavy work waits at its turns while a short request is being answered', async () => {
    latestHold = latch();
    latestHeld = true;
    const page = as(t.app, account, { method: 'GET', url: `/api/devices/${meter.id}` });
    await until(() => t.app.heavyReads.light() === 1);
    // Work outside any short request (a heavy read, an export job) yields here.
    let turned = false;
    const turn = nextTurn().then(() => {
      turned = true;
    });
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    expect(turned).toBe(false);
    latestHold.open();
    expect((await page).statusCode).toBe(200);
    await turn;
    expect(turned).toBe(true);
    latestHeld = false;
    expect(t.app.heavyReads.light()).toBe(0);
  });
});

describe('an open live socket', () => {
  let t: TestApp;
  let store: TelemetryStore;

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', {
      store,
      live: createLocalLiveSource(),
      liveServices: { hub: { highWaterBytes: 16 * 1024, sessionCheckMs: 60_000 } },
    });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  it('is no request being answered: heavy work does not wait for it', async () => {
    const account = await signUp(t.app);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const ws = new WebSocket(`${address.replace('http', 'ws')}${HUB_PATH}?access_token=${account.token}`);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    expect(t.app.heavyReads.light()).toBe(0);
    ws.close();
  });
});
