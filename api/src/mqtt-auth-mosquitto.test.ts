/**
 * Meters' MQTT accounts end to end on a real Mosquitto with its dynamic security plugin (server
 * deployment): the API claims, rotates and deletes devices and keeps the broker's accounts in step over
 * `$CONTROL/dynamic-security/v1`; ingest subscribes with the services' account; the broker alone decides
 * who may connect, publish and subscribe. Also: a device claimed while the broker is away keeps its claim
 * and gets its account once the broker is back; the reconcile gives devices without an account one (to be
 * rotated) and removes accounts whose device is gone.
 */
import { readFileSync } from 'node:fs';
import { type IngestRuntime, startIngest } from '@kilowatch/ingest';
import { type MeterAccessHarness, meterAccessSuite, tryConnect } from '@kilowatch/ingest/conformance';
import {
  findDynsecPlugin,
  findServerBinary,
  freePort,
  type MosquittoServer,
  sleep,
  startMosquitto,
  until,
} from '@kilowatch/testkit';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrokerLogWatch, watchBrokerLog, withBrokerLog } from './broker-log.ts';
import { type ManagedMeterAccess, meterRole, startManagedBroker, UNKNOWN_PASSWORD } from './dynsec.ts';
import { connectDynsec } from './dynsec-control.ts';
import { claimFor } from './mqtt-auth-harness.ts';
import { type Account, as, buildTestApp, duckDbStore, signUp, type TestApp } from './testing/helper.ts';

const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
const plugin = mosquittoBin ? findDynsecPlugin() : null;
if (mosquittoBin && !plugin)
  console.warn('mosquitto_dynamic_security.so is missing: skipping the dynsec suite');

const DEPLOYED_LIMITS = readFileSync(new URL('../../deploy/mosquitto.conf', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) =>
    /^(max_packet_size|max_queued_messages|max_queued_bytes|persistent_client_expiration|max_inflight_messages|max_keepalive) /.test(
      l,
    ),
  );

/** The settings of deploy/mosquitto.conf's meters' listener (`listener 1883` and the lines below it). */
const METERS_LISTENER = (() => {
  const lines = readFileSync(new URL('../../deploy/mosquitto.conf', import.meta.url), 'utf8').split('\n');
  const start = lines.indexOf('listener 1883');
  if (start < 0) throw new Error('deploy/mosquitto.conf has no "listener 1883" line');
  const block: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line === '' || line.startsWith('#') || line.startsWith('listener ')) break;
    block.push(line);
  }
  return block;
})();

const ADMIN = { username: 'kw-admin', password: 'admin-secret' };
const SERVICE = { username: 'kilowatch-test-services', password: 'service-secret' };
const quiet = { info() {}, warn() {}, error() {} };
const macOf = (key: string) => key.match(/../g)!.join(':');

describe.skipIf(!plugin)('meter accounts through the API and Mosquitto with dynamic security', () => {
  let broker: MosquittoServer;
  /** The meters' listener, as deploy/mosquitto.conf ships it; the services connect to `broker.url`. */
  let metersUrl: string;
  let t: TestApp;
  let store: TelemetryStore;
  let access: ManagedMeterAccess;
  let brokerLog: BrokerLogWatch;
  let runtime: IngestRuntime;
  let owner: Account;
  /** A second account: suffix twins of the owner's meters. */
  let other: Account;
  const otherIds = new Map<string, number>();
  const ids = new Map<string, number>();

  beforeAll(async () => {
    const metersPort = await freePort();
    broker = await startMosquitto(mosquittoBin as string, {
      dynsec: { plugin: plugin as string, admin: ADMIN },
      logTopic: true,
      // The limits deploy/mosquitto.conf ships, and its meters' listener beside the services' one.
      extraConfig: [...DEPLOYED_LIMITS, `listener ${metersPort} 127.0.0.1`, ...METERS_LISTENER],
    });
    metersUrl = `mqtt://127.0.0.1:${metersPort}`;
    store = await duckDbStore();
    let app: TestApp | undefined;
    access = await startManagedBroker({
      mqttUrl: broker.url,
      admin: ADMIN,
      service: SERVICE,
      deviceKeys: () => app?.app.devices.deviceKeys(),
      withoutStockTopics: () => app?.app.devices.keysWithoutStockSuffix(),
      retryMs: 200,
      reconcileMs: 0,
    });
    brokerLog = watchBrokerLog({ mqttUrl: broker.url, ...SERVICE });
    await brokerLog.ready();
    t = await buildTestApp('pglite', { store, meterAccess: withBrokerLog(access, brokerLog) });
    app = t;
    runtime = await startIngest({
      store,
      mqttUrl: broker.url,
      mqttUsername: SERVICE.username,
      mqttPassword: SERVICE.password,
      clientId: 'kw-dynsec-ingest',
      // As the ingest replicas subscribe: through the shared group the services' role opens.
      shared: true,
      sessionExpirySeconds: 60,
      rollupIntervalMs: 0,
      // As beside api replicas: readings and refusals reach them over the broker.
      publishLive: true,
      logger: quiet,
      // As api/src/main.ts resolves it: the one device that holds the suffix.
      tasmotaDevice: async (suffix) => {
        const { rows } = await t.sql.query<{ device_key: string }>(
          'select device_key from devices where stock_suffix = $1',
          [suffix.toUpperCase()],
        );
        return rows[0]?.device_key ?? null;
      },
    });
    owner = await signUp(t.app);
    other = await signUp(t.app);
  }, 60_000);
  afterAll(async () => {
    await runtime?.stop();
    await brokerLog?.stop();
    await access?.stop();
    await t?.close();
    await store?.close();
    await broker?.stop();
  });

  const claim = async (key: string) => {
    const res = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: macOf(key), name: 'Meter', typeCode: 1 },
    });
    expect(res.statusCode).toBe(201);
    ids.set(key, res.json().id);
    return { username: res.json().mqtt.username as string, password: res.json().mqtt.password as string };
  };
  const rotate = async (key: string) => {
    const res = await as(t.app, owner, {
      method: 'POST',
      url: `/api/devices/${ids.get(key)}/mqtt-credentials`,
    });
    expect(res.statusCode).toBe(200);
    return res.json() as { username: string; password: string };
  };
  const connection = async (key: string) =>
    (await as(t.app, owner, { method: 'GET', url: `/api/devices/${ids.get(key)}/connection` })).json();

  meterAccessSuite(
    async (): Promise<MeterAccessHarness> => ({
      url: metersUrl,
      store,
      service: SERVICE,
      async claim(key) {
        // Claimed by an earlier case: a fresh password stands for a fresh claim.
        return ids.has(key) ? rotate(key) : claim(key);
      },
      rotate,
      async remove(key) {
        const res = await as(t.app, owner, { method: 'DELETE', url: `/api/devices/${ids.get(key)}` });
        expect(res.statusCode).toBe(204);
        ids.delete(key);
      },
      // Mosquitto drops a refused publish without counting it for us.
      refusedCount: () => 0,
      claimElsewhere: (key, { stockTopics }) => claimFor(t, other, otherIds, key, stockTopics),
    }),
    { a: '6a0000000001', b: '6a0000000002', c: '6a0000000003', d: '6a0000000004' },
    { tasmota: ['6a1100a1b2c3', '6a2200a1b2c3'], shelly: ['6a1100d4e5f6', '6a2200d4e5f6'] },
    { foreignClientId: 'username' },
  );

  it('reports the account on the connection route once the broker has it', async () => {
    const key = '6a00000000a1';
    await claim(key);
    expect(await connection(key)).toMatchObject({ connected: false, account: { state: 'ok' } });
  });

  it("reports the meter's connection from the broker's log, and ingest's refusal of its payload", async () => {
    const key = '6a00000000d1';
    const creds = await claim(key);
    const meter = await tryConnect(metersUrl, { clientId: 'kw-seen-meter', ...creds });
    expect(meter).not.toBeInstanceOf(Error);
    try {
      await until(async () => (await connection(key)).connected === true, 10_000, 'the connection', 50);
      expect((await connection(key)).lastConnectedAt).toEqual(expect.any(Number));
      await (meter as MqttClient).publishAsync(`kilowatch/meters/${key}/readings`, '{not json', { qos: 1 });
      await until(
        async () => (await connection(key)).lastRejection?.reason === 'payload-rejected',
        10_000,
        'the payload refusal',
        50,
      );
      expect((await connection(key)).lastRejection).toMatchObject({
        reason: 'payload-rejected',
        topic: `kilowatch/meters/${key}/readings`,
        detail: expect.any(String),
      });
    } finally {
      await (meter as MqttClient).endAsync();
    }
    await until(async () => (await connection(key)).connected === false, 10_000, 'the disconnection', 50);
  });

  it("another account connecting with a meter's stock client id leaves the meter connected, and its connection state says so", async () => {
    const key = '6a00000000d5';
    const creds = await claim(key);
    const stockId = `DVES_${key.slice(6).toUpperCase()}`;
    const meter = (await tryConnect(metersUrl, { clientId: stockId, ...creds })) as MqttClient;
    let closed = false;
    meter.on('close', () => {
      closed = true;
    });
    await until(async () => (await connection(key)).connected === true, 10_000, 'the connection', 50);
    const taker = await claimFor(t, other, otherIds, '6a00000000d6', true);
    if ('conflict' in taker) throw new Error(taker.conflict);
    const bob = (await tryConnect(metersUrl, { clientId: stockId, clean: false, ...taker })) as MqttClient;
    expect(bob.connected).toBe(true);
    try {
      // The taker's connection and disconnection are logged under his account's name, not the meter's.
      await bob.endAsync();
      await sleep(500);
      expect(closed).toBe(false);
      expect(meter.connected).toBe(true);
      expect((await connection(key)).connected).toBe(true);
    } finally {
      await meter.endAsync();
    }
    await until(async () => (await connection(key)).connected === false, 10_000, 'the disconnection', 50);
  });

  it("the broker's log topic carries lines per connection, none per reading", async () => {
    const key = '6a00000000d2';
    const creds = await claim(key);
    const service = await tryConnect(broker.url, { clientId: 'kw-log-reader', ...SERVICE });
    expect(service).not.toBeInstanceOf(Error);
    const lines: string[] = [];
    (service as MqttClient).on('message', (topic, payload) => lines.push(`${topic} ${payload}`));
    await (service as MqttClient).subscribeAsync('$SYS/broker/log/#', { qos: 0 });
    const meter = (await tryConnect(metersUrl, { clientId: 'kw-log-meter', ...creds })) as MqttClient;
    const ts = Math.floor(Date.now() / 1000) * 1000 - 600_000;
    for (let i = 0; i < 200; i++)
      await meter.publishAsync(
        `kilowatch/meters/${key}/readings`,
        JSON.stringify({ ts: ts + i * 1000, values: { vave1: 230 } }),
        { qos: 1 },
      );
    await meter.endAsync();
    // The meters' listener names the connection by its account, not by the id the meter sent.
    await until(() => lines.some((l) => l.includes(`Client ${key} disconnected`)), 10_000, 'the log', 50);
    expect(lines.some((l) => l.includes('kw-log-meter'))).toBe(false);
    const meterLines = lines.filter((l) => l.includes(key));
    expect(meterLines).toEqual([
      expect.stringMatching(
        /^\$SYS\/broker\/log\/N .*New client connected from .* as 6a00000000d2 .*u'6a00000000d2'/,
      ),
      expect.stringMatching(/^\$SYS\/broker\/log\/N .*Client 6a00000000d2 disconnected\.$/),
    ]);
    // A "New connection from" line per connection besides; nothing for the 200 readings.
    expect(lines.length).toBeLessThan(10);
    await (service as MqttClient).endAsync();
  });

  it('a login refused for a bad password is put on the meter when the broker names its client, and counted otherwise', async () => {
    const key = '6a00000000e1';
    const old = await claim(key);
    // The meter worked once under this client id, then its owner rotated the password.
    const meter = await tryConnect(metersUrl, { clientId: `DVES_${key.slice(6).toUpperCase()}`, ...old });
    expect(meter).not.toBeInstanceOf(Error);
    await until(async () => (await connection(key)).connected === true, 10_000, 'the connection', 50);
    await (meter as MqttClient).endAsync();
    await rotate(key);
    const before = brokerLog.unattributedRefusals();
    expect(
      await tryConnect(metersUrl, { clientId: `DVES_${key.slice(6).toUpperCase()}`, ...old }),
    ).toBeInstanceOf(Error);
    // Mosquitto 2.0.11 writes `Client <unknown> disconnected, not authorised.`: nothing to put it on.
    // Later releases name the client, and the route says why.
    await until(
      async () =>
        brokerLog.unattributedRefusals() === before + 1 ||
        (await connection(key)).lastRejection?.reason === 'bad-password',
      10_000,
      'the refused login in the broker log',
      50,
    );
    const refusal = (await connection(key)).lastRejection;
    if (brokerLog.unattributedRefusals() === before)
      expect(refusal).toMatchObject({ reason: 'bad-password' });
    else expect(refusal).toBeUndefined();
  });

  it("closes a meter's connection announcing a 100 MB publish before reading it (deploy/mosquitto.conf's max_packet_size); nothing is stored", async () => {
    expect(DEPLOYED_LIMITS).toContain('max_packet_size 524288');
    const key = '6a00000000f1';
    const creds = await claim(key);
    const meter = (await tryConnect(metersUrl, { clientId: 'kw-big', ...creds })) as MqttClient;
    const socket = (meter as unknown as { stream: import('node:net').Socket }).stream;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // PUBLISH, QoS 0, announcing 100 MB (remaining length as MQTT's variable-length integer), then 1 MB
    // at a time, on the meter's own topic.
    const size = 100 * 1024 * 1024;
    const length: number[] = [];
    for (let x = size; ; ) {
      const byte = x % 128;
      x = Math.floor(x / 128);
      length.push(x > 0 ? byte | 128 : byte);
      if (x === 0) break;
    }
    const topic = Buffer.from(`kilowatch/meters/${key}/readings`);
    let sent = 0;
    let open = true;
    void closed.then(() => {
      open = false;
    });
    socket.write(Buffer.from([0x30, ...length, topic.length >> 8, topic.length & 255, ...topic]));
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    while (open && sent < size) {
      socket.write(chunk);
      sent += chunk.length;
      await sleep(5);
    }
    await closed;
    await meter.endAsync(true);
    expect(sent).toBeLessThan(size);
    expect(await store.latest(key)).toBeNull();
  }, 60_000);

  it('a claim and a rotation while the broker is away stand; the account follows once it is back', async () => {
    const key = '6a00000000b1';
    const before = await claim(key);
    await broker.restart();
    // The broker is back at once here; stop it and answer claims meanwhile.
    await broker.halt();
    try {
      const res = await as(t.app, owner, {
        method: 'POST',
        url: `/api/devices/${ids.get(key)}/mqtt-credentials`,
      });
      expect(res.statusCode).toBe(200);
      const fresh = res.json() as { username: string; password: string };
      expect(fresh.password).not.toBe(before.password);
      const late = '6a00000000b2';
      const lateCreds = await claim(late);
      expect((await connection(late)).account).toMatchObject({ state: 'pending' });
      expect(access.pending()).toBe(2);
      await broker.start();
      await until(() => access.pending() === 0, 20_000, 'the changes to reach the broker', 50);
      expect((await connection(late)).account).toEqual({ state: 'ok' });
      const meter = await tryConnect(metersUrl, { clientId: 'kw-late', ...lateCreds });
      expect(meter).not.toBeInstanceOf(Error);
      await (meter as MqttClient).endAsync();
      expect(await tryConnect(metersUrl, { clientId: 'kw-late-old', ...before })).toBeInstanceOf(Error);
      const rotated = await tryConnect(metersUrl, { clientId: 'kw-late-new', ...fresh });
      expect(rotated).not.toBeInstanceOf(Error);
      await (rotated as MqttClient).endAsync();
    } finally {
      if (!broker.running()) await broker.start();
    }
  }, 60_000);

  it('the reconcile takes a stock Tasmota topic out of the role of a device that does not hold the suffix', async () => {
    await access.synced();
    const [holder, twin] = ['6a3300c0ffee', '6a4400c0ffee'];
    await claim(holder);
    const creds = await claimFor(t, other, otherIds, twin, false);
    if ('conflict' in creds) throw new Error(creds.conflict);
    const stock = 'tele/tasmota_C0FFEE/#';
    const control = connectDynsec({ mqttUrl: broker.url, ...ADMIN });
    try {
      await until(() => control.connected(), 10_000, 'the admin connection', 50);
      // As a twin's role kept from before the suffix belonged to one device.
      await control.run('addRoleACL', {
        rolename: meterRole(twin),
        acltype: 'publishClientSend',
        topic: stock,
        allow: true,
        priority: 0,
      });
      const topics = async (key: string) => {
        const role = (await control.run('getRole', { rolename: meterRole(key) })).data?.role as
          | { acls?: { topic: string }[] }
          | undefined;
        return (role?.acls ?? []).map((a) => a.topic);
      };
      expect(await topics(twin)).toContain(stock);
      await access.reconcile();
      expect(await topics(twin)).not.toContain(stock);
      expect(await topics(twin)).toContain(`tele/${twin}/#`);
      expect(await topics(holder)).toContain(stock);
    } finally {
      await control.stop();
    }
  });

  it('the reconcile gives a device without an account one to rotate, and removes accounts whose device is gone', async () => {
    // The admin connection's reconnect after the last test's broker restart reconciles on its own; it is
    // over before this test changes the broker's accounts behind the API's back.
    await access.synced();
    // A device claimed before accounts existed: in the database, not on the broker.
    const old = '6a00000000c1';
    await claim(old);
    const control = connectDynsec({ mqttUrl: broker.url, ...ADMIN });
    try {
      await until(() => control.connected(), 10_000, 'the admin connection', 50);
      await control.run('deleteClient', { username: old });
      // An account whose device no longer exists, and one that is not a meter's (left alone).
      await control.run('createClient', { username: '6a00000000c2', password: 'orphan-password' });
      await control.run('createClient', { username: 'someone-else', password: 'x' });
      expect((await connection(old)).account).toMatchObject({ state: 'pending' });

      const result = await access.reconcile();
      expect(result.created).toContain(old);
      expect(result.removed).toEqual(['6a00000000c2']);
      expect((await control.run('getClient', { username: old })).data?.client).toMatchObject({
        textname: UNKNOWN_PASSWORD,
        roles: [{ rolename: meterRole(old) }],
      });
      await expect(control.run('getClient', { username: '6a00000000c2' })).rejects.toThrow(/not found/i);
      expect((await control.run('getClient', { username: 'someone-else' })).data?.client).toBeTruthy();
      expect((await connection(old)).account).toMatchObject({ state: 'rotate' });
      expect(
        await tryConnect(metersUrl, {
          clientId: 'kw-orphan',
          username: '6a00000000c2',
          password: 'orphan-password',
        }),
      ).toBeInstanceOf(Error);

      // The owner rotates: the new password works and the account is in step.
      const fresh = await rotate(old);
      expect((await connection(old)).account).toEqual({ state: 'ok' });
      const meter = await tryConnect(metersUrl, { clientId: 'kw-reconciled', ...fresh });
      expect(meter).not.toBeInstanceOf(Error);
      await (meter as MqttClient).endAsync();
      // Nothing left to do.
      expect(await access.reconcile()).toEqual({ created: [], removed: [] });
    } finally {
      await control.stop();
    }
  });
});
