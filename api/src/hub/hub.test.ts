/** The hub over a real WebSocket (`ws` against `app.listen` on loopback). */
import { Writable } from 'node:stream';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { claimMeter, locationOf, type Meter } from '../analytics/testing.ts';
import { REFRESH_GRACE_MS } from '../plugins/app/auth.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';
import { CLOSE_POLICY, HUB_PATH } from './hub.ts';
import { createLocalLiveSource } from './live-source.ts';

interface Conn {
  ws: WebSocket;
  messages: Record<string, unknown>[];
  next(pred: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** The promise's value, or 'not within 5 s'. */
const soon = <T>(p: Promise<T>) =>
  Promise.race([p, new Promise<string>((r) => setTimeout(() => r('not within 5 s'), 5_000))]);

describe('dashboard hub over a real WebSocket', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let base: string;
  let alice: Account;
  let bob: Account;
  let aliceMeter: Meter;
  let aliceOther: Meter;
  let bobMeter: Meter;
  const live = createLocalLiveSource();
  const logLines: string[] = [];

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', {
      store,
      live,
      liveServices: { hub: { highWaterBytes: 16 * 1024, sessionCheckMs: 60_000 } },
      config: { allowedOrigins: ['https://kilowatch.example'] },
      logger: {
        level: 'trace',
        stream: new Writable({
          write(chunk, _enc, done) {
            logLines.push(String(chunk));
            done();
          },
        }),
      },
    });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = address.replace('http', 'ws');
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    const loc = await locationOf(t.app, alice);
    aliceMeter = await claimMeter(t.app, alice, loc);
    aliceOther = await claimMeter(t.app, alice, loc);
    bobMeter = await claimMeter(t.app, bob, null);
  });

  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  async function connect(token: string, headers: Record<string, string> = {}): Promise<Conn> {
    const ws = new WebSocket(`${base}${HUB_PATH}?access_token=${token}`, { headers });
    const messages: Record<string, unknown>[] = [];
    const waiters: {
      pred: (m: Record<string, unknown>) => boolean;
      resolve: (m: Record<string, unknown>) => void;
    }[] = [];
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Record<string, unknown>;
      messages.push(m);
      for (const w of [...waiters]) {
        if (w.pred(m)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(m);
        }
      }
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    return {
      ws,
      messages,
      next: (pred) =>
        new Promise((resolve) => {
          const seen = messages.find(pred);
          if (seen) resolve(seen);
          else waiters.push({ pred, resolve });
        }),
    };
  }

  async function subscribe(c: Conn, deviceIds: number[]): Promise<void> {
    c.ws.send(JSON.stringify({ type: 'subscribe', deviceIds }));
    const before = c.messages.filter((m) => m.type === 'pong').length;
    c.ws.send(JSON.stringify({ type: 'ping' }));
    await new Promise<void>((resolve) => {
      const check = () =>
        c.messages.filter((m) => m.type === 'pong').length > before ? resolve() : setTimeout(check, 5);
      check();
    });
  }

  it('delivers a live reading to its owner and nothing to another user', async () => {
    const a = await connect(alice.token);
    const b = await connect(bob.token);
    await subscribe(a, [aliceMeter.id]);
    // Bob asks for Alice's device too: ignored, and the answer names only his own.
    await subscribe(b, [bobMeter.id, aliceMeter.id]);
    expect(a.messages.filter((m) => m.type === 'subscribed')).toEqual([
      { type: 'subscribed', deviceIds: [aliceMeter.id] },
    ]);
    expect(b.messages.filter((m) => m.type === 'subscribed')).toEqual([
      { type: 'subscribed', deviceIds: [bobMeter.id] },
    ]);
    live.publish({ deviceKey: aliceMeter.deviceKey, ts: 1000, values: { vave1: 231 } });
    live.publish({ deviceKey: bobMeter.deviceKey, ts: 2000, values: { vave1: 229 } });
    const got = await a.next((m) => m.type === 'reading');
    expect(got).toEqual({ type: 'reading', deviceId: aliceMeter.id, ts: 1000, values: { vave1: 231 } });
    // Readings are delivered in order: Bob's first reading is his own, so Alice's never reached him.
    const bobs = await b.next((m) => m.type === 'reading');
    expect(bobs).toEqual({ type: 'reading', deviceId: bobMeter.id, ts: 2000, values: { vave1: 229 } });
    expect(b.messages.filter((m) => m.deviceId === aliceMeter.id)).toEqual([]);
    a.ws.close();
    b.ws.close();
  });

  it('delivers a burst of readings to several sockets complete and in order', async () => {
    const conns = await Promise.all([connect(alice.token), connect(alice.token), connect(alice.token)]);
    for (const c of conns) await subscribe(c, [aliceMeter.id, aliceOther.id]);
    // One synchronous burst: the frames of one turn leave together (corked), none may be lost or reordered.
    for (let i = 0; i < 60; i++) {
      const meter = i % 2 === 0 ? aliceMeter : aliceOther;
      live.publish({ deviceKey: meter.deviceKey, ts: 10_000 + i, values: { vave1: 200 + i } });
    }
    for (const c of conns) {
      await c.next((m) => m.type === 'reading' && m.ts === 10_059);
      await c.next((m) => m.type === 'reading' && m.ts === 10_058);
      // In order per device (devices are looked up independently, so two devices may interleave).
      for (const [meter, first] of [
        [aliceMeter, 0],
        [aliceOther, 1],
      ] as const) {
        const ts = c.messages
          .filter((m) => m.type === 'reading' && m.deviceId === meter.id && Number(m.ts) >= 10_000)
          .map((m) => m.ts);
        expect(ts).toEqual(Array.from({ length: 30 }, (_, i) => 10_000 + first + 2 * i));
      }
      c.ws.close();
    }
  });
  it('refuses a bad token and a foreign Origin before the upgrade, and never logs the token', async () => {
    await expect(connect('x'.repeat(40))).rejects.toThrow('HTTP 401');
    await expect(connect(alice.token, { origin: 'https://evil.example' })).rejects.toThrow('HTTP 403');
    const ok = await connect(alice.token, { origin: 'https://kilowatch.example' });
    ok.ws.close();
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain(alice.token);
  });

  it('closes the socket with 1008 when the session logs out', async () => {
    const session = await signUp(t.app);
    const c = await connect(session.token);
    const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
    const res = await as(t.app, session, { method: 'GET', url: '/api/account/logout' });
    expect(res.statusCode).toBe(204);
    expect(await closed).toBe(CLOSE_POLICY);
  });

  it('closes the socket with 1008 when its session ends by a replayed refresh token', async () => {
    const session = await signUp(t.app);
    const refresh = (refreshToken: string) =>
      t.app.inject({ method: 'POST', url: '/api/account/refreshtoken', payload: { refreshToken } });
    const rotated = await refresh(session.refreshToken);
    expect(rotated.statusCode).toBe(200);
    const c = await connect(rotated.json().token);
    const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
    // The spent token again, past the grace a retry gets: a replay, so the whole session ends, and the
    // socket with it.
    t.advance(REFRESH_GRACE_MS + 1000);
    expect((await refresh(session.refreshToken)).statusCode).toBe(401);
    // At once: not at the periodic session check a minute later.
    expect(await soon(closed)).toBe(CLOSE_POLICY);
  });

  it('closes every socket of an account whose password is reset', async () => {
    const account = await signUp(t.app);
    const sockets = [await connect(account.token), await connect(account.token)];
    const closed = sockets.map(
      (c) => new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code))),
    );
    const before = t.mails.length;
    await t.app.inject({ method: 'POST', url: '/api/forgot_password', payload: { email: account.email } });
    for (let i = 0; i < 200 && t.mails.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    const token = /token=([A-Za-z0-9_-]+)/.exec(t.mails.at(-1)!.text)![1]!;
    const reset = await t.app.inject({
      method: 'POST',
      url: '/api/reset_password',
      payload: { token, password: 'a brand new password' },
    });
    expect(reset.statusCode).toBe(204);
    expect(await soon(Promise.all(closed))).toEqual([CLOSE_POLICY, CLOSE_POLICY]);
  });

  it("pushes device status to its owner's sockets", async () => {
    const c = await connect(alice.token);
    await subscribe(c, []);
    live.publishStatus({ deviceKey: aliceMeter.deviceKey, status: 'weak-signal', lastSeen: 1, rssi: -85 });
    expect(await c.next((m) => m.type === 'status')).toEqual({
      type: 'status',
      deviceId: aliceMeter.id,
      status: 'weak-signal',
      rssi: -85,
    });
    c.ws.close();
  });

  it('coalesces a slow consumer to the newest value per device instead of queueing without bound', async () => {
    const c = await connect(alice.token);
    await subscribe(c, [aliceMeter.id, aliceOther.id]);
    // Stop reading from the socket: the server's buffer fills, then messages coalesce per device.
    c.ws.pause();
    const values: Record<string, number> = {};
    for (let i = 0; i < 40; i++) values[`p${i}`] = 1000 + i;
    const N = 20_000;
    for (let i = 1; i <= N; i++) {
      live.publish({ deviceKey: (i % 2 ? aliceMeter : aliceOther).deviceKey, ts: i, values });
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, 100));
    const stats = t.app.hub.stats();
    expect(stats.coalesced).toBeGreaterThan(0);
    // At most one pending message per device, however many were published.
    expect(stats.pendingMessages).toBeLessThanOrEqual(2);
    c.ws.resume();
    const last = await c.next((m) => m.type === 'reading' && m.ts === N);
    expect(last.deviceId).toBe(aliceOther.id);
    await c.next((m) => m.type === 'reading' && m.ts === N - 1);
    expect(c.messages.filter((m) => m.type === 'reading').length).toBeLessThan(N);
    c.ws.close();
  });

  // Last: moving the clock expires every token issued so far.
  it('closes the socket with 1008 once the access token expires', async () => {
    const c = await connect(alice.token);
    const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
    t.advance(t.app.config.accessTokenTtlMs + 1_000);
    await t.app.hub.recheckSessions();
    expect(await closed).toBe(CLOSE_POLICY);
  });
});
