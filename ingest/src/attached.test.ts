/**
 * The embedded deployment's ingest: attached to the in-process broker, it holds each meter's PUBACK
 * until the store has committed the reading (at-least-once up to the meter itself).
 */
import type { Reading } from '@kilowatch/core';
import { freePort, TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt from 'mqtt';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startIngest } from './bridge.ts';
import { type EmbeddedBroker, startEmbeddedBroker } from './broker.ts';
import { gatedStore, metricValue, waitFor } from './test/helpers.ts';

const KEY = 'b4cf12b3c4d5';
const quiet = { info() {}, warn() {}, error() {} };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** Decoding on the bridge's thread, or in its worker thread (waited for until it decodes). */
let decodeThread = false;

async function setUp(wrap: (s: TelemetryStore) => TelemetryStore = (s) => s) {
  const store = await createDuckDbStore();
  cleanups.push(() => store.close());
  const broker: EmbeddedBroker = await startEmbeddedBroker({ port: 0, services: [TEST_SERVICE] });
  cleanups.push(() => broker.close());
  const runtime = await startIngest({
    store: wrap(store),
    broker,
    rollupIntervalMs: 0,
    logger: quiet,
    decodeThread,
    now: () => NOW,
  });
  cleanups.push(() => runtime.stop());
  if (decodeThread) await waitFor(() => runtime.decodingInThread, 30_000, 'the decode thread');
  return { store, broker, runtime };
}

/** The bridge's clock in these tests: readings are stamped around it, whatever the machine's date. */
const NOW = Date.parse('2026-11-03T12:00:00Z');
const reading = (ts: number, i: number) => JSON.stringify({ ts, values: { vave1: 230 + i, eai1: 100 + i } });

describe.each([
  ["on the bridge's thread", false],
  ['in the worker thread', true],
])('ingest attached to the embedded broker, decoding %s', (_, thread) => {
  beforeAll(() => {
    decodeThread = thread;
  });

  it('stores native, Tasmota and Shelly readings, publishes them on the bus and follows statuses and wills', async () => {
    const { store, broker, runtime } = await setUp();
    const seen: Reading[] = [];
    runtime.bus.onReading((r) => seen.push(r));
    const statuses: string[] = [];
    runtime.bus.onStatus((s) => statuses.push(`${s.deviceKey}:${s.status}`));
    const meter = await mqtt.connectAsync(broker.url, {
      clientId: 'meter-formats',
      ...TEST_SERVICE,
      will: {
        topic: `kilowatch/meters/${KEY}/status`,
        payload: Buffer.from('{"online":false}'),
        qos: 1,
        retain: false,
      },
    });
    const now = NOW;
    await meter.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now - 2000, 1), { qos: 1 });
    await meter.publishAsync(
      'tele/c4d5e6f7a8b9/SENSOR',
      JSON.stringify({
        Time: new Date(now - 1000).toISOString().slice(0, 19),
        ENERGY: { Voltage: 231, Total: 12.5 },
      }),
      { qos: 1 },
    );
    await meter.publishAsync(
      'd4e5f6a7b8c9/events/rpc',
      JSON.stringify({
        method: 'NotifyStatus',
        params: { ts: (now - 500) / 1000, 'em1:0': { id: 0, voltage: 229.5, act_power: 100 } },
      }),
      { qos: 1 },
    );
    await meter.publishAsync(`kilowatch/meters/${KEY}/status`, JSON.stringify({ online: true, rssi: -60 }), {
      qos: 1,
    });
    // Each publish above resolved on its PUBACK, which the broker sends after the commit.
    expect((await store.latest(KEY))?.values).toEqual({ vave1: 231, eai1: 101 });
    expect((await store.latest('c4d5e6f7a8b9'))?.values.vave1).toBe(231);
    expect((await store.latest('d4e5f6a7b8c9'))?.values.vave1).toBe(229.5);
    expect(seen.map((r) => r.deviceKey)).toEqual([KEY, 'c4d5e6f7a8b9', 'd4e5f6a7b8c9']);
    await waitFor(() => runtime.deviceState(KEY)?.rssi === -60, 5000, 'the status');
    // The meter drops off without a DISCONNECT: the broker publishes its will.
    (meter as unknown as { stream: { destroy(): void } }).stream.destroy();
    await meter.endAsync(true);
    await waitFor(() => runtime.deviceState(KEY)?.status === 'offline', 5000, 'the will');
    expect(statuses).toContain(`${KEY}:offline`);
  });

  it("holds the meter's PUBACK until the store has committed its reading", async () => {
    let gate!: ReturnType<typeof gatedStore>;
    const { store, broker } = await setUp((s) => {
      gate = gatedStore(s);
      return gate.store;
    });
    const meter = await mqtt.connectAsync(broker.url, { clientId: 'meter-gated', ...TEST_SERVICE });
    cleanups.push(() => meter.endAsync(true));
    const now = NOW - 60_000;
    let acked = 0;
    const sends = Array.from({ length: 20 }, (_, i) =>
      meter.publishAsync(`kilowatch/meters/${KEY}/readings`, reading(now + i, i), { qos: 1 }).then(() => {
        acked++;
      }),
    );
    await waitFor(() => gate.writes() > 0, 5000, 'a held write');
    await new Promise((r) => setTimeout(r, 300));
    expect(acked).toBe(0);
    expect(await store.latest(KEY)).toBeNull();
    gate.open();
    await Promise.all(sends);
    expect(acked).toBe(20);
    expect(
      (await store.readRaw({ deviceKey: KEY, from: now, to: now + 100, limit: 100 })).items,
    ).toHaveLength(20);
  });

  it('dead-letters bad messages, acknowledges them, and stores nothing of them', async () => {
    const { store, broker, runtime } = await setUp();
    const meter = await mqtt.connectAsync(broker.url, { clientId: 'meter-bad', ...TEST_SERVICE });
    cleanups.push(() => meter.endAsync(true));
    await meter.publishAsync(`kilowatch/meters/${KEY}/readings`, '{not json', { qos: 1 });
    await meter.publishAsync(
      `kilowatch/meters/${KEY}/readings`,
      JSON.stringify({ ts: NOW, values: { vave9: 1 } }),
      {
        qos: 1,
      },
    );
    await meter.publishAsync('kilowatch/meters/NOT-HEX/readings', reading(NOW, 1), { qos: 1 });
    const text = runtime.metricsText();
    expect(metricValue(text, 'kilowatch_ingest_messages_rejected_total')).toBe(3);
    expect(
      runtime
        .deadLetters()
        .map((d) => d.reason)
        .sort(),
    ).toEqual(['invalid-device-key', 'invalid-json', 'unknown-parameter']);
    expect(await store.devices()).toEqual([]);
  });

  it('after stop takes nothing more: a reading published then is not acknowledged', async () => {
    const { broker, runtime } = await setUp();
    const meter = await mqtt.connectAsync(broker.url, {
      clientId: 'meter-stop',
      reconnectPeriod: 0,
      ...TEST_SERVICE,
    });
    cleanups.push(() => meter.endAsync(true));
    await runtime.stop();
    let acked = false;
    void meter
      .publishAsync(`kilowatch/meters/${KEY}/readings`, reading(NOW, 1), { qos: 1 })
      .then(() => {
        acked = true;
      })
      .catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
    expect(acked).toBe(false);
  });

  it('after a restart, what a meter kept unacknowledged is stored exactly once', async () => {
    const store = await createDuckDbStore();
    cleanups.push(() => store.close());
    const port = await freePort();
    const up = async () => {
      const broker = await startEmbeddedBroker({ port, services: [TEST_SERVICE] });
      const runtime = await startIngest({
        store,
        broker,
        rollupIntervalMs: 0,
        logger: quiet,
        decodeThread: thread,
        now: () => NOW,
      });
      return { broker, runtime };
    };
    const first = await up();
    const meter = await mqtt.connectAsync(first.broker.url, {
      clientId: 'meter-replay',
      reconnectPeriod: 100,
      ...TEST_SERVICE,
    });
    cleanups.push(() => meter.endAsync(true));
    // The process goes away; the meter keeps what it publishes meanwhile and sends it when it is back
    // (an MQTT client replays its queue one message per PUBACK).
    await first.runtime.stop();
    await first.broker.close();
    const N = 200;
    const base = NOW - N * 1000;
    for (let i = 0; i < N; i++)
      meter.publish(`kilowatch/meters/${KEY}/readings`, reading(base + i * 1000, i), { qos: 1 });
    const second = await up();
    cleanups.push(() => second.broker.close());
    cleanups.push(() => second.runtime.stop());
    const stored = () => metricValue(second.runtime.metricsText(), 'kilowatch_ingest_readings_stored_total');
    await waitFor(() => stored() >= N, 60_000, `the ${N} replayed readings`);
    await second.runtime.flush();
    expect(stored()).toBe(N);
    const rows: number[] = [];
    for await (const page of store.streamRaw({ deviceKey: KEY, from: base, to: NOW, pageSize: 1000 }))
      for (const r of page) rows.push((r.values.vave1 as number) - 230);
    expect(rows).toEqual(Array.from({ length: N }, (_, i) => i));
  }, 90_000);
});
