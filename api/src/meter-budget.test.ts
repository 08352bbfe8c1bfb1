/**
 * A meter past its write budget, seen where its owner looks: in the embedded deployment (the API, the
 * embedded broker checking the meter's account, ingest attached), its refused messages show on the
 * device's connection state while its stored readings stay as they were.
 */
import { DEFAULT_METER_LIMITS } from '@kilowatch/ingest';
import { tryConnect } from '@kilowatch/ingest/conformance';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedMeterParts, embeddedMeterAccess } from './plugins/app/meter-access.ts';
import { type EmbeddedMeters, startEmbeddedMeters } from './testing/embedded-meters.ts';
import { as, buildTestApp, duckDbStore, engines, signUp, type TestApp } from './testing/helper.ts';

/** The ingest's clock: the meter's readings are stamped around it, whatever the machine's date. */
const NOW = Date.parse('2026-11-03T12:00:00Z');

describe.each(engines())('a meter past its write budget on %s', (engine) => {
  let t: TestApp;
  let store: TelemetryStore;
  let meters: EmbeddedMeters;
  const parts: EmbeddedMeterParts = {};

  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp(engine, {
      store,
      meterAccess: embeddedMeterAccess(parts),
      config: { mqttPublic: { port: 1883, tls: false } },
    });
    meters = await startEmbeddedMeters({
      devices: () => t.app.devices,
      store,
      parts,
      now: () => NOW,
      meterLimits: { ...DEFAULT_METER_LIMITS, readingsPerSecond: 1, readingsBurst: 200 },
    });
  });
  afterAll(async () => {
    await meters?.stop();
    await t?.close();
    await store?.close();
  });

  it('shows the refusal on the connection state, counts it in the metrics, and stores nothing past the budget', async () => {
    const key = engine === 'pglite' ? '5c00000000f1' : '5d00000000f1';
    const owner = await signUp(t.app);
    const res = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: key.match(/../g)!.join(':'), name: 'Flooding meter', typeCode: 1 },
    });
    expect(res.statusCode).toBe(201);
    const { id, mqtt } = res.json();
    const meter = (await tryConnect(meters.broker.url, {
      clientId: `kw-flood-${key}`,
      username: mqtt.username,
      password: mqtt.password,
    })) as MqttClient;
    const array = (from: number) =>
      JSON.stringify(
        Array.from({ length: 100 }, (_, i) => ({ ts: from + i * 1000, values: { vave1: 230 } })),
      );
    // Two arrays use the burst of 200 up; the next three are acknowledged and not stored.
    for (let i = 0; i < 5; i++)
      await meter.publishAsync(`kilowatch/meters/${key}/readings`, array(NOW - 600_000 + i * 100_000), {
        qos: 1,
      });
    await meter.endAsync();
    const connection = (
      await as(t.app, owner, { method: 'GET', url: `/api/devices/${id}/connection` })
    ).json();
    expect(connection.lastRejection).toMatchObject({
      reason: 'payload-rejected',
      topic: `kilowatch/meters/${key}/readings`,
      at: NOW,
      detail: expect.stringMatching(
        /^rate-limited: this meter wrote more than 1 readings a second \(200 at once\)/,
      ),
    });
    expect(meters.runtime.metricsText()).toMatch(
      /^kilowatch_ingest_messages_refused_total\{reason="rate"\} 3$/m,
    );
    const raw = await store.readRaw({ deviceKey: key, from: NOW - 600_000, to: NOW, limit: 1000 });
    expect(raw.items).toHaveLength(200);
  });
});
