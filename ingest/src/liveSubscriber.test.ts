import type { Reading } from '@kilowatch/core';
import { TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore } from '@kilowatch/tsdb';
import mqtt from 'mqtt';
import { expect, it } from 'vitest';
import { startIngest } from './bridge.ts';
import { startEmbeddedBroker } from './broker.ts';
import type { DeviceState } from './liveBus.ts';
import { startLiveSubscriber } from './liveSubscriber.ts';
import { waitFor } from './test/helpers.ts';

it('an api replica sees committed readings published live by ingest, and device status', async () => {
  const broker = await startEmbeddedBroker({ port: 0, services: [TEST_SERVICE] });
  const store = await createDuckDbStore();
  const ingest = await startIngest({
    store,
    mqttUrl: broker.url,
    clientId: 'kw-live-ingest',
    mqttUsername: TEST_SERVICE.username,
    mqttPassword: TEST_SERVICE.password,
    publishLive: true,
    rollupIntervalMs: 0,
  });
  const replica = await startLiveSubscriber({ mqttUrl: broker.url, ...TEST_SERVICE });
  const meter = await mqtt.connectAsync(broker.url, { clientId: 'kw-live-meter', ...TEST_SERVICE });
  try {
    const readings: Reading[] = [];
    const statuses: DeviceState[] = [];
    replica.onReading((r) => readings.push(r));
    replica.onStatus((s) => statuses.push(s));
    const ts = Math.floor(Date.now() / 1000) * 1000 - 1000;
    await meter.publishAsync(
      'kilowatch/meters/0a0b0c0d0e0f/status',
      JSON.stringify({ online: true, rssi: -90 }),
      { qos: 1 },
    );
    await meter.publishAsync(
      'kilowatch/meters/0a0b0c0d0e0f/readings',
      JSON.stringify({ ts, seq: 3, values: { vave1: 231 } }),
      { qos: 1 },
    );
    await meter.publishAsync(
      'kilowatch/meters/0a0b0c0d0e0f/readings',
      JSON.stringify({ ts, values: { vave1: 999 } }),
      { qos: 1 },
    );
    // A later reading of the same meter: once it is live, the one before it has been decided.
    await meter.publishAsync(
      'kilowatch/meters/0a0b0c0d0e0f/readings',
      JSON.stringify({ ts: ts + 1000, values: { vave1: 232 } }),
      { qos: 1 },
    );
    await waitFor(() => readings.length >= 2 && statuses.length >= 1, 10_000, 'live messages');
    // Only the committed readings; the rejected one never goes live.
    expect(readings).toEqual([
      { deviceKey: '0a0b0c0d0e0f', ts, seq: 3, values: { vave1: 231 } },
      { deviceKey: '0a0b0c0d0e0f', ts: ts + 1000, values: { vave1: 232 } },
    ]);
    expect(statuses[0]).toMatchObject({ deviceKey: '0a0b0c0d0e0f', status: 'weak-signal', rssi: -90 });
    expect(replica.deviceState('0a0b0c0d0e0f')).toMatchObject({ status: 'weak-signal', lastSeen: ts + 1000 });

    // A meter that never sends a status is online from its readings, as the bridge has it.
    await meter.publishAsync(
      'kilowatch/meters/0a0b0c0d0e10/readings',
      JSON.stringify({ ts, values: { vave1: 229 } }),
      { qos: 1 },
    );
    await waitFor(() => replica.deviceState('0a0b0c0d0e10') !== undefined, 10_000, 'the silent meter');
    expect(replica.deviceState('0a0b0c0d0e10')).toEqual({
      deviceKey: '0a0b0c0d0e10',
      status: 'online',
      lastSeen: ts,
    });
    expect(ingest.deviceState('0a0b0c0d0e10')).toMatchObject({ status: 'online', lastSeen: ts });
    expect(statuses.at(-1)).toMatchObject({ deviceKey: '0a0b0c0d0e10', status: 'online' });
  } finally {
    await meter.endAsync();
    await replica.stop();
    await ingest.stop();
    await store.close();
    await broker.close();
  }
});

it('counts and drops a live message that is not a committed reading (core decodeLiveReading)', async () => {
  const broker = await startEmbeddedBroker({ port: 0, services: [TEST_SERVICE] });
  const replica = await startLiveSubscriber({ mqttUrl: broker.url, ...TEST_SERVICE });
  const publisher = await mqtt.connectAsync(broker.url, { clientId: 'kw-live-forger', ...TEST_SERVICE });
  try {
    const readings: Reading[] = [];
    replica.onReading((r) => readings.push(r));
    const topic = 'kilowatch/live/0a0b0c0d0e0f';
    const bad = [
      '{"deviceKey":',
      JSON.stringify({ deviceKey: '0A0B0C0D0E0F', ts: 1, values: {} }),
      JSON.stringify({ deviceKey: '0a0b0c0d0e0f', values: { vave1: 230 } }),
      JSON.stringify({ deviceKey: '0a0b0c0d0e0f', ts: 1, values: { vave1: null } }),
      JSON.stringify({ deviceKey: '0a0b0c0d0e10', ts: 1, values: { vave1: 230 } }),
    ];
    for (const payload of bad) await publisher.publishAsync(topic, payload, { qos: 1 });
    // The good reading goes out last on the same topic: once it is here, the others have been read.
    const good = { deviceKey: '0a0b0c0d0e0f', ts: 2, seq: 7, values: { vave1: 230 } };
    await publisher.publishAsync(topic, JSON.stringify({ ...good, extra: 'ignored' }), { qos: 1 });
    await waitFor(() => readings.length >= 1, 10_000, 'the good reading');
    expect(readings).toEqual([good]);
    expect(replica.dropped()).toBe(bad.length);
    expect(replica.received()).toBe(1);
    expect(replica.deviceState('0a0b0c0d0e10')).toBeUndefined();
  } finally {
    await publisher.endAsync();
    await replica.stop();
    await broker.close();
  }
});
