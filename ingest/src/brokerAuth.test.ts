import { TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { startIngest } from './bridge.ts';
import {
  type BrokerLimits,
  checkMeterTopic,
  type EmbeddedBroker,
  type MeterTopicCache,
  startEmbeddedBroker,
} from './broker.ts';
import { type MeterAccessHarness, meterAccessSuite, tryConnect } from './conformance.ts';
import { createMemoryMeterAuth, StockSuffixTaken } from './meterAuth.ts';
import { DEMO_DEVICES } from './simulator/devices.ts';
import { startSimulator } from './simulator/live.ts';
import { waitFor } from './test/helpers.ts';

const quiet = { info() {}, warn() {}, error() {} };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!().catch(() => {});
});

async function embedded(limits: Partial<BrokerLimits> = {}, now?: () => number, sweepIntervalMs?: number) {
  const auth = createMemoryMeterAuth();
  const store = await createDuckDbStore();
  cleanups.push(() => store.close());
  const broker = await startEmbeddedBroker({
    port: 0,
    auth,
    services: [TEST_SERVICE],
    limits,
    ...(now ? { now } : {}),
    ...(sweepIntervalMs ? { sweepIntervalMs } : {}),
  });
  cleanups.push(() => broker.close());
  const runtime = await startIngest({
    store,
    broker,
    rollupIntervalMs: 0,
    logger: quiet,
    decodeThread: false,
  });
  cleanups.push(() => runtime.stop());
  return { auth, store, broker, runtime };
}

const refusedTotal = (broker: EmbeddedBroker) => Object.values(broker.refusals()).reduce((a, b) => a + b, 0);

describe('embedded broker: meter credentials and topic access', () => {
  meterAccessSuite(
    async (): Promise<MeterAccessHarness> => {
      const { auth, store, broker } = await embedded();
      return {
        url: broker.url,
        store,
        service: TEST_SERVICE,
        claim: async (key) => auth.issue(key),
        rotate: async (key) => {
          const creds = auth.issue(key);
          broker.disconnectDevice(key);
          return creds;
        },
        remove: async (key) => {
          auth.revoke(key);
          broker.disconnectDevice(key);
        },
        refusedCount: () => refusedTotal(broker),
        claimElsewhere: async (key, opts) => {
          try {
            return auth.issue(key, opts);
          } catch (e) {
            if (e instanceof StockSuffixTaken) return { conflict: e.message };
            throw e;
          }
        },
      };
    },
    { a: '0a0000000001', b: '0b0000000002', c: '0c0000000003', d: '0d0000000004' },
    { tasmota: ['1e0000a1b2c3', '2e0000a1b2c3'], shelly: ['1f0000d4e5f6', '2f0000d4e5f6'] },
    { foreignClientId: 'refused' },
  );

  it("records a device's connection and why the broker last refused it", async () => {
    let t = 1_000_000;
    const { auth, broker } = await embedded({}, () => t);
    const creds = auth.issue('0e0000000005');
    expect(broker.connection('0e0000000005')).toBeUndefined();
    expect(
      await tryConnect(broker.url, { clientId: 'kw-conn-1', username: creds.username, password: 'bad' }),
    ).toBeInstanceOf(Error);
    expect(broker.connection('0e0000000005')).toEqual({
      connected: false,
      lastConnectedAt: null,
      lastRejection: { reason: 'bad-password', at: 1_000_000 },
    });
    t = 2_000_000;
    const meter = (await tryConnect(broker.url, { clientId: 'kw-conn-2', ...creds })) as MqttClient;
    await waitFor(() => broker.connection('0e0000000005')?.connected === true, 5000, 'connected');
    t = 3_000_000;
    await meter.publishAsync('kilowatch/meters/0f0000000006/readings', '{}', { qos: 1 });
    expect(broker.connection('0e0000000005')).toEqual({
      connected: true,
      lastConnectedAt: 2_000_000,
      lastRejection: {
        reason: 'topic-not-allowed',
        topic: 'kilowatch/meters/0f0000000006/readings',
        at: 3_000_000,
      },
    });
    expect(broker.refusals()).toEqual({ 'bad-password': 1, 'publish-other-device': 1 });
    expect(broker.metricsText()).toContain('kilowatch_mqtt_refused_total{reason="publish-other-device"} 1');
    await meter.endAsync();
    await waitFor(() => broker.connection('0e0000000005')?.connected === false, 5000, 'disconnected');
  });
});

describe('embedded broker limits', () => {
  it('closes a connection announcing a 100 MB publish before reading it; nothing is stored', async () => {
    const { auth, broker, store } = await embedded();
    const creds = auth.issue('1a0000000001');
    const meter = (await tryConnect(broker.url, { clientId: 'kw-big', ...creds })) as MqttClient;
    const socket = (meter as unknown as { stream: import('node:net').Socket }).stream;
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // PUBLISH, QoS 1, announcing 100 MB (remaining length as MQTT's variable-length integer), then 1 MB at a time.
    const size = 100 * 1024 * 1024;
    const length: number[] = [];
    for (let x = size; ; ) {
      const byte = x % 128;
      x = Math.floor(x / 128);
      length.push(x > 0 ? byte | 128 : byte);
      if (x === 0) break;
    }
    let sent = 0;
    let open = true;
    void closed.then(() => {
      open = false;
    });
    socket.write(Buffer.from([0x32, ...length]));
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    while (open && sent < size) {
      socket.write(chunk);
      sent += chunk.length;
      await new Promise((r) => setTimeout(r, 5));
    }
    await closed;
    await meter.endAsync(true);
    // The broker closed the connection long before the packet was through: it never gathered it.
    expect(sent).toBeLessThan(size);
    expect(broker.refusals()['packet-too-large']).toBe(1);
    expect(await store.latest('1a0000000001')).toBeNull();
  }, 30_000);

  it("bounds a ghost session's offline queue and forgets it once the session expires", async () => {
    let t = 0;
    const { auth, broker } = await embedded(
      { maxQueuedPerClient: 100, sessionExpiryMs: 60_000 },
      () => t,
      50,
    );
    const ghosts: string[] = [];
    for (let i = 0; i < 5; i++) {
      const key = `2a000000000${i}`;
      const creds = auth.issue(key);
      const ghost = (await tryConnect(broker.url, {
        clientId: `kw-ghost-${i}`,
        clean: false,
        ...creds,
      })) as MqttClient;
      await ghost.subscribeAsync(`cmnd/${key}/#`, { qos: 1 });
      await ghost.endAsync();
      ghosts.push(key);
    }
    const service = await mqtt.connectAsync(broker.url, { clientId: 'kw-ghost-feeder', ...TEST_SERVICE });
    for (let m = 0; m < 400; m++)
      for (const key of ghosts) await service.publishAsync(`cmnd/${key}/Power`, `${m}`, { qos: 1 });
    await service.endAsync();
    expect(broker.sessions()).toMatchObject({ clients: 5, queued: 500 });
    expect(broker.sessions().dropped).toBe(5 * 300);
    t = 61_000;
    await waitFor(() => broker.sessions().queued === 0, 10_000, 'the sessions to expire');
    expect(broker.sessions().clients).toBe(0);
    // Back after expiry, the meter's session is gone.
    const back = mqtt.connect(broker.url, {
      clientId: 'kw-ghost-0',
      clean: false,
      ...auth.issue(ghosts[0]!),
    });
    const redelivered: string[] = [];
    back.on('message', (_t, p) => redelivered.push(String(p)));
    await waitFor(() => back.connected, 5000, 'reconnect');
    await new Promise((r) => setTimeout(r, 200));
    await back.endAsync();
    expect(redelivered).toEqual([]);
  }, 60_000);

  it('caps the retained topics one meter holds', async () => {
    const { auth, broker } = await embedded({ maxRetainedPerClient: 3 });
    const key = '3a0000000001';
    const meter = (await tryConnect(broker.url, { clientId: 'kw-retain', ...auth.issue(key) })) as MqttClient;
    const tasmota = `tasmota_${key.slice(6).toUpperCase()}`;
    for (let i = 0; i < 10; i++)
      await meter.publishAsync(`tele/${tasmota}/X${i}`, 'v', { qos: 1, retain: true });
    await meter.endAsync();
    const service = await mqtt.connectAsync(broker.url, { clientId: 'kw-retain-reader', ...TEST_SERVICE });
    const retained: string[] = [];
    service.on('message', (topic, _p, packet) => {
      if (packet.retain) retained.push(topic);
    });
    await service.subscribeAsync('tele/#', { qos: 1 });
    await new Promise((r) => setTimeout(r, 300));
    await service.endAsync();
    expect(retained.sort()).toEqual([`tele/${tasmota}/X0`, `tele/${tasmota}/X1`, `tele/${tasmota}/X2`]);
    expect(broker.refusals()['retained-cap']).toBe(7);
  });

  it('limits failed logins per address and username, never the good ones', async () => {
    const { auth, broker } = await embedded({ connectionsPerMinutePerIp: 5 });
    const meter = auth.issue('0e00000000f1');
    const results: boolean[] = [];
    for (let i = 0; i < 8; i++) {
      const c = await tryConnect(broker.url, { clientId: `kw-rate-${i}`, ...meter, password: 'wrong' });
      results.push(c instanceof Error && !/unavailable/i.test(c.message));
    }
    // Five refused as wrong, then refused unchecked.
    expect(results).toEqual([true, true, true, true, true, false, false, false]);
    expect(broker.refusals()['rate-limited']).toBe(3);
    // Good logins from the same address are not counted: the services and other meters connect.
    const other = auth.issue('0e00000000f2');
    for (let i = 0; i < 8; i++) {
      const c = await tryConnect(broker.url, {
        clientId: `kw-rate-good-${i}`,
        ...(i % 2 ? other : TEST_SERVICE),
      });
      expect(c).not.toBeInstanceOf(Error);
      await (c as MqttClient).endAsync();
    }
    expect(broker.refusals()['rate-limited']).toBe(3);
  });
});

describe('the demo simulator on the embedded broker', () => {
  it('reconnects with the new password after a rotation, and stops once its device is deleted', async () => {
    const { auth, broker, runtime } = await embedded();
    const device = DEMO_DEVICES[0]!;
    const credentials = new Map([[device.deviceKey, auth.issue(device.deviceKey)]]);
    const simulator = await startSimulator({
      mqttUrl: broker.url,
      devices: [device],
      intervalMs: 100,
      credentialsOf: (d) => credentials.get(d.deviceKey),
    });
    cleanups.push(() => simulator.stop());
    const readings = () => runtime.deviceState(device.deviceKey)?.lastSeen ?? 0;
    await waitFor(() => readings() > 0, 10_000, 'the first simulated reading');

    // Rotated (as the API does for a demo meter): the new password is the simulator's before the old
    // connection is closed.
    const before = readings();
    credentials.set(device.deviceKey, auth.issue(device.deviceKey));
    broker.disconnectDevice(device.deviceKey);
    await waitFor(() => broker.connection(device.deviceKey)?.connected === true, 10_000, 'the reconnect');
    await waitFor(() => readings() > before, 10_000, 'readings after the rotation');
    expect(broker.connection(device.deviceKey)?.lastRejection).toBeUndefined();

    // Deleted: no account, the simulated meter stops instead of knocking every second.
    credentials.delete(device.deviceKey);
    auth.revoke(device.deviceKey);
    broker.disconnectDevice(device.deviceKey);
    await waitFor(() => broker.connection(device.deviceKey)?.connected === false, 10_000, 'the disconnect');
    await new Promise((r) => setTimeout(r, 1500));
    expect(broker.connection(device.deviceKey)?.connected).toBe(false);
    expect(broker.connection(device.deviceKey)?.lastRejection).toBeUndefined();
  });
});

describe("a meter connection's topic verdicts", () => {
  it('are the check and rewrite of the topic, kept for at most 16 topics per connection', () => {
    const key = 'aabbccddeeff';
    const cache: MeterTopicCache = new Map();
    const tasmota = 'tele/tasmota_DDEEFF/SENSOR';
    expect(checkMeterTopic(cache, key, tasmota)).toEqual({ refusal: null, topic: `tele/${key}/SENSOR` });
    expect(checkMeterTopic(cache, key, tasmota)).toBe(cache.get(tasmota));
    const forged = 'kilowatch/meters/112233445566/readings';
    expect(checkMeterTopic(cache, key, forged)).toEqual({ refusal: 'other-device', topic: forged });
    expect(checkMeterTopic(cache, key, forged).refusal).toBe('other-device');
    for (let i = 0; i < 40; i++) checkMeterTopic(cache, key, `kilowatch/meters/${key}/x${i}`);
    expect(cache.size).toBe(16);
    // Past the bound, a topic is still checked, only not kept.
    expect(checkMeterTopic(cache, key, 'kilowatch/live/aabbccddeeff').refusal).toBe('not-allowed');
  });
});
