/**
 * What a client sends is bounded, over a real WebSocket against the real app: a socket has a token bucket
 * of frames and a bounded inbox; past either it is closed (1008 / 1013) and counted in /metrics, malformed
 * frames are counted rather than each answered, and other sockets keep working meanwhile.
 */
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { type Account, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';
import { CLOSE_POLICY, CLOSE_TOO_MANY, HUB_PATH, REASON_INBOX, REASON_RATE } from './hub.ts';
import { createLocalLiveSource } from './live-source.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const BURST = 20;
const PER_SECOND = 5;
const MAX_INBOX = 8;

interface Conn {
  ws: WebSocket;
  messages: Record<string, unknown>[];
  closed: Promise<{ code: number; reason: string }>;
}

describe('hub inbound bounds', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let base: string;
  let alice: Account;
  let bob: Account;
  const open: WebSocket[] = [];

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', {
      store,
      live: createLocalLiveSource(),
      now: () => NOW,
      liveServices: {
        hub: {
          sessionCheckMs: 60_000,
          inboundBurst: BURST,
          inboundPerSecond: PER_SECOND,
          maxInbox: MAX_INBOX,
        },
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

  const pongs = (c: Conn) => c.messages.filter((m) => m.type === 'pong').length;
  /** Sends `n` pings and waits for as many pongs. */
  async function pings(c: Conn, n: number): Promise<void> {
    const before = pongs(c);
    for (let i = 0; i < n; i++) c.ws.send(JSON.stringify({ type: 'ping' }));
    await vi.waitFor(() => expect(pongs(c)).toBe(before + n), { timeout: 10_000 });
  }

  async function metric(name: string): Promise<number> {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    if (!line) throw new Error(`no ${name} in /metrics`);
    return Number(line.slice(name.length + 1));
  }

  it('closes a socket flooding 1-byte frames with 1008, counts it and its malformed frames, answers one error; another socket keeps working', async () => {
    const shedBefore = await metric('kilowatch_hub_sockets_shed_total{reason="rate"}');
    const malformedBefore = await metric('kilowatch_hub_frames_malformed_total');
    const other = await connect(bob.token);
    const flooder = await connect(alice.token);
    for (let i = 0; i < 5_000; i++) flooder.ws.send('x');
    expect(await flooder.closed).toEqual({ code: CLOSE_POLICY, reason: REASON_RATE });
    expect(await metric('kilowatch_hub_sockets_shed_total{reason="rate"}')).toBe(shedBefore + 1);
    // Only the burst was read at all: each of those is counted, and one error answered them all.
    await vi.waitFor(async () =>
      expect(await metric('kilowatch_hub_frames_malformed_total')).toBe(malformedBefore + BURST),
    );
    expect(flooder.messages).toEqual([{ type: 'error', message: expect.any(String) }]);
    // Bob's socket was never affected, and the process answers its health probe.
    await pings(other, 3);
    expect((await t.app.inject({ method: 'GET', url: '/api/health/live' })).statusCode).toBe(200);
    other.ws.close();
    await other.closed;
  });

  it('allows the burst, then the sustained rate as the clock moves, and closes the socket past it', async () => {
    const c = await connect(alice.token);
    await pings(c, BURST);
    // A second later the bucket holds PER_SECOND frames again: they are answered.
    t.advance(1_000);
    await pings(c, PER_SECOND);
    // It is empty now: one more frame closes the socket.
    c.ws.send(JSON.stringify({ type: 'ping' }));
    expect(await c.closed).toEqual({ code: CLOSE_POLICY, reason: REASON_RATE });
    expect(pongs(c)).toBe(BURST + PER_SECOND);
  });

  it('closes a socket whose inbox is full with 1013 and counts it; its queued frames are dropped', async () => {
    const shedBefore = await metric('kilowatch_hub_sockets_shed_total{reason="inbox"}');
    // The first subscribe reads the user's device list; holding that read keeps the frames behind it waiting.
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const list = t.app.devices.list.bind(t.app.devices);
    const spy = vi.spyOn(t.app.devices, 'list').mockImplementation(async (...args) => {
      await held;
      return list(...args);
    });
    try {
      const c = await connect(alice.token);
      c.ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [1] }));
      await vi.waitFor(() => expect(spy).toHaveBeenCalled(), { timeout: 10_000 });
      // The subscribe waits; MAX_INBOX - 1 pings fill the inbox, one more overflows it.
      for (let i = 0; i < MAX_INBOX; i++) c.ws.send(JSON.stringify({ type: 'ping' }));
      expect(await c.closed).toEqual({ code: CLOSE_TOO_MANY, reason: REASON_INBOX });
      expect(await metric('kilowatch_hub_sockets_shed_total{reason="inbox"}')).toBe(shedBefore + 1);
      expect(pongs(c)).toBe(0);
    } finally {
      release();
      spy.mockRestore();
    }
    // Another socket of the same user is handled as usual once the read is done.
    const again = await connect(alice.token);
    await pings(again, 2);
    again.ws.close();
    await again.closed;
  });
});
