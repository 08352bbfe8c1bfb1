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
  /**
   * Claims a device in a second account: its credentials, or the refusal's message (a stock Tasmota
   * suffix another account's device holds). `stockTopics: false` claims it with its key as its Topic.
   */
  claimElsewhere(
    deviceKey: string,
    opts: { stockTopics: boolean },
  ): Promise<{ username: string; password: string } | { conflict: string }>;
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

/** What the broker holds retained on `filters` right now (delivered with the subscription). */
async function retainedOn(
  url: string,
  service: { username: string; password: string },
  filters: string[],
  until: (got: Map<string, string>) => boolean,
): Promise<Map<string, string>> {
  const reader = await connect(url, {
    clientId: `kw-acc-retained-${Math.random().toString(16).slice(2)}`,
    ...service,
  });
  const got = new Map<string, string>();
  reader.on('message', (topic, payload, packet) => {
    if (packet.retain) got.set(topic, payload.toString());
  });
  try {
    await reader.subscribeAsync(filters, { qos: 1 });
    await waitFor(() => until(got), 5000, 'the retained messages');
    return got;
  } finally {
    await reader.endAsync(true);
  }
}

export function meterAccessSuite(
  setUp: () => Promise<MeterAccessHarness>,
  keys: { a: string; b: string; c: string; d: string },
  /** Pairs of keys that end in the same 6 hex digits (Tasmota's stock suffix), unused by `keys`. */
  twins: { tasmota: [string, string]; shelly: [string, string] },
  /**
   * What the broker does with a client id another account uses: the embedded broker refuses the connect
   * (`refused`); Mosquitto's meters' listener replaces every client id by the account's username
   * (`use_username_as_clientid`, deploy/mosquitto.conf), so the connect goes through under the taker's own
   * id (`username`). Either way no account disconnects another's meter or reaches its session.
   */
  opts: { foreignClientId: 'refused' | 'username' },
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

  it('a Tasmota suffix twin in another account is refused with 409; claimed with its key as Topic, neither can read, write, retain or command the other', async () => {
    const h = await setUp();
    const [aliceKey, bobKey] = twins.tasmota;
    const stock = `tasmota_${aliceKey.slice(6).toUpperCase()}`;
    const alice = await h.claim(aliceKey);
    const refused = await h.claimElsewhere(bobKey, { stockTopics: true });
    expect(refused).toEqual({ conflict: expect.stringMatching(/device key/) });
    const bob = await h.claimElsewhere(bobKey, { stockTopics: false });
    if ('conflict' in bob) throw new Error(bob.conflict);
    const aliceMeter = await connect(h.url, {
      clientId: `DVES_${aliceKey.slice(6).toUpperCase()}`,
      ...alice,
    });
    const bobMeter = await connect(h.url, { clientId: `${bobKey}-tasmota`, ...bob });
    const aliceGot: string[] = [];
    aliceMeter.on('message', (topic, payload) => aliceGot.push(`${topic} ${payload}`));
    try {
      const ts = Math.floor(Date.now() / 1000) * 1000 - 90_000;
      const sensor = (v: number) =>
        JSON.stringify({ Time: new Date(ts).toISOString().slice(0, 19), ENERGY: { Voltage: v, Total: 2 } });
      // Alice's retained state and her own command subscription come first.
      await aliceMeter.publishAsync(`tele/${stock}/LWT`, 'Online', { qos: 1, retain: true });
      await aliceMeter.publishAsync(`stat/${stock}/POWER`, 'ON', { qos: 1, retain: true });
      expect(await granted(aliceMeter, `cmnd/${stock}/#`)).toBe(1);
      expect(await granted(aliceMeter, `shellypro3em-${aliceKey}/#`)).toBe(1);
      // Bob may use his own key's topics, none of Alice's stock ones.
      expect(await granted(bobMeter, `cmnd/${bobKey}/#`)).toBe(1);
      for (const filter of [`tele/${stock}/#`, `stat/${stock}/#`, `cmnd/${stock}/#`, `tele/${stock}/SENSOR`])
        expect([filter, await granted(bobMeter, filter)]).toEqual([filter, 128]);
      await bobMeter.publishAsync(`tele/${stock}/LWT`, 'Offline', { qos: 1, retain: true });
      await bobMeter.publishAsync(`stat/${stock}/POWER`, 'OFF', { qos: 1, retain: true });
      await bobMeter.publishAsync(`cmnd/${stock}/POWER`, 'OFF', { qos: 1 });
      await bobMeter.publishAsync(`tele/${stock}/SENSOR`, sensor(150), { qos: 1 });
      // Both store their own readings, Alice under the stock topic, Bob under his key.
      await aliceMeter.publishAsync(`tele/${stock}/SENSOR`, sensor(233), { qos: 1 });
      await bobMeter.publishAsync(`tele/${bobKey}/SENSOR`, sensor(234), { qos: 1 });
      const values = async (key: string) =>
        (
          await h.store.readRaw({
            deviceKey: key,
            from: ts - 4 * 3_600_000,
            to: ts + 4 * 3_600_000,
            limit: 100,
          })
        ).items.map((r) => r.values.vave1);
      await waitFor(async () => (await values(aliceKey)).includes(233), 10_000, "Alice's reading");
      await waitFor(async () => (await values(bobKey)).includes(234), 10_000, "Bob's reading");
      expect(await values(aliceKey)).not.toContain(150);
      expect(await values(bobKey)).toEqual([234]);
      // Alice's own marker on her own prefix arrives after anything Bob's command could have sent her.
      await aliceMeter.publishAsync(`shellypro3em-${aliceKey}/marker`, 'm', { qos: 1 });
      await waitFor(() => aliceGot.some((m) => m.endsWith('/marker m')), 5000, "Alice's marker");
      expect(aliceGot.filter((m) => m.startsWith('cmnd/'))).toEqual([]);
      // What is retained on Alice's topics is still hers.
      const retained = await retainedOn(
        h.url,
        h.service,
        [`tele/${stock}/#`, `stat/${stock}/#`],
        (got) => got.size >= 2,
      );
      expect(Object.fromEntries(retained)).toEqual({
        [`tele/${stock}/LWT`]: 'Online',
        [`stat/${stock}/POWER`]: 'ON',
      });
    } finally {
      await aliceMeter.publishAsync(`tele/${stock}/LWT`, '', { qos: 1, retain: true }).catch(() => {});
      await aliceMeter.publishAsync(`stat/${stock}/POWER`, '', { qos: 1, retain: true }).catch(() => {});
      await aliceMeter.endAsync(true);
      await bobMeter.endAsync(true);
    }
  });

  it('Shelly suffix twins in two accounts keep to their own prefixes: no reading, writing, retaining or commanding the other', async () => {
    const h = await setUp();
    const [aliceKey, bobKey] = twins.shelly;
    const alice = await h.claim(aliceKey);
    expect(await h.claimElsewhere(bobKey, { stockTopics: true })).toEqual({ conflict: expect.any(String) });
    const bob = await h.claimElsewhere(bobKey, { stockTopics: false });
    if ('conflict' in bob) throw new Error(bob.conflict);
    const alicePrefix = `shellypro3em-${aliceKey}`;
    const bobPrefix = `shellypro3em-${bobKey}`;
    const aliceMeter = await connect(h.url, { clientId: alicePrefix, ...alice });
    const bobMeter = await connect(h.url, { clientId: bobPrefix, ...bob });
    const aliceGot: string[] = [];
    aliceMeter.on('message', (topic, payload) => aliceGot.push(`${topic} ${payload}`));
    try {
      const ts = Math.floor(Date.now() / 1000) - 120;
      const status = (v: number) =>
        JSON.stringify({
          method: 'NotifyStatus',
          params: { ts, 'em1:0': { id: 0, voltage: v, act_power: 1 } },
        });
      await aliceMeter.publishAsync(`${alicePrefix}/online`, 'true', { qos: 1, retain: true });
      expect(await granted(aliceMeter, `${alicePrefix}/rpc`)).toBe(1);
      for (const filter of [`${alicePrefix}/#`, `${alicePrefix}/rpc`, `${alicePrefix}/events/rpc`])
        expect([filter, await granted(bobMeter, filter)]).toEqual([filter, 128]);
      await bobMeter.publishAsync(`${alicePrefix}/online`, 'false', { qos: 1, retain: true });
      await bobMeter.publishAsync(`${alicePrefix}/rpc`, '{"id":1,"src":"x","method":"Switch.Set"}', {
        qos: 1,
      });
      await bobMeter.publishAsync(`${alicePrefix}/events/rpc`, status(150), { qos: 1 });
      await aliceMeter.publishAsync(`${alicePrefix}/events/rpc`, status(229), { qos: 1 });
      await bobMeter.publishAsync(`${bobPrefix}/events/rpc`, status(231), { qos: 1 });
      const values = async (key: string) =>
        (
          await h.store.readRaw({
            deviceKey: key,
            from: (ts - 3600) * 1000,
            to: (ts + 3600) * 1000,
            limit: 100,
          })
        ).items.map((r) => r.values.vave1);
      await waitFor(async () => (await values(aliceKey)).includes(229), 10_000, "Alice's reading");
      await waitFor(async () => (await values(bobKey)).includes(231), 10_000, "Bob's reading");
      expect(await values(aliceKey)).toEqual([229]);
      expect(await granted(aliceMeter, `${alicePrefix}/marker`)).toBe(1);
      await aliceMeter.publishAsync(`${alicePrefix}/marker`, 'm', { qos: 1 });
      await waitFor(() => aliceGot.some((m) => m.endsWith('/marker m')), 5000, "Alice's marker");
      expect(aliceGot.filter((m) => m.includes('/rpc '))).toEqual([]);
      const retained = await retainedOn(h.url, h.service, [`${alicePrefix}/online`], (got) => got.size >= 1);
      expect(Object.fromEntries(retained)).toEqual({ [`${alicePrefix}/online`]: 'true' });
    } finally {
      await aliceMeter.publishAsync(`${alicePrefix}/online`, '', { qos: 1, retain: true }).catch(() => {});
      await aliceMeter.endAsync(true);
      await bobMeter.endAsync(true);
    }
  });

  /** Alice's Tasmota suffix holder and Bob's Shelly in another account (its key as Topic), claimed. */
  const twoAccounts = async () => {
    const h = await setUp();
    const [aliceKey] = twins.tasmota;
    const [, bobKey] = twins.shelly;
    const alice = await h.claim(aliceKey);
    const bob = await h.claimElsewhere(bobKey, { stockTopics: false });
    if ('conflict' in bob) throw new Error(bob.conflict);
    return { h, aliceKey, bobKey, alice, bob };
  };

  if (opts.foreignClientId === 'username')
    it("an account connecting under another meter's client id gets its own: the meter stays connected, its session stays its own", async () => {
      const { h, aliceKey, bobKey, alice, bob } = await twoAccounts();
      const aliceId = `DVES_${aliceKey.slice(6).toUpperCase()}`;
      const aliceMeter = await connect(h.url, { clientId: aliceId, clean: false, ...alice });
      let aliceClosed = false;
      aliceMeter.on('close', () => {
        aliceClosed = true;
      });
      const aliceGot: string[] = [];
      aliceMeter.on('message', (topic) => aliceGot.push(topic));
      expect(await granted(aliceMeter, `shellypro3em-${aliceKey}/#`)).toBe(1);
      const takers: MqttClient[] = [];
      const bobGot: string[] = [];
      try {
        // Her stock Tasmota id and her Shelly id, with a persistent session asked for: Bob is let in under
        // his own id, which each of his connections shares (the second replaces the first).
        for (const id of [aliceId, `shellypro3em-${aliceKey}`]) {
          const taker = await connect(h.url, { clientId: id, clean: false, ...bob });
          taker.on('message', (topic) => bobGot.push(topic));
          takers.push(taker);
        }
        const taker = takers[1]!;
        expect(await granted(taker, `shellypro3em-${aliceKey}/#`)).toBe(128);
        expect(await granted(taker, `shellypro3em-${bobKey}/#`)).toBe(1);
        // Alice is still connected: her own message comes back to her, and to her alone.
        await aliceMeter.publishAsync(`shellypro3em-${aliceKey}/still`, 'here', { qos: 1 });
        await waitFor(() => aliceGot.includes(`shellypro3em-${aliceKey}/still`), 5000, "Alice's message");
        await taker.publishAsync(`shellypro3em-${bobKey}/marker`, '1', { qos: 1 });
        await waitFor(
          () => bobGot.includes(`shellypro3em-${bobKey}/marker`),
          5000,
          "the marker on Bob's topic",
        );
        expect(bobGot).toEqual([`shellypro3em-${bobKey}/marker`]);
        expect(aliceClosed).toBe(false);
        expect(aliceMeter.connected).toBe(true);
      } finally {
        for (const taker of takers) await taker.endAsync(true);
        await aliceMeter.endAsync(true);
        await (await connect(h.url, { clientId: aliceId, clean: true, ...alice })).endAsync();
      }
    });

  if (opts.foreignClientId === 'refused')
    it("refuses another account's client ids, so no meter takes over or shares another's session", async () => {
      const { h, aliceKey, alice, bob } = await twoAccounts();
      const aliceId = `DVES_${aliceKey.slice(6).toUpperCase()}`;
      const aliceMeter = await connect(h.url, { clientId: aliceId, ...alice });
      let aliceClosed = false;
      aliceMeter.on('close', () => {
        aliceClosed = true;
      });
      const aliceGot: string[] = [];
      aliceMeter.on('message', (topic) => aliceGot.push(topic));
      try {
        // Her stock id, her Shelly id and a custom id she is connected or has a session with.
        expect(await tryConnect(h.url, { clientId: aliceId, ...bob })).toBeInstanceOf(Error);
        expect(await tryConnect(h.url, { clientId: `shellypro3em-${aliceKey}`, ...bob })).toBeInstanceOf(
          Error,
        );
        const custom = clientId('alice-session');
        const persistent = await connect(h.url, { clientId: custom, clean: false, ...alice });
        expect(await granted(persistent, `cmnd/${aliceKey}/#`)).toBe(1);
        await persistent.endAsync();
        const taker = await tryConnect(h.url, { clientId: custom, clean: false, ...bob });
        expect(taker).toBeInstanceOf(Error);
        // Alice is still connected: her own message comes back to her.
        expect(await granted(aliceMeter, `shellypro3em-${aliceKey}/#`)).toBe(1);
        await aliceMeter.publishAsync(`shellypro3em-${aliceKey}/still`, 'here', { qos: 1 });
        await waitFor(() => aliceGot.includes(`shellypro3em-${aliceKey}/still`), 5000, "Alice's message");
        expect(aliceClosed).toBe(false);
        // Her own session is hers to resume.
        const resumed = await connect(h.url, { clientId: custom, clean: false, ...alice });
        expect(resumed.connected).toBe(true);
        await resumed.endAsync();
        await (await connect(h.url, { clientId: custom, clean: true, ...alice })).endAsync();
      } finally {
        await aliceMeter.endAsync(true);
      }
    });

  it('a valid meter still connects after many failed logins from the same address', async () => {
    const h = await setUp();
    const a = await h.claim(keys.a);
    // More than the embedded broker's 120 a minute, all failing, all from this address.
    for (let i = 0; i < 130; i++) {
      const wrong = await tryConnect(h.url, {
        clientId: clientId('flood'),
        username: 'kw-flood-nobody',
        password: 'wrong',
      });
      expect(wrong).toBeInstanceOf(Error);
    }
    const meter = await connect(h.url, { clientId: clientId('after-flood'), ...a });
    expect(meter.connected).toBe(true);
    await meter.endAsync();
  });
}
