/**
 * Each meter's write budget, on the embedded broker with the ingest attached and beside a real Mosquitto
 * (the bridge subscribed over MQTT): a meter past it has its
 * messages acknowledged and not stored, counted and noted in its state, while the others store on; a
 * real meter's rate and a backlog within the allowance are stored whole. The budget fills by the
 * ingest's clock, which these tests move by hand.
 */
import { findServerBinary, startMosquitto, TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_METER_LIMITS, type MeterLimits } from './bridge/meterBudget.ts';
import { startIngest } from './bridge.ts';
import { startEmbeddedBroker } from './broker.ts';
import { metricValue, waitFor } from './test/helpers.ts';

const FLOOD = 'b4cf12b30001';
const OTHER = 'b4cf12b30002';
const quiet = { info() {}, warn() {}, error() {} };
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()?.();
});

/** The ingest's clock: readings are stamped around it, whatever the machine's date. */
const START = Date.parse('2026-11-03T12:00:00Z');
let clock = START;
let decodeThread = false;

async function setUp(meterLimits: MeterLimits) {
  clock = START;
  const store = await createDuckDbStore();
  cleanups.push(() => store.close());
  const broker = await startEmbeddedBroker({ port: 0, services: [TEST_SERVICE] });
  cleanups.push(() => broker.close());
  const runtime = await startIngest({
    store,
    broker,
    rollupIntervalMs: 0,
    logger: quiet,
    decodeThread,
    meterLimits,
    now: () => clock,
  });
  cleanups.push(() => runtime.stop());
  if (decodeThread) await waitFor(() => runtime.decodingInThread, 30_000, 'the decode thread');
  const stored: Record<string, number> = {};
  runtime.bus.onReading((r) => {
    stored[r.deviceKey] = (stored[r.deviceKey] ?? 0) + 1;
  });
  const meter = async (id: string): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(broker.url, { clientId: id, ...TEST_SERVICE });
    cleanups.push(() => c.endAsync(true));
    return c;
  };
  return { store, runtime, stored, meter };
}

/** `n` readings of a device a second apart from `from`, as one native array. */
const readings = (from: number, n: number, step = 1000) =>
  JSON.stringify(
    Array.from({ length: n }, (_, i) => ({ ts: from + i * step, values: { vave1: 230 + (i % 10) } })),
  );
const topic = (key: string) => `kilowatch/meters/${key}/readings`;

describe.each([
  ["on the bridge's thread", false],
  ['in the worker thread', true],
])('meter write budget, decoding %s', (_, thread) => {
  beforeAll(() => {
    decodeThread = thread;
  });

  it('refuses a meter flooding past its rate (acknowledged, counted, in its state) while another meter stores on', async () => {
    const limits: MeterLimits = { ...DEFAULT_METER_LIMITS, readingsPerSecond: 10, readingsBurst: 500 };
    const { runtime, stored, meter } = await setUp(limits);
    const flood = await meter('meter-flood');
    const other = await meter('meter-other');
    // 5 arrays of 100 readings use the burst up; the next 5 are refused, each acknowledged (the publish
    // resolves on its PUBACK) and none stored.
    for (let i = 0; i < 10; i++)
      await flood.publishAsync(topic(FLOOD), readings(clock - 2_000_000 + i * 1000, 100, 10), { qos: 1 });
    const text = runtime.metricsText();
    expect(metricValue(text, 'kilowatch_ingest_messages_refused_total', 'reason="rate"')).toBe(5);
    expect(metricValue(text, 'kilowatch_ingest_readings_stored_total')).toBe(500);
    expect(stored[FLOOD]).toBe(500);
    const refusal = runtime.lastRejection(FLOOD);
    expect(refusal?.reason).toBe('rate-limited');
    expect(refusal?.detail).toContain('10 readings a second (500 at once)');
    expect(refusal?.at).toBe(START);

    // Meanwhile another meter's readings are stored, each acknowledged after its commit.
    for (let i = 0; i < 3; i++)
      await other.publishAsync(topic(OTHER), readings(clock - 3000 + i * 1000, 1), { qos: 1 });
    expect(stored[OTHER]).toBe(3);
    expect(runtime.lastRejection(OTHER)).toBeUndefined();
    // Still flooding: still refused.
    await flood.publishAsync(topic(FLOOD), readings(clock - 1000, 1), { qos: 1 });
    expect(
      metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_refused_total', 'reason="rate"'),
    ).toBe(6);

    // Both at once: the refused messages are acknowledged in their turn, behind the other meter's.
    await Promise.all([
      ...Array.from({ length: 50 }, (_, i) =>
        flood.publishAsync(topic(FLOOD), readings(clock - 1000 + i, 1), { qos: 1 }),
      ),
      ...Array.from({ length: 50 }, (_, i) =>
        other.publishAsync(topic(OTHER), readings(clock - 500 + i, 1), { qos: 1 }),
      ),
    ]);
    expect(stored[OTHER]).toBe(53);
    expect(stored[FLOOD]).toBe(500);
    expect(
      metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_refused_total', 'reason="rate"'),
    ).toBe(56);

    // Ten seconds later the bucket holds 100 readings again: one more array is stored whole.
    clock += 10_000;
    await flood.publishAsync(topic(FLOOD), readings(clock - 100_000, 100, 10), { qos: 1 });
    expect(stored[FLOOD]).toBe(600);
    await flood.publishAsync(topic(FLOOD), readings(clock - 1000, 1), { qos: 1 });
    expect(stored[FLOOD]).toBe(600);
    expect(
      metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_refused_total', 'reason="rate"'),
    ).toBe(57);
  }, 60_000);

  it('bounds backdated readings on their own: history past the allowance is refused, then the meter itself until it is paid off', async () => {
    const limits: MeterLimits = {
      ...DEFAULT_METER_LIMITS,
      backdatedPerSecond: 1,
      backdatedBurst: 300,
      backdatedAfterMs: 3_600_000,
    };
    const { runtime, stored, meter } = await setUp(limits);
    const flood = await meter('meter-history');
    const dayAgo = clock - 86_400_000;
    for (let i = 0; i < 5; i++)
      await flood.publishAsync(topic(FLOOD), readings(dayAgo + i * 100_000, 100), { qos: 1 });
    expect(stored[FLOOD]).toBe(300);
    expect(
      metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_refused_total', 'reason="backdated"'),
    ).toBe(2);
    expect(runtime.lastRejection(FLOOD)?.reason).toBe('backdated-limited');
    expect(runtime.lastRejection(FLOOD)?.detail).toContain('older than 3600 s');
    // Recent readings of that meter wait for the debt too; a minute later they are stored again.
    await flood.publishAsync(topic(FLOOD), readings(clock - 1000, 1), { qos: 1 });
    expect(stored[FLOOD]).toBe(300);
    clock += 60_000;
    await flood.publishAsync(topic(FLOOD), readings(clock - 1000, 1), { qos: 1 });
    expect(stored[FLOOD]).toBe(301);
  }, 60_000);

  it("stores a real meter's reading a second and an outage's backlog within the default allowance whole", async () => {
    const { runtime, stored, meter } = await setUp(DEFAULT_METER_LIMITS);
    const real = await meter('meter-real');
    // Ten minutes of a reading a second.
    for (let i = 0; i < 600; i++) {
      clock += 1000;
      await real.publishAsync(topic(FLOOD), readings(clock, 1), { qos: 1 });
    }
    expect(stored[FLOOD]).toBe(600);
    // Then, back after an eight-hour outage, the meter sends what it buffered: 28,800 readings, in
    // arrays of 200, as fast as the ingest takes them.
    const outage = 8 * 3600;
    const from = clock - outage * 1000;
    for (let i = 0; i < outage / 200; i++)
      real.publish(topic(FLOOD), readings(from + i * 200_000, 200), { qos: 1 });
    await real.publishAsync(topic(OTHER), readings(clock, 1), { qos: 1 });
    await waitFor(() => stored[OTHER] === 1, 60_000, 'the marker after the backlog');
    expect(stored[FLOOD]).toBe(600 + outage);
    expect(metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_refused_total')).toBe(0);
    expect(runtime.lastRejection(FLOOD)).toBeUndefined();
  }, 120_000);
});

const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);

describe.skipIf(!mosquittoBin)('meter write budget beside Mosquitto', () => {
  it('refuses a meter past its budget over MQTT too, each message acknowledged, while another meter stores on', async () => {
    clock = START;
    const broker = await startMosquitto(mosquittoBin as string);
    cleanups.push(() => broker.stop());
    const store = await createDuckDbStore();
    cleanups.push(() => store.close());
    const runtime = await startIngest({
      store,
      mqttUrl: broker.url,
      clientId: 'kw-budget',
      rollupIntervalMs: 0,
      logger: quiet,
      meterLimits: { ...DEFAULT_METER_LIMITS, readingsPerSecond: 10, readingsBurst: 500 },
      now: () => clock,
    });
    cleanups.push(() => runtime.stop());
    await waitFor(() => runtime.decodingInThread, 30_000, 'the decode thread');
    const stored: Record<string, number> = {};
    runtime.bus.onReading((r) => {
      stored[r.deviceKey] = (stored[r.deviceKey] ?? 0) + 1;
    });
    const flood = await mqtt.connectAsync(broker.url, { clientId: 'meter-flood-mqtt' });
    cleanups.push(() => flood.endAsync(true));
    const other = await mqtt.connectAsync(broker.url, { clientId: 'meter-other-mqtt' });
    cleanups.push(() => other.endAsync(true));
    const refused = () => metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_refused_total');
    // 20 arrays of 100 readings at once, then another meter's marker. The broker delivers them together:
    // each array is stored whole or refused whole, and at least the burst's 500 readings are stored.
    const round = async (n: number) => {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          flood.publishAsync(topic(FLOOD), readings(clock - 1_000_000 + (n * 20 + i) * 1000, 100, 10), {
            qos: 1,
          }),
        ),
      );
      await other.publishAsync(topic(OTHER), readings(clock - 10_000 + n, 1), { qos: 1 });
      await waitFor(() => stored[OTHER] === n + 1, 30_000, `marker ${n + 1}`);
    };
    await round(0);
    const first = stored[FLOOD] ?? 0;
    expect(first).toBeGreaterThanOrEqual(500);
    expect(first + 100 * refused()).toBe(2000);
    // Now in debt (the clock has not moved): the next 20 are all refused, the other meter still stores.
    const before = refused();
    await round(1);
    expect(stored[FLOOD] ?? 0).toBe(first);
    expect(refused() - before).toBe(20);
    expect(runtime.lastRejection(FLOOD)?.reason).toBe('rate-limited');
  }, 90_000);
});
