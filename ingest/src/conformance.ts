/**
 * The broker conformance suite: what a broker must hold against meters, as an attacker with one meter's credentials would try it. Run
 * against the embedded broker (credentials from a store the broker asks) and against Mosquitto with its
 * dynamic security plugin (credentials pushed by the API's control client), each with ingest behind it.
 */
import { meterTopics } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { expect, it } from 'vitest';
import { waitFor } from './test/helpers.ts';

export interface MeterAccessHarness {
  url: string;
  store: TelemetryStore;
  /** The services' account (ingest, api). */
  service: { username: string; password: string };
  /** Claims a device: its credentials. */
  claim(deviceKey: string): Promise<{ username: string; password: string }>;
  /** Rotates a device's password: the new credentials; the old must stop at once. */
  rotate(deviceKey: string): Promise<{ username: string; password: string }>;
  /** Deletes a device: its credentials must stop at once. */
  remove(deviceKey: string): Promise<void>;
  /** What the broker counted as refused (0 when the broker does not count). */
  refusedCount(): number;
}

const reading = (ts: number, v: number) => JSON.stringify({ ts, values: { vave1: v } });

/** Connects, or resolves with the refusal. */
export async function tryConnect(url: string, opts: IClientOptions): Promise<MqttClient | Error> {
  try {
    return await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: 5000, ...opts });
  } catch (e) {
    return e as Error;
  }
}

async function connect(url: string, opts: IClientOptions): Promise<MqttClient> {
  const c = await tryConnect(url, opts);
  if (c instanceof Error) throw c;
  return c;
}

/** SUBACK granted QoS of one filter (128 = refused). */
async function granted(client: MqttClient, filter: string): Promise<number> {
  try {
    const result = await client.subscribeAsync(filter, { qos: 1 });
    return result[0]?.qos ?? -1;
  } catch (e) {
    // mqtt.js turns a refused subscription into an error carrying the SUBACK.
    const granted = (e as { packet?: { granted?: number[] } }).packet?.granted;
    if (granted) return granted[0] ?? -1;
    throw e;
  }
}

/** Whether a closed connection was closed by the broker, waited for. */
async function closedByBroker(client: MqttClient): Promise<void> {
  await waitFor(() => !client.connected, 5000, 'the broker to close the connection');
}

export function meterAccessSuite(
  setUp: () => Promise<MeterAccessHarness>,
  keys: { a: string; b: string; c: string; d: string },
) {
  let n = 0;
  const clientId = (what: string) => `kw-acc-${what}-${n++}`;

  it('refuses anonymous connections and wrong passwords', async () => {
    const h = await setUp();
    const anonymous = await tryConnect(h.url, { clientId: clientId('anon') });
    expect(anonymous).toBeInstanceOf(Error);
    const creds = await h.claim(keys.a);
    const wrong = await tryConnect(h.url, {
      clientId: clientId('wrong'),
      username: creds.username,
      password: 'nope',
    });
    expect(wrong).toBeInstanceOf(Error);
    const unknown = await tryConnect(h.url, {
      clientId: clientId('unknown'),
      username: 'ffffffffffff',
      password: 'x',
    });
    expect(unknown).toBeInstanceOf(Error);
  });

  it("stores a meter's readings for it, and drops what it publishes under another device's topic", async () => {
    const h = await setUp();
    const a = await h.claim(keys.a);
    await h.claim(keys.b);
    const meter = await connect(h.url, { clientId: clientId('meter'), ...a });
    try {
      const ts = Math.floor(Date.now() / 1000) * 1000 - 60_000;
      await meter.publishAsync(meterTopics(keys.a).native, reading(ts, 231), { qos: 1 });
      await waitFor(async () => (await h.store.latest(keys.a))?.values.vave1 === 231, 10_000, 'own reading');
      const before = h.refusedCount();
      // Forged: the same credentials, another device's topics in every firmware layout.
      await meter.publishAsync(meterTopics(keys.b).native, reading(ts + 1000, 150), { qos: 1 });
      await meter.publishAsync(
        `tele/${keys.b}/SENSOR`,
        JSON.stringify({ Time: '2026-01-01T00:00:00', ENERGY: { Voltage: 150 } }),
        { qos: 1 },
      );
      await meter.publishAsync(
        meterTopics(keys.b).shelly,
        '{"method":"NotifyStatus","params":{"ts":1,"em1:0":{"voltage":150}}}',
        { qos: 1 },
      );
      // A marker after them: once it is stored, the forged ones would have been too.
      await meter.publishAsync(meterTopics(keys.a).native, reading(ts + 2000, 232), { qos: 1 });
      await waitFor(async () => (await h.store.latest(keys.a))?.values.vave1 === 232, 10_000, 'marker');
      expect(await h.store.latest(keys.b)).toBeNull();
      expect(h.refusedCount() === 0 || h.refusedCount() >= before + 3).toBe(true);
    } finally {
      await meter.endAsync(true);
    }
  });

  it("refuses a meter's subscriptions to #, the live topics and another meter's topics; its own command topic is granted", async () => {
    const h = await setUp();
    const a = await h.claim(keys.a);
    const meter = await connect(h.url, { clientId: clientId('sub'), ...a });
    try {
      for (const filter of [
        '#',
        '$SYS/#',
        '$SYS/broker/log/N',
        'kilowatch/live/#',
        `kilowatch/live/${keys.a}`,
        'kilowatch/hub/#',
        `kilowatch/meters/${keys.b}/readings`,
        'kilowatch/meters/+/readings',
        'tele/+/SENSOR',
        '$share/g/kilowatch/meters/+/readings',
      ])
        expect([filter, await granted(meter, filter)]).toEqual([filter, 128]);
      expect(await granted(meter, `cmnd/tasmota_${keys.a.slice(6).toUpperCase()}/#`)).toBe(1);
    } finally {
      await meter.endAsync(true);
    }
  });

  it('a rotated password stops working at once, and the meter connected with it is disconnected', async () => {
    const h = await setUp();
    const old = await h.claim(keys.c);
    const meter = await connect(h.url, { clientId: clientId('rot'), ...old });
    const fresh = await h.rotate(keys.c);
    expect(fresh.password).not.toBe(old.password);
    await closedByBroker(meter);
    await meter.endAsync(true);
    expect(await tryConnect(h.url, { clientId: clientId('rot-old'), ...old })).toBeInstanceOf(Error);
    const again = await connect(h.url, { clientId: clientId('rot-new'), ...fresh });
    await again.endAsync();
  });

  it("a deleted device's credentials stop working at once", async () => {
    const h = await setUp();
    const creds = await h.claim(keys.d);
    const meter = await connect(h.url, { clientId: clientId('del'), ...creds });
    await h.remove(keys.d);
    await closedByBroker(meter);
    await meter.endAsync(true);
    expect(await tryConnect(h.url, { clientId: clientId('del-again'), ...creds })).toBeInstanceOf(Error);
  });

  it('stock Tasmota and Shelly default topics store readings for the device the credentials belong to', async () => {
    const h = await setUp();
    const a = await h.claim(keys.a);
    const b = await h.claim(keys.b);
    const now = Math.floor(Date.now() / 1000) * 1000 - 30_000;
    const tasmota = await connect(h.url, { clientId: `DVES_${keys.a.slice(6).toUpperCase()}`, ...a });
    const shelly = await connect(h.url, { clientId: `shellypro3em-${keys.b}`, ...b });
    try {
      const t = meterTopics(keys.a);
      expect(t.tasmota).toBe(`tele/tasmota_${keys.a.slice(6).toUpperCase()}/SENSOR`);
      await tasmota.publishAsync(
        t.tasmota,
        JSON.stringify({
          Time: new Date(now).toISOString().slice(0, 19),
          ENERGY: { Voltage: 233, Total: 1.5 },
        }),
        { qos: 1 },
      );
      await shelly.publishAsync(
        meterTopics(keys.b).shelly,
        JSON.stringify({
          method: 'NotifyStatus',
          params: { ts: now / 1000, 'em1:0': { id: 0, voltage: 228.5, act_power: 10 } },
        }),
        { qos: 1 },
      );
      // Tasmota's `Time` is the meter's local time: look a few hours either side.
      const has = async (key: string, v: number) =>
        (
          await h.store.readRaw({
            deviceKey: key,
            from: now - 4 * 3_600_000,
            to: now + 4 * 3_600_000,
            limit: 10_000,
          })
        ).items.some((r) => r.values.vave1 === v);
      await waitFor(() => has(keys.a, 233), 10_000, 'tasmota reading');
      await waitFor(() => has(keys.b, 228.5), 10_000, 'shelly reading');
    } finally {
      await tasmota.endAsync(true);
      await shelly.endAsync(true);
    }
  });

  it('internal topics take messages from the services only: a meter cannot forge live readings or hub events', async () => {
    const h = await setUp();
    const a = await h.claim(keys.a);
    const service = await connect(h.url, { clientId: clientId('svc'), ...h.service });
    const meter = await connect(h.url, { clientId: clientId('forger'), ...a });
    try {
      const got: string[] = [];
      service.on('message', (topic, payload) => got.push(`${topic} ${payload}`));
      await service.subscribeAsync(['kilowatch/live/#', 'kilowatch/hub/#'], { qos: 1 });
      const forged = JSON.stringify({ deviceKey: keys.a, ts: Date.now(), values: { vave1: 150 } });
      await meter.publishAsync(`kilowatch/live/${keys.a}`, forged, { qos: 1 });
      await meter.publishAsync('kilowatch/hub/events', '{"origin":"x","event":{"kind":"user","userId":1}}', {
        qos: 1,
      });
      await service.publishAsync('kilowatch/hub/events', 'from-the-api', { qos: 1 });
      await waitFor(() => got.length > 0, 5000, 'the service message');
      await new Promise((r) => setTimeout(r, 200));
      expect(got).toEqual(['kilowatch/hub/events from-the-api']);
    } finally {
      await meter.endAsync(true);
      await service.endAsync(true);
    }
  });
}
