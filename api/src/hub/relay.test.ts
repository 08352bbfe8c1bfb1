/**
 * Two API processes on one real Mosquitto and one metadata store: a user's socket held by one of them
 * gets the notifications and export progress raised in the other, and closes at once when the user logs
 * out through the other.
 */
import { findServerBinary, type MosquittoServer, startMosquitto, until } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { alertOnVoltage, claimMeter, locationOf } from '../analytics/testing.ts';
import { buildApp } from '../app.ts';
import { type Account, as, buildTestApp, signUp, TEST_CONFIG, type TestApp } from '../testing/helper.ts';
import { CLOSE_POLICY, HUB_PATH } from './hub.ts';
import { type HubRelay, startHubRelay } from './relay.ts';

const binary = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);

interface Conn {
  ws: WebSocket;
  messages: Record<string, unknown>[];
  closed: Promise<number>;
}

async function connect(base: string, token: string): Promise<Conn> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}${HUB_PATH}?access_token=${token}`);
  const messages: Record<string, unknown>[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data)) as Record<string, unknown>));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, messages, closed };
}

describe.skipIf(!binary)('the hub across two API processes on Mosquitto', () => {
  let broker: MosquittoServer;
  let t: TestApp;
  let other: FastifyInstance;
  const relays: HubRelay[] = [];
  let baseA: string;
  let baseB: string;
  let alice: Account;
  let bob: Account;
  let store: TelemetryStore;

  beforeAll(async () => {
    broker = await startMosquitto(binary!);
    const relayA = await startHubRelay({ mqttUrl: broker.url });
    const relayB = await startHubRelay({ mqttUrl: broker.url });
    relays.push(relayA, relayB);
    // The periodic session check is far away: only the relay can close a socket within the test.
    const hub = { sessionCheckMs: 3_600_000 };
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, liveServices: { hub: { ...hub, relay: relayA } } });
    other = await buildApp({
      store,
      sql: t.sql,
      config: TEST_CONFIG,
      // Alerts judge readings by this clock: the ones below (2026-06-01) are news then.
      now: () => Date.parse('2026-06-01T12:00:00Z'),
      liveServices: { hub: { ...hub, relay: relayB } },
    });
    await other.ready();
    baseA = await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseB = await other.listen({ port: 0, host: '127.0.0.1' });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
  });

  afterAll(async () => {
    await other?.close();
    await t?.close();
    for (const r of relays) await r.stop();
    await broker?.stop();
    await store?.close();
  });

  it("delivers a user's notification raised in one process to the sockets the other holds, once", async () => {
    const onB = await connect(baseB, alice.token);
    const onA = await connect(baseA, alice.token);
    const bobOnB = await connect(baseB, bob.token);
    const note = {
      type: 'notification',
      id: 7,
      deviceId: 1,
      kind: 'voltage-drop',
      message: 'x',
      at: 1,
    } as const;
    t.app.hub.publishToUser(alice.userId, note, 'notification:7');
    other.hub.publishToUser(alice.userId, { type: 'export', id: 3, status: 'done', progress: 1 }, 'export:3');
    await until(() => onB.messages.length >= 2 && onA.messages.length >= 2, 10_000, 'both sockets');
    await new Promise((r) => setTimeout(r, 300));
    // Each socket has each message exactly once: the local delivery, and no echo from the broker.
    expect(onB.messages).toEqual(expect.arrayContaining([note, expect.objectContaining({ type: 'export' })]));
    expect(onB.messages).toHaveLength(2);
    expect(onA.messages).toEqual(expect.arrayContaining([note, expect.objectContaining({ type: 'export' })]));
    expect(onA.messages).toHaveLength(2);
    // Another user's socket gets nothing.
    expect(bobOnB.messages).toEqual([]);
    for (const c of [onA, onB, bobOnB]) c.ws.close();
  });

  it('closes the sockets another process holds as soon as the user logs out', async () => {
    const session = await signUp(t.app);
    const onB = await connect(baseB, session.token);
    const bobOnB = await connect(baseB, bob.token);
    const res = await as(t.app, session, { method: 'GET', url: '/api/account/logout' });
    expect(res.statusCode).toBe(204);
    const code = await Promise.race([
      onB.closed,
      new Promise<string>((r) => setTimeout(() => r('still open after 5 s'), 5_000)),
    ]);
    expect(code).toBe(CLOSE_POLICY);
    // The other user's socket on that process stays open.
    expect(bobOnB.ws.readyState).toBe(WebSocket.OPEN);
    bobOnB.ws.close();
  });

  it("reads a device's alert settings again in the other process as soon as they change", async () => {
    const carol = await signUp(t.app);
    const meter = await claimMeter(t.app, carol, await locationOf(t.app, carol, 'UTC'));
    const drops = async () =>
      (
        (await as(t.app, carol, { method: 'GET', url: '/api/notifications' })).json().items as {
          kind: string;
        }[]
      ).filter((n) => n.kind === 'voltage-drop').length;
    await alertOnVoltage(t.app, carol, meter);
    const at = Date.parse('2026-06-01T12:00:00Z');
    const reading = (s: number, vave1: number) => ({
      deviceKey: meter.deviceKey,
      ts: at + s * 1000,
      values: { vave1 },
    });
    // The other process evaluates (and caches the settings: alerts on).
    await other.alerts.evaluate(reading(0, 190));
    expect(await drops()).toBe(1);
    // Muted through this one; the other hears of it over the broker.
    const heard = new Promise<void>((resolve) => {
      const off = relays[1]!.onEvent((e) => {
        if (e.kind === 'alert-settings' && e.deviceKey === meter.deviceKey) {
          off();
          resolve();
        }
      });
    });
    await alertOnVoltage(t.app, carol, meter, true);
    await heard;
    await other.alerts.evaluate(reading(60, 230));
    await other.alerts.evaluate(reading(180, 190));
    expect(await drops()).toBe(1);
  });
});
