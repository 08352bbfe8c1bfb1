import type { Reading } from '@kilowatch/core';
import { TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore, StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startIngest } from './bridge.ts';
import { type EmbeddedBroker, startEmbeddedBroker } from './broker.ts';
import { flakyStore, gatedStore, metricValue, waitFor } from './test/helpers.ts';

/** The bridge's clock in these tests: readings are stamped around it, whatever the machine's date. */
const NOW = Date.parse('2026-11-03T12:00:00Z');
const KEY = 'a4cf12b3c4d5';
const quiet = { info() {}, warn() {}, error() {} };

let broker: EmbeddedBroker;
let publisher: MqttClient;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  broker = await startEmbeddedBroker({ port: 0, services: [TEST_SERVICE] });
  publisher = await mqtt.connectAsync(broker.url, { clientId: 'test-publisher', ...TEST_SERVICE });
});
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});
afterAll(async () => {
  await publisher.endAsync();
  await broker.close();
});

/** Decoding on the bridge's thread, or in its worker thread (waited for until it decodes). */
let decodeThread = false;

async function ingest(store: TelemetryStore, extra: Partial<Parameters<typeof startIngest>[0]> = {}) {
  const runtime = await startIngest({
    store,
    mqttUrl: broker.url,
    mqttUsername: TEST_SERVICE.username,
    mqttPassword: TEST_SERVICE.password,
    rollupIntervalMs: 0,
    logger: quiet,
    decodeThread,
    now: () => NOW,
    ...extra,
    // Each variant has sessions of its own: the broker keeps what the other's sessions left queued.
    ...(extra.clientId ? { clientId: `${extra.clientId}${decodeThread ? '-thread' : ''}` } : {}),
  });
  cleanups.push(() => runtime.stop());
  if (decodeThread && typeof store.writeColumns === 'function')
    await waitFor(() => runtime.decodingInThread, 30_000, 'the decode thread');
  return runtime;
}

async function memoryStore() {
  const store = await createDuckDbStore();
  cleanups.push(() => store.close());
  return store;
}

const reading = (ts: number, i: number) =>
  JSON.stringify({ ts, seq: i, values: { vave1: 230 + (i % 10), eai1: 100 + i } });

describe.each([
  ["on the bridge's thread", false],
  ['in the worker thread', true],
])('ingest over the embedded broker into DuckDB, decoding %s', (_, thread) => {
  beforeAll(() => {
    decodeThread = thread;
  });

  it('stores native, Tasmota and Shelly readings, publishes them on the bus and tracks device state', async () => {
    const store = await memoryStore();
    const runtime = await ingest(store, { clientId: 'it-formats' });
    const seen: Reading[] = [];
    runtime.bus.onReading((r) => seen.push(r));
    const statuses: string[] = [];
    runtime.bus.onStatus((s) => statuses.push(`${s.deviceKey}:${s.status}`));

    const now = NOW;
    await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now - 2000, 1), { qos: 1 });
    await publisher.publishAsync(
      'tele/a4cf12b3c4d6/SENSOR',
      JSON.stringify({
        Time: '2026-01-15T12:00:00',
        ENERGY: { Total: 3.705, Power: 5, Voltage: 233, Current: 0.021, Factor: 1 },
      }),
      { qos: 1 },
    );
    await publisher.publishAsync(
      'a4cf12b3c4d7/events/rpc',
      JSON.stringify({
        method: 'NotifyStatus',
        params: { ts: (now - 1000) / 1000, 'em1:0': { voltage: 231.5, act_power: 120, pf: 0.97 } },
      }),
      { qos: 1 },
    );
    await publisher.publishAsync(
      `kilowatch/meters/${KEY}/status`,
      JSON.stringify({ online: true, rssi: -85 }),
      { qos: 1 },
    );
    await waitFor(() => seen.length === 3, 10_000, 'three readings on the bus');

    expect(await store.latest(KEY)).toEqual({ ts: now - 2000, values: { vave1: 231, eai1: 101 } });
    expect(await store.latest('a4cf12b3c4d6')).toEqual({
      ts: Date.parse('2026-01-15T11:00:00Z'),
      values: { eai1: 3.705, pave1: 5, vave1: 233, iave1: 0.021, pfave1: 1 },
    });
    expect((await store.latest('a4cf12b3c4d7'))?.values).toEqual({ vave1: 231.5, pave1: 120, pfave1: 0.97 });
    await waitFor(() => runtime.deviceState(KEY)?.status === 'weak-signal', 5000, 'weak-signal status');
    expect(runtime.deviceState(KEY)).toMatchObject({ status: 'weak-signal', rssi: -85 });
    expect(statuses).toContain(`${KEY}:weak-signal`);

    await publisher.publishAsync(`kilowatch/meters/${KEY}/status`, JSON.stringify({ online: false }), {
      qos: 1,
    });
    await waitFor(() => runtime.deviceState(KEY)?.status === 'offline', 5000, 'offline status');

    const text = runtime.metricsText();
    expect(metricValue(text, 'kilowatch_ingest_readings_stored_total')).toBe(3);
    expect(metricValue(text, 'kilowatch_ingest_messages_received_total')).toBe(5);
    expect(metricValue(text, 'kilowatch_ingest_batches_total')).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^# TYPE kilowatch_ingest_write_duration_seconds histogram$/m);
  });

  it('acknowledges a message only after its batch commits: an uncommitted one is redelivered to the next session', async () => {
    const store = await memoryStore();
    const now = NOW - 60_000;
    // Session 1 commits five readings, then its store stops committing.
    const first = await ingest(store, { clientId: 'it-ack' });
    for (let i = 0; i < 5; i++)
      await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + i, i), { qos: 1 });
    await waitFor(
      async () =>
        (await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 })).items.length === 5,
    );
    await first.stop();

    const gated = gatedStore(store);
    const second = await startIngest({
      store: gated.store,
      mqttUrl: broker.url,
      mqttUsername: TEST_SERVICE.username,
      mqttPassword: TEST_SERVICE.password,
      clientId: 'it-ack',
      rollupIntervalMs: 0,
      logger: quiet,
      stopTimeoutMs: 300,
    });
    for (let i = 5; i < 10; i++)
      await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + i, i), { qos: 1 });
    await waitFor(() => gated.writes() > 0, 5000, 'a held write');
    await second.stop(); // gives up: the store never committed, so nothing was acknowledged

    // Session 3 gets exactly the five unacknowledged messages again (the held write never commits, so
    // rows 5..9 can only come from the redelivery). Counters, not the bus: redelivery may begin before
    // startIngest returns.
    const third = await ingest(store, { clientId: 'it-ack' });
    const stored = () => metricValue(third.metricsText(), 'kilowatch_ingest_readings_stored_total');
    await waitFor(() => stored() >= 5, 10_000, 'redelivery');
    await new Promise((r) => setTimeout(r, 300));
    expect(stored()).toBe(5);
    expect(metricValue(third.metricsText(), 'kilowatch_ingest_messages_received_total')).toBe(5);
    const rows = await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 });
    expect(rows.items.map((r) => r.ts - now)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('stops taking messages when the in-flight window is full, and catches up when the store commits', async () => {
    const store = await memoryStore();
    const gated = gatedStore(store);
    const runtime = await ingest(gated.store, { clientId: 'it-window', maxInFlight: 8, batchSize: 4 });
    const now = NOW - 60_000;
    const sends = Array.from({ length: 60 }, (_, i) =>
      publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + i, i), { qos: 1 }),
    );
    await Promise.all(sends);
    await waitFor(
      () => metricValue(runtime.metricsText(), 'kilowatch_ingest_buffer_messages') === 8,
      5000,
      'a full window',
    );
    await new Promise((r) => setTimeout(r, 200));
    const text = runtime.metricsText();
    expect(metricValue(text, 'kilowatch_ingest_messages_received_total')).toBe(8);
    expect(metricValue(text, 'kilowatch_ingest_paused')).toBe(1);
    gated.open();
    await waitFor(
      () => metricValue(runtime.metricsText(), 'kilowatch_ingest_readings_stored_total') === 60,
      10_000,
      'catch-up',
    );
    expect(
      (await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 })).items,
    ).toHaveLength(60);
    expect(metricValue(runtime.metricsText(), 'kilowatch_ingest_buffer_messages')).toBe(0);
  });

  it('retries a failed write with backoff and loses nothing', async () => {
    const store = await memoryStore();
    const flaky = flakyStore(store, 3, () => new StoreError('connection refused', 'unavailable'));
    const runtime = await ingest(flaky, { clientId: 'it-retry' });
    const now = NOW - 60_000;
    for (let i = 0; i < 20; i++)
      await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + i, i), { qos: 1 });
    await waitFor(
      () => metricValue(runtime.metricsText(), 'kilowatch_ingest_readings_stored_total') === 20,
      10_000,
      'stored',
    );
    expect(metricValue(runtime.metricsText(), 'kilowatch_ingest_write_retries_total')).toBe(3);
    expect(
      (await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 })).items,
    ).toHaveLength(20);
  });

  it('holds readings unacknowledged while the store is misconfigured, and stores them once it is fixed', async () => {
    const store = await memoryStore();
    const missing = () => new StoreError('InfluxDB write failed (404): database not found', 'configuration');
    const flaky = flakyStore(store, 4, missing);
    const runtime = await ingest(flaky, { clientId: 'it-config' });
    const now = NOW - 60_000;
    for (let i = 0; i < 20; i++)
      await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + i, i), { qos: 1 });
    await waitFor(() => runtime.writeProblem() !== null, 10_000, 'the problem reported');
    expect(runtime.writeProblem()).toContain('database not found');
    await waitFor(
      () => metricValue(runtime.metricsText(), 'kilowatch_ingest_readings_stored_total') === 20,
      20_000,
      'stored',
    );
    // A misconfigured store is not the readings' fault: none of them went to the dead letters.
    expect(runtime.deadLetters()).toEqual([]);
    expect(runtime.writeProblem()).toBeNull();
    expect(metricValue(runtime.metricsText(), 'kilowatch_ingest_write_retries_total')).toBe(4);
    expect(
      (await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 })).items,
    ).toHaveLength(20);
  });

  it('dead-letters a batch the store refuses for good, after two more tries', async () => {
    const store = await memoryStore();
    const refused = () => new StoreError('InfluxDB write failed (400): unable to parse', 'rejected');
    const runtime = await ingest(flakyStore(store, 3, refused), { clientId: 'it-refused' });
    const now = NOW - 60_000;
    await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now, 1), { qos: 1 });
    await waitFor(() => runtime.deadLetters().length === 1, 10_000, 'dead-lettered');
    expect(runtime.deadLetters()[0]!.reason).toBe('store-rejected');
    expect(runtime.writeProblem()).toContain('unable to parse');
    // The next batch commits, and the problem is over.
    await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + 1, 2), { qos: 1 });
    await waitFor(() => metricValue(runtime.metricsText(), 'kilowatch_ingest_readings_stored_total') === 1);
    expect(runtime.writeProblem()).toBeNull();
    expect(
      (await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 })).items.map((r) => r.ts),
    ).toEqual([now + 1]);
  });

  it('rejects bad messages to the dead-letter store and keeps going', async () => {
    const store = await memoryStore();
    const runtime = await ingest(store, { clientId: 'it-dead' });
    await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, '{not json', { qos: 1 });
    await publisher.publishAsync(
      `kilowatch/meters/${KEY}/readings`,
      JSON.stringify({ ts: NOW, values: { vave9: 1 } }),
      { qos: 1 },
    );
    await publisher.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(NOW - 1000, 1), {
      qos: 1,
    });
    await waitFor(() => metricValue(runtime.metricsText(), 'kilowatch_ingest_readings_stored_total') === 1);
    const text = runtime.metricsText();
    expect(metricValue(text, 'kilowatch_ingest_messages_rejected_total', 'reason="invalid-json"')).toBe(1);
    expect(metricValue(text, 'kilowatch_ingest_messages_rejected_total', 'reason="unknown-parameter"')).toBe(
      1,
    );
    expect(runtime.deadLetters().map((d) => d.reason)).toEqual(['unknown-parameter', 'invalid-json']);
  });
});
