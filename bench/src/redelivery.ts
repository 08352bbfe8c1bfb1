/**
 * `pnpm bench redelivery [--n 2000] [--plain-n 300]`
 *
 * What a meter kept while the embedded deployment restarted, and how fast it is accepted again: a
 * meter connected to the embedded broker (DuckDB file, ingest attached) loses it, keeps publishing
 * readings (QoS 1), and the broker and ingest come back on the same port. Two ways of keeping them:
 *
 * - the outbox the demo's simulated meters use (`meterOutbox`): the backlog is published at once after
 *   the reconnect, so the broker reads many messages together and ingest commits them in batches;
 * - mqtt.js's own offline store (`--plain-n` readings): replayed one message per PUBACK, so one commit
 *   per message (what any meter that replays that way gets).
 *
 * Each case gives messages per second from the restart until every reading is committed, and the store
 * commits it took. Progress goes to stderr; the last stdout line is the JSON result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { meterOutbox, startEmbeddedBroker, startIngest } from '@kilowatch/ingest';
import { freePort, sleep, TEST_SERVICE } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { arg } from './_args.ts';

const KEY = 'b4cf12b3c4d5';
const TOPIC = `kilowatch/meters/${KEY}/readings`;
const quiet = { info() {}, warn() {}, error() {} };

/** The store, counting its writes (one per commit). */
function counted(inner: TelemetryStore): { store: TelemetryStore; writes: () => number } {
  let writes = 0;
  const store = new Proxy(inner, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === 'write' || prop === 'writeColumns')
        return typeof v === 'function'
          ? (batch: unknown) => {
              writes++;
              return (v as (b: unknown) => Promise<unknown>).call(target, batch);
            }
          : v;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store, writes: () => writes };
}

async function restartCase(
  label: string,
  n: number,
  keep: (meter: MqttClient) => (payload: string) => void,
): Promise<{ messages: number; seconds: number; msgs_per_s: number; commits: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'kw-redelivery-'));
  const store = await createDuckDbStore({ path: join(dir, 'telemetry.duckdb'), memoryLimit: '1GB' });
  const port = await freePort();
  const now = Date.now();
  const up = async (s: TelemetryStore) => {
    const broker = await startEmbeddedBroker({ port, services: [TEST_SERVICE] });
    const runtime = await startIngest({
      store: s,
      broker,
      rollupIntervalMs: 0,
      logger: quiet,
      now: () => now,
    });
    return { broker, runtime };
  };
  const first = await up(store);
  const meter = await mqtt.connectAsync(first.broker.url, {
    clientId: `bench-${label}`,
    reconnectPeriod: 100,
    ...TEST_SERVICE,
  });
  const send = keep(meter);
  await first.runtime.stop();
  await first.broker.close();
  while (meter.connected) await sleep(10);
  const base = now - n * 1000;
  for (let i = 0; i < n; i++)
    send(JSON.stringify({ ts: base + i * 1000, values: { vave1: 230 + (i % 10), eai1: 100 + i } }));
  const c = counted(store);
  const t0 = performance.now();
  const second = await up(c.store);
  const stored = () =>
    Number(/kilowatch_ingest_readings_stored_total (\d+)/.exec(second.runtime.metricsText())?.[1] ?? 0);
  while (stored() < n) await sleep(5);
  const seconds = (performance.now() - t0) / 1000;
  await meter.endAsync(true);
  await second.runtime.stop();
  await second.broker.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  const result = {
    messages: n,
    seconds: Math.round(seconds * 100) / 100,
    msgs_per_s: Math.round(n / seconds),
    commits: c.writes(),
  };
  process.stderr.write(`[redelivery bench] ${label}: ${JSON.stringify(result)}\n`);
  return result;
}

export default async function (args: string[]): Promise<object> {
  const n = arg(args, 'n', 2000);
  const plainN = arg(args, 'plain-n', 300);
  const load = loadavg()[0]!;
  const outbox = await restartCase('outbox', n, (meter) => {
    const box = meterOutbox(meter);
    return (payload) => box.publish(TOPIC, payload);
  });
  const plain = await restartCase('mqtt.js store', plainN, (meter) => (payload) => {
    meter.publish(TOPIC, payload, { qos: 1 }, () => {});
  });
  return { outbox, plain, load_average_at_start: Math.round(load * 10) / 10 };
}
