/**
 * The hub under abuse, over a real WebSocket: one user cannot hold unbounded sockets, and a flood of
 * subscribes does not become a flood of database queries.
 */
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { claimMeter, locationOf } from '../analytics/testing.ts';
import { type Account, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';
import { CLOSE_TOO_MANY, HUB_PATH } from './hub.ts';
import { createLocalLiveSource } from './live-source.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');

describe('hub limits', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let base: string;
  let alice: Account;
  let bob: Account;
  const live = createLocalLiveSource();
  const open: WebSocket[] = [];

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', {
      store,
      live,
      now: () => NOW,
      // The subscribe flood below is about database queries, not the inbound rate (flood.test.ts).
      liveServices: {
        hub: { maxSocketsPerUser: 3, sessionCheckMs: 60_000, inboundBurst: 10_000, maxInbox: 10_000 },
      },
    });
    base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
    alice = await signUp(t.app);
    bob = await signUp(t.app);
  });
  afterAll(async () => {
    for (const ws of open) ws.terminate();
    await t?.close();
    await store?.close();
  });

  interface Conn {
    ws: WebSocket;
    messages: Record<string, unknown>[];
    closed: Promise<{ code: number; reason: string }>;
  }

  async function connect(token: string): Promise<Conn> {
    const ws = new WebSocket(`${base}${HUB_PATH}?access_token=${token}`);
    open.push(ws);
    const messages: Record<string, unknown>[] = [];
    ws.on('message', (d) => messages.push(JSON.parse(String(d)) as Record<string, unknown>));
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on('close', (code, reason) => r({ code, reason: String(reason) })),
    );
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return { ws, messages, closed };
  }

  /** Sends a ping and waits for its pong: every message sent before it has been handled. */
  async function settled(c: Conn): Promise<void> {
    const before = c.messages.filter((m) => m.type === 'pong').length;
    c.ws.send(JSON.stringify({ type: 'ping' }));
    await vi.waitFor(
      () => expect(c.messages.filter((m) => m.type === 'pong').length).toBeGreaterThan(before),
      {
        timeout: 10_000,
      },
    );
  }

  it('closes a user’s socket past the limit with 1013 and a reason; other users and freed places are fine', async () => {
    const mine = [await connect(alice.token), await connect(alice.token), await connect(alice.token)];
    const extra = await connect(alice.token);
    expect(await extra.closed).toEqual({ code: CLOSE_TOO_MANY, reason: 'too many connections' });
    // The three that fit still work, and another user is not counted against Alice.
    await settled(mine[0]!);
    const other = await connect(bob.token);
    await settled(other);
    // A closed socket frees its place.
    mine[2]!.ws.close();
    await mine[2]!.closed;
    await vi.waitFor(() => expect(t.app.hub.stats().clients).toBe(3));
    const again = await connect(alice.token);
    await settled(again);
    for (const c of [mine[0]!, mine[1]!, again, other]) {
      c.ws.close();
      await c.closed;
    }
  });

  it('answers a flood of subscribes from the user’s known devices, and still learns a newly claimed one', async () => {
    const loc = await locationOf(t.app, alice);
    const meter = await claimMeter(t.app, alice, loc);
    const list = vi.spyOn(t.app.devices, 'list');
    const c = await connect(alice.token);
    for (let i = 0; i < 2_000; i++)
      c.ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [meter.id, 1_000_000 + (i % 50)] }));
    await settled(c);
    // One read of the device list for two thousand subscribes (the unknown ids do not force more).
    expect(list.mock.calls.length).toBe(1);
    live.publish({ deviceKey: meter.deviceKey, ts: NOW, values: { vave1: 230 } });
    await vi.waitFor(() =>
      expect(c.messages.some((m) => m.type === 'reading' && m.deviceId === meter.id)).toBe(true),
    );

    // A meter claimed while the socket is open, at once (the clock has not moved past the refresh
    // interval): a subscribe naming it reads the list again, and its readings then arrive.
    const later = await claimMeter(t.app, alice, loc);
    c.ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [later.id] }));
    await settled(c);
    expect(list.mock.calls.length).toBe(2);
    // Unknown ids after that read force no more reads within the interval.
    for (let i = 0; i < 100; i++)
      c.ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [2_000_000 + i] }));
    await settled(c);
    expect(list.mock.calls.length).toBe(2);
    live.publish({ deviceKey: later.deviceKey, ts: NOW + 1, values: { vave1: 231 } });
    await vi.waitFor(() =>
      expect(c.messages.some((m) => m.type === 'reading' && m.deviceId === later.id)).toBe(true),
    );
    // Bob's sockets never learn Alice's devices.
    const b = await connect(bob.token);
    b.ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [meter.id, later.id] }));
    await settled(b);
    live.publish({ deviceKey: meter.deviceKey, ts: NOW + 2, values: { vave1: 232 } });
    await vi.waitFor(() =>
      expect(c.messages.some((m) => m.type === 'reading' && m.ts === NOW + 2)).toBe(true),
    );
    expect(b.messages.filter((m) => m.type === 'reading')).toEqual([]);
    list.mockRestore();
    c.ws.close();
    b.ws.close();
  });
});
