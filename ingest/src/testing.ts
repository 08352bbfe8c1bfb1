/**
 * The store-outage scenario any engine can be put through, shared with other packages' suites and the
 * InfluxDB bench. The servers it runs against come from `@kilowatch/testkit`.
 */
import type { TelemetryStore } from '@kilowatch/tsdb';
import mqtt from 'mqtt';
import { startIngest } from './bridge.ts';

export interface OutageScenarioOptions {
  store: TelemetryStore;
  mqttUrl: string;
  /** Takes the store's server away (stop or kill it) and brings it back. */
  outage: { begin(): Promise<void> | void; end(): Promise<void> | void };
  outageMs: number;
  /** Readings published in total (default 2,000), at `ratePerS` (default 100). */
  readings?: number;
  ratePerS?: number;
  /** The bridge's in-flight window (default 300): the buffer must stay within it. */
  maxInFlight?: number;
  deviceKey?: string;
  log?: (msg: string) => void;
}

export interface OutageScenarioResult {
  published: number;
  /** Distinct readings found in the store afterwards. */
  stored: number;
  missing: number;
  maxBufferMessages: number;
  maxInFlight: number;
  retried: number;
}

/**
 * Readings at QoS 1 through a running bridge while the store's server is away for `outageMs`: every
 * reading must be in the store afterwards, and the bridge's buffer must stay within its window (it stops
 * reading from the broker instead of growing). Used by the Mosquitto suite and the InfluxDB bench.
 */
export async function runStoreOutageScenario(opts: OutageScenarioOptions): Promise<OutageScenarioResult> {
  const n = opts.readings ?? 2000;
  const rate = opts.ratePerS ?? 100;
  const maxInFlight = opts.maxInFlight ?? 300;
  const key = opts.deviceKey ?? '0a1b2c3d4e60';
  const log = opts.log ?? (() => {});
  const runtime = await startIngest({
    store: opts.store,
    mqttUrl: opts.mqttUrl,
    clientId: `kw-outage-${key}`,
    maxInFlight,
    batchSize: 200,
    rollupIntervalMs: 0,
    logger: { info() {}, warn() {}, error() {} },
  });
  const publisher = await mqtt.connectAsync(opts.mqttUrl, { clientId: `kw-outage-pub-${key}` });
  const gauge = (name: string) =>
    Number(new RegExp(`^${name} (\\S+)`, 'm').exec(runtime.metricsText())?.[1] ?? Number.NaN);
  let maxBuffer = 0;
  const probe = setInterval(() => {
    maxBuffer = Math.max(maxBuffer, gauge('kilowatch_ingest_buffer_messages'));
  }, 25);
  const committed = new Set<number>();
  runtime.bus.onReading((r) => {
    if (r.deviceKey === key) committed.add(r.ts);
  });
  const base = Math.floor(Date.now() / 1000) * 1000 - n * 1000 - 60_000;
  try {
    const outageAt = Math.floor(n / 4);
    let outageOver: Promise<void> | null = null;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) {
      if (i === outageAt) {
        log(`store outage for ${opts.outageMs / 1000} s`);
        await opts.outage.begin();
        outageOver = new Promise<void>((resolve, reject) => {
          setTimeout(() => {
            Promise.resolve(opts.outage.end()).then(() => {
              log('store back');
              resolve();
            }, reject);
          }, opts.outageMs);
        });
      }
      const payload = JSON.stringify({
        ts: base + i * 1000,
        seq: i,
        values: { eai1: i, vave1: 230 + (i % 7) },
      });
      await publisher.publishAsync(`kilowatch/meters/${key}/readings`, payload, { qos: 1 });
      const ahead = (i + 1) / rate - (performance.now() - t0) / 1000;
      if (ahead > 0) await new Promise((r) => setTimeout(r, ahead * 1000));
    }
    await outageOver;
    const deadline = Date.now() + 120_000;
    while (committed.size < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await runtime.flush();
    let stored = 0;
    for await (const page of opts.store.streamRaw({
      deviceKey: key,
      from: base,
      to: base + n * 1000,
      pageSize: 1000,
    })) {
      for (const row of page) if (row.values.eai1 === (row.ts - base) / 1000) stored++;
    }
    return {
      published: n,
      stored,
      missing: n - stored,
      maxBufferMessages: maxBuffer,
      maxInFlight,
      retried: gauge('kilowatch_ingest_write_retries_total'),
    };
  } finally {
    clearInterval(probe);
    await publisher.endAsync();
    await runtime.stop();
  }
}
