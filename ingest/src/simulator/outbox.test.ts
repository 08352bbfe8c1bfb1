/**
 * Readings a meter measured while the embedded deployment restarted reach the store in batches: all of
 * them, each once, in far fewer commits than messages.
 */
import { freePort, TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, describe, expect, it } from 'vitest';
import { startIngest } from '../bridge.ts';
import { startEmbeddedBroker } from '../broker.ts';
import { countedStore, metricValue, waitFor } from '../test/helpers.ts';
import { meterOutbox } from './outbox.ts';

const KEY = 'b4cf12b3c4d5';
const TOPIC = `kilowatch/meters/${KEY}/readings`;
const quiet = { info() {}, warn() {}, error() {} };
/** The bridge's clock: readings are stamped before it, whatever the machine's date. */
const NOW = Date.parse('2026-11-03T12:00:00Z');
/** The `i`th reading: its counter tells it apart (`eai1` = 100 + i), its voltage stays in range. */
const reading = (ts: number, i: number) =>
  JSON.stringify({ ts, values: { vave1: 230 + (i % 10), eai1: 100 + i } });

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/**
 * A meter connected to the embedded deployment, which then restarts: `publish` runs while it is away,
 * and the readings it sent are counted once the deployment is back. Answers the store's commits for them.
 */
async function acrossRestart(
  decodeThread: boolean,
  n: number,
  publish: (meter: MqttClient, i: number, payload: string) => void,
): Promise<{ commits: number; stored: number; rows: number[] }> {
  const inner = await createDuckDbStore();
  cleanups.push(() => inner.close());
  const counted = countedStore(inner);
  const port = await freePort();
  const up = async (store: TelemetryStore) => {
    const broker = await startEmbeddedBroker({ port, services: [TEST_SERVICE] });
    const runtime = await startIngest({
      store,
      broker,
      rollupIntervalMs: 0,
      logger: quiet,
      decodeThread,
      now: () => NOW,
    });
    if (decodeThread) await waitFor(() => runtime.decodingInThread, 30_000, 'the decode thread');
    return { broker, runtime };
  };
  const first = await up(inner);
  const meter = await mqtt.connectAsync(first.broker.url, {
    clientId: 'meter-outbox',
    reconnectPeriod: 100,
    ...TEST_SERVICE,
  });
  cleanups.push(() => meter.endAsync(true));
  await first.runtime.stop();
  await first.broker.close();
  await waitFor(() => !meter.connected, 5000, 'the meter to notice');
  const base = NOW - n * 1000;
  for (let i = 0; i < n; i++) publish(meter, i, reading(base + i * 1000, i));
  const second = await up(counted.store);
  cleanups.push(() => second.broker.close());
  cleanups.push(() => second.runtime.stop());
  const stored = () => metricValue(second.runtime.metricsText(), 'kilowatch_ingest_readings_stored_total');
  await waitFor(() => stored() >= n, 120_000, `the ${n} readings kept over the restart`);
  await second.runtime.flush();
  const rows: number[] = [];
  for await (const page of inner.streamRaw({ deviceKey: KEY, from: base, to: NOW, pageSize: 1000 }))
    for (const r of page) rows.push((r.values.eai1 as number) - 100);
  return { commits: counted.writes(), stored: stored(), rows };
}

describe.each([
  ["on the bridge's thread", false],
  ['in the worker thread', true],
])('a meter kept readings over a restart of the embedded deployment, decoding %s', (_, thread) => {
  it('its outbox sends them at once: all stored exactly once, in batches', async () => {
    const N = 2000;
    let outbox: ReturnType<typeof meterOutbox> | null = null;
    const result = await acrossRestart(thread, N, (meter, _i, payload) => {
      outbox ??= meterOutbox(meter);
      outbox.publish(TOPIC, payload);
    });
    expect(result.stored).toBe(N);
    expect(result.rows).toEqual(Array.from({ length: N }, (_, i) => i));
    expect(result.commits).toBeGreaterThan(0);
    expect(result.commits).toBeLessThanOrEqual(N / 50);
  }, 150_000);

  it("through mqtt.js's own offline store they come back one per acknowledgement: one commit each", async () => {
    const N = 60;
    const result = await acrossRestart(thread, N, (meter, _i, payload) => {
      meter.publish(TOPIC, payload, { qos: 1 }, () => {});
    });
    expect(result.stored).toBe(N);
    expect(result.rows).toEqual(Array.from({ length: N }, (_, i) => i));
    expect(result.commits).toBe(N);
  }, 150_000);
});
