/**
 * Meters' MQTT accounts end to end in the embedded deployment: claimed, rotated and deleted through the
 * API, stored hashed in the metadata database, checked by the embedded broker, readings stored by ingest.
 */
import { type EmbeddedBroker, type IngestRuntime, startEmbeddedBroker, startIngest } from '@kilowatch/ingest';
import { type MeterAccessHarness, meterAccessSuite, tryConnect } from '@kilowatch/ingest/conformance';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseMeterAuth } from './mqtt-auth.ts';
import { claimFor } from './mqtt-auth-harness.ts';
import { type EmbeddedMeterParts, embeddedMeterAccess } from './plugins/app/meter-access.ts';
import {
  type Account,
  as,
  buildTestApp,
  duckDbStore,
  engines,
  signUp,
  type TestApp,
} from './testing/helper.ts';

const SERVICE = { username: 'kilowatch-test-api', password: 'service-secret' };
const quiet = { info() {}, warn() {}, error() {} };
const macOf = (key: string) => key.match(/../g)!.join(':');

describe.each(engines())('meter accounts through the API and the embedded broker on %s', (engine) => {
  let t: TestApp;
  let store: TelemetryStore;
  let broker: EmbeddedBroker;
  let runtime: IngestRuntime;
  let owner: Account;
  /** A second account: suffix twins of the owner's meters. */
  let other: Account;
  const otherIds = new Map<string, number>();
  const parts: EmbeddedMeterParts = {};
  const ids = new Map<string, number>();

  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp(engine, {
      store,
      meterAccess: embeddedMeterAccess(parts),
      config: { mqttPublic: { port: 1883, tls: false } },
    });
    broker = await startEmbeddedBroker({
      port: 0,
      auth: databaseMeterAuth(() => t.app.devices),
      services: [SERVICE],
    });
    runtime = await startIngest({ store, broker, rollupIntervalMs: 0, logger: quiet, decodeThread: false });
    parts.broker = broker;
    parts.runtime = runtime;
    owner = await signUp(t.app);
    other = await signUp(t.app);
  });
  afterAll(async () => {
    await runtime?.stop();
    await broker?.close();
    await t?.close();
    await store?.close();
  });

  // Each engine claims its own MACs (PostgreSQL and PGlite share nothing, the store is per engine).
  const prefix = engine === 'pglite' ? '5a' : '5b';
  meterAccessSuite(
    async (): Promise<MeterAccessHarness> => ({
      url: broker.url,
      store,
      service: SERVICE,
      async claim(key) {
        const res = await as(t.app, owner, {
          method: 'POST',
          url: '/api/devices',
          payload: { mac: macOf(key), name: 'Meter', typeCode: 1 },
        });
        if (res.statusCode === 409) {
          // Claimed by an earlier case: a fresh password stands for a fresh claim.
          const rotated = await as(t.app, owner, {
            method: 'POST',
            url: `/api/devices/${ids.get(key)}/mqtt-credentials`,
          });
          return rotated.json();
        }
        expect(res.statusCode).toBe(201);
        ids.set(key, res.json().id);
        return { username: res.json().mqtt.username, password: res.json().mqtt.password };
      },
      async rotate(key) {
        const res = await as(t.app, owner, {
          method: 'POST',
          url: `/api/devices/${ids.get(key)}/mqtt-credentials`,
        });
        expect(res.statusCode).toBe(200);
        return res.json();
      },
      async remove(key) {
        const res = await as(t.app, owner, { method: 'DELETE', url: `/api/devices/${ids.get(key)}` });
        expect(res.statusCode).toBe(204);
        ids.delete(key);
      },
      refusedCount: () => Object.values(broker.refusals()).reduce((a, b) => a + b, 0),
      claimElsewhere: (key, { stockTopics }) => claimFor(t, other, otherIds, key, stockTopics),
    }),
    {
      a: `${prefix}0000000001`,
      b: `${prefix}0000000002`,
      c: `${prefix}0000000003`,
      d: `${prefix}0000000004`,
    },
    {
      tasmota: [`${prefix}1100a1b2c3`, `${prefix}2200a1b2c3`],
      shelly: [`${prefix}1100d4e5f6`, `${prefix}2200d4e5f6`],
    },
    { foreignClientId: 'refused' },
  );

  it('a device claimed before meters had accounts says so on its connection until its password is rotated', async () => {
    const key = `${prefix}00000000cc`;
    const res = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: macOf(key), name: 'Old meter', typeCode: 1 },
    });
    expect(res.statusCode).toBe(201);
    const { id, mqtt } = res.json();
    // As a device claimed before the accounts' migration: no username, no hash.
    await t.sql.query('update devices set mqtt_username = null, mqtt_password_hash = null where id = $1', [
      id,
    ]);
    const connection = async () =>
      (await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/connection` })).json();
    expect((await connection()).account).toMatchObject({ state: 'rotate' });
    expect(
      await tryConnect(broker.url, { clientId: 'kw-old-meter', username: key, password: mqtt.password }),
    ).toBeInstanceOf(Error);
    const rotated = await as(t.app, owner, { method: 'POST', url: `/api/devices/${id}/mqtt-credentials` });
    expect(rotated.statusCode).toBe(200);
    expect((await connection()).account).toBeUndefined();
    const meter = await tryConnect(broker.url, { clientId: 'kw-old-meter-2', ...rotated.json() });
    expect(meter).not.toBeInstanceOf(Error);
    await (meter as MqttClient).endAsync();
  });

  it('answers a claim with the MQTT account once, stores only its hash, and reports the connection', async () => {
    const key = `${prefix}00000000aa`;
    const res = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      headers: { host: 'kilowatch.example:8080' },
      payload: { mac: macOf(key), name: 'Pro 3EM', typeCode: 1, model: 'shellypro3em' },
    });
    expect(res.statusCode).toBe(201);
    const { mqtt, id } = res.json();
    expect(mqtt).toEqual({
      host: 'kilowatch.example',
      port: 1883,
      tls: false,
      username: key,
      password: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      topics: {
        native: `kilowatch/meters/${key}/readings`,
        tasmota: `tele/tasmota_${key.slice(6).toUpperCase()}/SENSOR`,
        shelly: `shellypro3em-${key}/events/rpc`,
      },
    });
    const stored = await t.sql.query<{ mqtt_password_hash: string }>(
      'select mqtt_password_hash from devices where id = $1',
      [id],
    );
    expect(stored.rows[0]!.mqtt_password_hash).toMatch(/^sha256\$/);
    expect(stored.rows[0]!.mqtt_password_hash).not.toContain(mqtt.password);
    // Shown once: the device's own answers never carry it again.
    const again = await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}` });
    expect(again.body).not.toContain(mqtt.password);

    const connection = async () =>
      (await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/connection` })).json();
    expect(await connection()).toEqual({ connected: false, lastConnectedAt: null, lastReadingAt: null });
    expect(
      await tryConnect(broker.url, { clientId: 'kw-conn-bad', username: key, password: 'wrong' }),
    ).toBeInstanceOf(Error);
    expect((await connection()).lastRejection).toMatchObject({ reason: 'bad-password' });

    const meter = (await tryConnect(broker.url, {
      clientId: 'kw-conn-good',
      username: key,
      password: mqtt.password,
    })) as MqttClient;
    await meter.publishAsync(`kilowatch/meters/${key}/readings`, '{not json', { qos: 1 });
    const afterBad = await connection();
    expect(afterBad).toMatchObject({
      connected: true,
      lastRejection: { reason: 'payload-rejected', topic: `kilowatch/meters/${key}/readings` },
    });
    expect(afterBad.lastConnectedAt).toEqual(expect.any(Number));
    const ts = Math.floor(Date.now() / 1000) * 1000 - 10_000;
    await meter.publishAsync(
      `kilowatch/meters/${key}/readings`,
      JSON.stringify({ ts, values: { vave1: 230 } }),
      { qos: 1 },
    );
    expect((await connection()).lastReadingAt).toBe(ts);
    await meter.publishAsync(`kilowatch/meters/${prefix}00000000bb/readings`, '{}', { qos: 1 });
    expect((await connection()).lastRejection).toMatchObject({ reason: 'topic-not-allowed' });
    await meter.endAsync();

    // Another user sees neither the connection nor a rotation.
    const stranger = await signUp(t.app);
    expect(
      (await as(t.app, stranger, { method: 'GET', url: `/api/devices/${id}/connection` })).statusCode,
    ).toBe(404);
    expect(
      (await as(t.app, stranger, { method: 'POST', url: `/api/devices/${id}/mqtt-credentials` })).statusCode,
    ).toBe(404);
  });
});
