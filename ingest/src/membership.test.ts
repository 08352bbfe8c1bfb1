/**
 * Shared-group membership follows liveness, against a real Mosquitto: an ingest process that stops
 * gracefully leaves the group (MQTT 5, session expiry 0 at its disconnect), so the broker queues nothing
 * for it and the remaining one takes every reading, even when the leaver never comes back under its id.
 */

import { findServerBinary, type MosquittoServer, startMosquitto } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type IngestRuntime, startIngest } from './bridge.ts';
import { metricValue, waitFor } from './test/helpers.ts';

const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
const quiet = { info() {}, warn() {}, error() {} };
const KEY = '0a1b2c3d4e60';
/** The readings' times: a stated instant, judged by the bridges' clock set to just after it. */
const T0 = Date.UTC(2026, 5, 1, 12);
const now = () => T0 + 3_600_000;

describe.skipIf(!mosquittoBin)('ingest group membership on Mosquitto', () => {
  let broker: MosquittoServer;
  let publisher: MqttClient;
  let store: TelemetryStore;
  beforeAll(async () => {
    broker = await startMosquitto(mosquittoBin as string);
    publisher = await mqtt.connectAsync(broker.url, { clientId: 'kw-membership-publisher' });
    store = await createDuckDbStore();
  });
  afterAll(async () => {
    await publisher?.endAsync();
    await store?.close();
    await broker?.stop();
  });

  const start = (clientId: string): Promise<IngestRuntime> =>
    startIngest({
      store,
      mqttUrl: broker.url,
      clientId,
      shared: true,
      sessionExpirySeconds: 600,
      rollupIntervalMs: 0,
      decodeThread: false,
      now,
      logger: quiet,
    });

  const publish = async (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const payload = JSON.stringify({ ts: T0 + i * 1000, seq: i, values: { eai1: i } });
      await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, payload, { qos: 1 });
    }
  };

  const stored = async (from: number, to: number) => {
    const rows = await store.readRaw({
      deviceKey: KEY,
      from: T0 + from * 1000,
      to: T0 + to * 1000,
      limit: 10_000,
    });
    return rows.items.length;
  };

  it('a replica stopped with SIGTERM leaves the group: the other takes everything published after', async () => {
    const a = await start('kw-member-a');
    const b = await start('kw-member-b');
    // Both members get a share while both run.
    await publish(0, 200);
    await waitFor(async () => (await stored(0, 200)) === 200, 20_000, 'the first 200 readings');
    const shareA = metricValue(a.metricsText(), 'kilowatch_ingest_readings_stored_total');
    expect(shareA).toBeGreaterThan(0);
    expect(shareA).toBeLessThan(200);
    // A graceful stop (what SIGTERM runs); it is replaced by nothing under its id.
    await a.stop();
    await publish(200, 1200);
    await waitFor(async () => (await stored(200, 1200)) === 1000, 20_000, 'the 1,000 readings after').catch(
      async (e: Error) => {
        throw new Error(`${e.message}: have ${await stored(200, 1200)}`);
      },
    );
    expect(await stored(0, 1200)).toBe(1200);
    await b.stop();
  });

  it('a replacement under a new client id joins the group and shares the stream', async () => {
    const c = await start('kw-member-c');
    const d = await start('kw-member-d');
    await c.stop();
    const e = await start('kw-member-e');
    await publish(2000, 2400);
    await waitFor(async () => (await stored(2000, 2400)) === 400, 20_000, 'the 400 readings');
    expect(metricValue(e.metricsText(), 'kilowatch_ingest_readings_stored_total')).toBeGreaterThan(0);
    await d.stop();
    await e.stop();
  });
});
