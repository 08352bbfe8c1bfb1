/**
 * Heavy reads on the real app and real DuckDB: at most `heavyReads` run at once, `heavyQueue` more wait,
 * the next is answered 503 with Retry-After in the contract's shape; short requests are answered
 * meanwhile; heavy work waits at its turns while a short request is being answered. Each user has at
 * most `heavyPerUser` running and waiting, a freed place goes to another user before one user's backlog,
 * and a request leaves the queue when its wait budget runs out (a timer the test fires) or its client
 * disconnects.
 *
 * The store's reads are held open by a latch (the real DuckDB read runs once it opens), so that requests
 * stay in flight for as long as the test needs, without any timing.
 */
import http from 'node:http';
import { nextTurn } from '@kilowatch/core';
import { DEMO_DEVICES } from '@kilowatch/ingest';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type Meter, userWithMeter } from '../../analytics/testing.ts';
import { ensureDemoAccount } from '../../demo.ts';
import { HUB_PATH } from '../../hub/hub.ts';
import { createLocalLiveSource } from '../../hub/live-source.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../../testing/helper.ts';
import { demoQueue, demoShare, type WaitTimer } from './heavy-reads.ts';

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

describe('heavy reads shared between users', () => {
  const WAIT_MS = 20_000;
  let t: TestApp;
  let store: TelemetryStore;
  let alice: { account: Account; meter: Meter };
  let bob: { account: Account; meter: Meter };
  let hold = latch();
  /** The device of each store read, in the order the reads started. */
  let reads: string[] = [];
  /** Wait budgets running: the test fires them instead of a clock. */
  const budgets = new Set<{ ms: number; fire: () => void }>();
  const waitTimer: WaitTimer = (ms, fire) => {
    const budget = { ms, fire };
    budgets.add(budget);
    return () => budgets.delete(budget);
  };

  beforeAll(async () => {
    store = await createDuckDbStore();
    const series = store.series.bind(store);
    store.series = async (q) => {
      reads.push(q.deviceKey);
      await hold.opened;
      return series(q);
    };
    t = await buildTestApp('pglite', {
      store,
      now: () => NOW,
      config: { heavyReads: 1, heavyQueue: 3, heavyPerUser: 3, heavyWaitMs: WAIT_MS },
      heavyWaitTimer: waitTimer,
    });
    alice = await userWithMeter(t.app);
    bob = await userWithMeter(t.app);
  });
  afterAll(async () => {
    hold.open();
    await t?.close();
    await store?.close();
  });

  const url = (meter: Meter) =>
    `/api/devices/${meter.id}/series?params=vave1&interval=1h&from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z`;
  const series = (user: { account: Account; meter: Meter }) =>
    as(t.app, user.account, { method: 'GET', url: url(user.meter) });
  const share = (user: { account: Account }) => t.app.heavyReads.of(`user ${user.account.userId}`);
  const expectBusy = (res: Awaited<ReturnType<typeof series>>) => {
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ message: 'The server is busy. Try again later.' });
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  };
  const idle = () => {
    expect(t.app.heavyReads.running()).toBe(0);
    expect(t.app.heavyReads.queued()).toBe(0);
    expect(share(alice)).toEqual({ running: 0, queued: 0 });
    expect(share(bob)).toEqual({ running: 0, queued: 0 });
    expect(budgets.size).toBe(0);
  };

  it("one user past their share is told the server is busy at once; another user's request runs before their backlog", async () => {
    hold = latch();
    reads = [];
    const a1 = series(alice);
    await until(() => reads.length === 1);
    const a2 = series(alice);
    const a3 = series(alice);
    await until(() => t.app.heavyReads.queued() === 2);
    expect(share(alice)).toEqual({ running: 1, queued: 2 });

    // The queue has a place left, but not for Alice.
    expectBusy(await series(alice));
    expect(t.app.heavyReads.queued()).toBe(2);

    const b1 = series(bob);
    await until(() => t.app.heavyReads.queued() === 3);
    expect(share(bob)).toEqual({ running: 0, queued: 1 });

    hold.open();
    for (const res of await Promise.all([a1, a2, a3, b1])) expect(res.statusCode).toBe(200);
    const a = alice.meter.deviceKey;
    expect(reads).toEqual([a, bob.meter.deviceKey, a, a]);
    idle();
  });

  it('a request whose wait budget runs out is told the server is busy and gives its place back', async () => {
    hold = latch();
    reads = [];
    const a1 = series(alice);
    await until(() => reads.length === 1);
    let a2Answered = false;
    const a2 = series(alice).then((res) => {
      a2Answered = true;
      return res;
    });
    await until(() => t.app.heavyReads.queued() === 1);
    expect([...budgets].map((b) => b.ms)).toEqual([WAIT_MS]);
    expect(a2Answered).toBe(false);

    for (const budget of budgets) budget.fire();
    expectBusy(await a2);
    expect(t.app.heavyReads.queued()).toBe(0);
    expect(share(alice)).toEqual({ running: 1, queued: 0 });
    expect(budgets.size).toBe(0);

    // Its place in Alice's share is free again: two more wait.
    const a3 = series(alice);
    const a4 = series(alice);
    await until(() => t.app.heavyReads.queued() === 2);
    hold.open();
    for (const res of await Promise.all([a1, a3, a4])) expect(res.statusCode).toBe(200);
    // The one that gave up never reached the store.
    expect(reads).toHaveLength(3);
    idle();
  });

  it('a client that disconnects while waiting leaves the queue', async () => {
    hold = latch();
    reads = [];
    const a1 = series(alice);
    await until(() => reads.length === 1);
    const address = new URL(await t.app.listen({ port: 0, host: '127.0.0.1' }));
    const request = http.get({
      host: address.hostname,
      port: address.port,
      path: url(alice.meter),
      headers: { authorization: `Bearer ${alice.account.token}` },
    });
    request.on('error', () => {});
    await until(() => t.app.heavyReads.queued() === 1);
    expect(share(alice)).toEqual({ running: 1, queued: 1 });

    request.destroy();
    await until(() => t.app.heavyReads.queued() === 0);
    expect(share(alice)).toEqual({ running: 1, queued: 0 });
    expect(budgets.size).toBe(0);

    hold.open();
    expect((await a1).statusCode).toBe(200);
    expect(reads).toHaveLength(1);
    idle();
  });
});

describe('demo workspaces', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let hold = latch();
  let seriesCalls = 0;

  beforeAll(async () => {
    store = await createDuckDbStore();
    const series = store.series.bind(store);
    store.series = async (q) => {
      seriesCalls++;
      await hold.opened;
      return series(q);
    };
    t = await buildTestApp('pglite', {
      store,
      now: () => NOW,
      // Two places: the demo workspaces' share is one of them, and two of the four waiting.
      config: {
        heavyReads: 2,
        heavyQueue: 4,
        demo: true,
        demoSignInRateLimit: { max: 1000, windowMs: 60_000 },
      },
    });
    await ensureDemoAccount(t.app, DEMO_DEVICES);
  });
  afterAll(async () => {
    hold.open();
    await t?.close();
    await store?.close();
  });

  const demoVisitor = async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/account/demo', payload: {} });
    expect(res.statusCode).toBe(200);
    const auth = res.json() as { token: string };
    const devices = (await as(t.app, auth, { method: 'GET', url: '/api/devices' })).json() as {
      id: number;
    }[];
    return { auth, deviceId: devices[0]!.id };
  };
  const seriesOf = (auth: { token: string }, deviceId: number) =>
    as(t.app, auth, {
      method: 'GET',
      url: `/api/devices/${deviceId}/series?params=vave1&interval=1h&from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z`,
    });

  it('share one share: together they run a quarter of the places and keep half the queue; an account runs beside them', async () => {
    expect(demoShare(2)).toBe(1);
    expect(demoQueue(4)).toBe(2);
    const [a, b, c] = [await demoVisitor(), await demoVisitor(), await demoVisitor()];
    const { account, meter } = await userWithMeter(t.app);
    hold = latch();
    seriesCalls = 0;

    const aRead = seriesOf(a.auth, a.deviceId);
    await until(() => seriesCalls === 1);
    // A place is free, but not for another demo workspace.
    const bRead = seriesOf(b.auth, b.deviceId);
    await until(() => t.app.heavyReads.demo().queued === 1);
    expect(t.app.heavyReads.running()).toBe(1);
    expect(t.app.heavyReads.demo()).toEqual({ running: 1, queued: 1 });

    // An account's read takes the free place at once.
    const mine = seriesOf(account, meter.id);
    await until(() => seriesCalls === 2);
    expect(t.app.heavyReads.running()).toBe(2);

    const cRead = seriesOf(c.auth, c.deviceId);
    await until(() => t.app.heavyReads.demo().queued === 2);
    // The demo workspaces' half of the queue is full: the next demo read is refused, though the queue has room.
    const refused = await seriesOf(a.auth, a.deviceId);
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toEqual({ message: 'The server is busy. Try again later.' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(t.app.heavyReads.queued()).toBe(2);

    hold.open();
    expect((await mine).statusCode).toBe(200);
    expect((await aRead).statusCode).toBe(200);
    expect((await bRead).statusCode).toBe(200);
    expect((await cRead).statusCode).toBe(200);
    // a, the account's, b and c: each read reached the store once.
    expect(seriesCalls).toBe(4);
    expect(t.app.heavyReads.demo()).toEqual({ running: 0, queued: 0 });
    expect(t.app.heavyReads.running()).toBe(0);
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
