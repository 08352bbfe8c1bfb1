/**
 * Against a real Mosquitto (Debian `mosquitto`): a fuzz corpus of bad payloads, and kill -9 of an ingest
 * child process mid-stream with every reading stored exactly once after its restart.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findServerBinary,
  type KilowatchProcess,
  type MosquittoServer,
  startKilowatch,
  startMosquitto,
} from '@kilowatch/testkit';
import { createDuckDbStore, StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIngest } from './bridge.ts';
import { gatedStore, metricValue, slowSubackRelay, switchableStore, waitFor } from './test/helpers.ts';
import { runStoreOutageScenario } from './testing.ts';

const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
if (!mosquittoBin)
  console.warn('mosquitto is not installed (apt-get install -y mosquitto): skipping the Mosquitto suite');

/** The bridge's clock in these tests: readings are stamped around it, whatever the machine's date. */
const NOW = Date.parse('2026-11-03T12:00:00Z');
const KEY = '0a1b2c3d4e5f';
const quiet = { info() {}, warn() {}, error() {} };

describe.skipIf(!mosquittoBin)('ingest against Mosquitto', () => {
  let broker: MosquittoServer;
  let publisher: MqttClient;
  beforeAll(async () => {
    broker = await startMosquitto(mosquittoBin as string);
    publisher = await mqtt.connectAsync(broker.url, { clientId: 'kw-test-publisher' });
  });
  afterAll(async () => {
    await publisher?.endAsync();
    await broker?.stop();
  });

  it('rejects a fuzz corpus with its reasons, stores nothing of it, and stays alive', async () => {
    const store = await createDuckDbStore();
    const deadLetterDir = await mkdtemp(join(tmpdir(), 'kw-dead-'));
    const runtime = await startIngest({
      store,
      mqttUrl: broker.url,
      clientId: 'kw-fuzz',
      rollupIntervalMs: 0,
      deadLetterDir,
      logger: quiet,
      now: () => NOW,
    });
    try {
      const now = NOW;
      const readings = `kilowatch/meters/${KEY}/readings`;
      const corpus: [topic: string, payload: string | Buffer, reason: string][] = [
        [readings, '{"ts":', 'invalid-json'],
        [readings, '', 'invalid-json'],
        [readings, Buffer.from([0xff, 0xfe, 0x00, 0x7b]), 'invalid-json'],
        [readings, 'null', 'invalid-payload'],
        [readings, '[]', 'invalid-payload'],
        [readings, JSON.stringify({ ts: now, values: { vave1: '230' } }), 'invalid-payload'],
        [readings, JSON.stringify({ ts: now, values: { vave1: null } }), 'invalid-payload'],
        [readings, JSON.stringify({ ts: 'yesterday', values: { vave1: 230 } }), 'invalid-payload'],
        [readings, JSON.stringify({ ts: now, values: [230] }), 'invalid-payload'],
        [readings, JSON.stringify({ ts: now, values: { vave1: 230, humidity: 40 } }), 'unknown-parameter'],
        [readings, JSON.stringify({ ts: now, values: { __proto__x: 1 } }), 'unknown-parameter'],
        [readings, JSON.stringify({ ts: now, values: { vave1: 1e6 } }), 'out-of-range'],
        [readings, JSON.stringify({ ts: now, values: { pfave1: 1.5 } }), 'out-of-range'],
        [readings, JSON.stringify({ ts: now, values: { frq1: 0 } }), 'out-of-range'],
        [readings, JSON.stringify({ ts: 0, values: { vave1: 230 } }), 'timestamp-too-old'],
        [readings, JSON.stringify({ ts: now + 3_600_000, values: { vave1: 230 } }), 'timestamp-in-future'],
        [
          readings,
          JSON.stringify({ ts: now, values: { vave1: 230 }, pad: 'x'.repeat(300 * 1024) }),
          'oversized',
        ],
        [
          `kilowatch/meters/${KEY.toUpperCase()}/readings`,
          JSON.stringify({ ts: now, values: { vave1: 230 } }),
          'invalid-device-key',
        ],
        [
          'kilowatch/meters/not-a-mac/readings',
          JSON.stringify({ ts: now, values: { vave1: 230 } }),
          'invalid-device-key',
        ],
        [
          'shellyplus1pm-08b61f/events/rpc',
          JSON.stringify({ method: 'NotifyStatus', params: {} }),
          'invalid-device-key',
        ],
        [
          'tele/tasmota_0A1B2C/SENSOR',
          JSON.stringify({ Time: '2026-01-01T00:00:00', ENERGY: { Power: 1 } }),
          'invalid-device-key',
        ],
        [
          `tele/${KEY}/SENSOR`,
          JSON.stringify({ Time: '2026-01-01T00:00:00', ENERGY: { Voltage: 'high' } }),
          'invalid-payload',
        ],
        [
          `${KEY}/events/rpc`,
          JSON.stringify({ method: 'NotifyStatus', params: { ts: now / 1000, 'em:0': { a_voltage: 9999 } } }),
          'out-of-range',
        ],
        [`kilowatch/meters/${KEY}/status`, JSON.stringify({ online: 1 }), 'invalid-payload'],
      ];
      // Topics outside the subscriptions never reach the bridge at all.
      const unsubscribed = [
        `kilowatch/meters/${KEY}/config`,
        `kilowatch/devices/${KEY}/readings`,
        `tele/${KEY}/STATE`,
      ];
      for (const t of unsubscribed)
        await publisher.publishAsync(t, JSON.stringify({ ts: now, values: { vave1: 230 } }), { qos: 1 });
      for (const [topic, payload] of corpus) await publisher.publishAsync(topic, payload, { qos: 1 });

      await waitFor(
        () =>
          metricValue(runtime.metricsText(), 'kilowatch_ingest_messages_rejected_total') === corpus.length,
        15_000,
        'all rejections',
      );
      const text = runtime.metricsText();
      const expected = new Map<string, number>();
      for (const [, , reason] of corpus) expected.set(reason, (expected.get(reason) ?? 0) + 1);
      for (const [reason, n] of expected) {
        expect(
          metricValue(text, 'kilowatch_ingest_messages_rejected_total', `reason="${reason}"`),
          reason,
        ).toBe(n);
      }
      expect(metricValue(text, 'kilowatch_ingest_messages_received_total')).toBe(corpus.length);
      expect(metricValue(text, 'kilowatch_ingest_readings_stored_total')).toBe(0);
      expect(await store.devices()).toEqual([]);
      expect(
        runtime
          .deadLetters(100)
          .map((d) => d.reason)
          .reverse(),
      ).toEqual(corpus.map(([, , r]) => r));

      // Still alive: a valid reading is stored.
      await publisher.publishAsync(readings, JSON.stringify({ ts: now - 1000, values: { vave1: 229.5 } }), {
        qos: 1,
      });
      await waitFor(async () => (await store.latest(KEY)) !== null, 10_000, 'the valid reading');
      expect(await store.latest(KEY)).toEqual({ ts: now - 1000, values: { vave1: 229.5 } });

      await runtime.flush();
      const files = await readdir(deadLetterDir);
      const lines = (await Promise.all(files.map((f) => readFile(join(deadLetterDir, f), 'utf8'))))
        .join('')
        .trim()
        .split('\n');
      expect(lines.map((l) => JSON.parse(l).reason)).toEqual(corpus.map(([, , r]) => r));
    } finally {
      await runtime.stop();
      await store.close();
      await rm(deadLetterDir, { recursive: true, force: true });
    }
  });

  it('a store outage mid-stream loses nothing, keeps the buffer within the window, and catches up', async () => {
    const inner = await createDuckDbStore();
    try {
      const { store, outage } = switchableStore(
        inner,
        () => new StoreError('connect ECONNREFUSED', 'unavailable'),
      );
      const result = await runStoreOutageScenario({
        store,
        mqttUrl: broker.url,
        outage,
        outageMs: 4000,
        readings: 1200,
        ratePerS: 200,
        maxInFlight: 150,
      });
      expect(result.missing).toBe(0);
      expect(result.stored).toBe(1200);
      // The window filled (the outage outlasted it) but never overflowed.
      expect(result.maxBufferMessages).toBe(150);
      expect(result.retried).toBeGreaterThan(0);
    } finally {
      await inner.close();
    }
  }, 60_000);

  it('after a restart, what the broker kept for the session is stored exactly once, in batches', async () => {
    const store = await createDuckDbStore();
    const key = '0a1b2c3d4e70';
    const clientId = 'kw-redelivery';
    const N = 2000;
    const base = NOW - N * 1000 - 60_000;
    const topic = `kilowatch/meters/${key}/readings`;
    const publishRange = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        publisher.publish(topic, JSON.stringify({ ts: base + i * 1000, seq: i, values: { eai1: i } }), {
          qos: 1,
        });
        if (i % 100 === 99) await new Promise((r) => setTimeout(r, 5));
      }
    };
    const options = {
      mqttUrl: broker.url,
      clientId,
      // The server deployment's MQTT 5 session, kept by the broker across a crash.
      sessionExpirySeconds: 600,
      rollupIntervalMs: 0,
      logger: quiet,
      now: () => NOW,
    };
    try {
      // The first ingest takes the first half but its store never commits: it goes away with every
      // message of it in flight (delivered, never acknowledged), as a crashed process would.
      const gated = gatedStore(store);
      const first = await startIngest({ ...options, store: gated.store, stopTimeoutMs: 500 });
      await publishRange(0, N / 2);
      await waitFor(
        () => metricValue(first.metricsText(), 'kilowatch_ingest_messages_received_total') === N / 2,
        20_000,
        'the first half in flight',
      );
      await first.stop();
      expect(metricValue(first.metricsText(), 'kilowatch_ingest_readings_stored_total')).toBe(0);
      // The second half arrives while no ingest runs: the broker queues it for the session.
      await publishRange(N / 2, N);
      await new Promise((r) => setTimeout(r, 300));

      // API processes watch the committed readings go live. The broker hands the session's queue over
      // right after CONNACK: what commits before the subscription is confirmed goes live and is
      // acknowledged all the same.
      const watcher = await mqtt.connectAsync(broker.url, { clientId: 'kw-redelivery-live' });
      const live = new Set<number>();
      watcher.on('message', (_t, payload) => {
        const r = JSON.parse(String(payload)) as { deviceKey: string; values: { eai1: number } };
        if (r.deviceKey === key) live.add(r.values.eai1);
      });
      await watcher.subscribeAsync('kilowatch/live/+', { qos: 0 });
      // Its SUBACK is held back: the queued messages commit before the subscription is confirmed.
      const relay = await slowSubackRelay(broker.port, 1500);
      const second = await startIngest({ ...options, mqttUrl: relay.url, store, publishLive: true });
      try {
        const stored = () => metricValue(second.metricsText(), 'kilowatch_ingest_readings_stored_total');
        await waitFor(() => stored() >= N, 60_000, `all ${N} readings committed`);
        await second.flush();
        // Each message taken and committed once: no more, no less.
        expect(stored()).toBe(N);
        expect(metricValue(second.metricsText(), 'kilowatch_ingest_messages_received_total')).toBe(N);
        // In batches, as new readings are (a batch holds up to 2,000), not one commit per message.
        const batches = metricValue(second.metricsText(), 'kilowatch_ingest_batches_total');
        expect(batches).toBeGreaterThan(0);
        expect(batches).toBeLessThanOrEqual(N / 50);
        await waitFor(() => live.size >= N, 20_000, `all ${N} readings live`).catch((e: Error) => {
          throw new Error(`${e.message}: ${live.size}`);
        });
      } finally {
        await second.stop();
        await watcher.endAsync();
        // The relay forwards the second's last bytes (its PUBACKs, its DISCONNECT) after the second has
        // closed its side; the broker must have read them before the same client id connects again, or
        // it hands the new connection what they acknowledge (stored again, harmlessly, but not "nothing").
        await relay.brokerClosed();
        relay.close();
      }
      // Every one of them was acknowledged: the session has nothing left to hand over. The broker hands a
      // resumed session what it kept before anything published after the subscription, so once a marker
      // published now has arrived, anything left over would have arrived before it.
      const third = await startIngest({ ...options, store });
      try {
        const markerKey = '0a1b2c3d4e71';
        await publisher.publishAsync(
          `kilowatch/meters/${markerKey}/readings`,
          JSON.stringify({ ts: base, values: { eai1: 7 } }),
          { qos: 1 },
        );
        const received = () => metricValue(third.metricsText(), 'kilowatch_ingest_messages_received_total');
        await waitFor(() => received() >= 1, 20_000, 'the marker published after the restart');
        await third.flush();
        expect(received()).toBe(1);
        const marker: number[] = [];
        for await (const page of store.streamRaw({ deviceKey: markerKey, from: base - 1, to: base + 1 }))
          for (const r of page) marker.push(r.values.eai1 as number);
        expect(marker).toEqual([7]);
      } finally {
        await third.stop();
      }
      const rows: number[] = [];
      for await (const page of store.streamRaw({
        deviceKey: key,
        from: base,
        to: base + N * 1000,
        pageSize: 1000,
      }))
        for (const r of page) rows.push(r.values.eai1 as number);
      expect(rows).toEqual(Array.from({ length: N }, (_, i) => i));
    } finally {
      await store.close();
    }
  }, 120_000);

  it('kill -9 of the ingest process mid-stream loses nothing: every reading is stored exactly once', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'kw-kill-'));
    // The server's one entry point, as the image runs an ingest replica (KW_ROLE=ingest). Spawned by path:
    // ingest does not import the api package.
    const started: KilowatchProcess[] = [];
    const startChild = async () => {
      const child = await startKilowatch({
        role: 'ingest',
        name: 'ingest child',
        dataDir,
        env: {
          MQTT_URL: broker.url,
          KW_DEMO: '0',
          KW_ROLLUP_INTERVAL_MS: '0',
          KW_INGEST_CLIENT_ID: 'kw-kill-test',
          KW_PUBLISH_LIVE: '1',
        },
        // Started, and decoding in its worker thread (the path the embedded DuckDB store takes).
        ready: { log: ['ingest subscribed', 'ingest decodes in a worker thread'] },
        readyTimeoutMs: 30_000,
        pollMs: 20,
      });
      started.push(child);
      return child;
    };

    const N = 3000;
    const base = Math.floor(Date.now() / 1000) * 1000 - N * 1000 - 60_000;
    const committed = new Set<number>();
    const watcher = await mqtt.connectAsync(broker.url, { clientId: 'kw-kill-watcher' });
    try {
      await watcher.subscribeAsync(`kilowatch/live/${KEY}`, { qos: 0 });
      watcher.on('message', (_t, payload) => {
        committed.add(JSON.parse(String(payload)).seq);
      });

      const first = await startChild();
      const publish = async (from: number, to: number) => {
        for (let i = from; i < to; i++) {
          const payload = JSON.stringify({ ts: base + i * 1000, seq: i, values: { eai1: i, vave1: 230 } });
          publisher.publish(`kilowatch/meters/${KEY}/readings`, payload, { qos: 1 });
          if (i % 50 === 49) await new Promise((r) => setTimeout(r, 10));
        }
      };
      // Half the stream, then kill -9 once part of it is committed (the rest in flight or queued).
      await publish(0, N / 2);
      await waitFor(() => committed.size >= 300, 30_000, 'first commits');
      await first.kill();
      expect(committed.size).toBeLessThan(N);
      // The other half arrives while ingest is down: the broker queues it for the persistent session.
      await publish(N / 2, N);
      await startChild();
      await waitFor(() => committed.size === N, 60_000, `all ${N} readings committed`).catch((e: Error) => {
        throw new Error(
          `${e.message}: have ${committed.size}; ingest output: ${started.map((p) => p.output()).join('\n')}`,
        );
      });
      await started.at(-1)?.stop();

      const store: TelemetryStore = await createDuckDbStore({ path: join(dataDir, 'telemetry.duckdb') });
      try {
        const rows: number[] = [];
        for await (const page of store.streamRaw({
          deviceKey: KEY,
          from: base,
          to: base + N * 1000,
          pageSize: 1000,
        })) {
          for (const r of page) rows.push(r.values.eai1 as number);
          for (const r of page) expect(r.ts).toBe(base + (r.values.eai1 as number) * 1000);
        }
        expect(rows).toEqual(Array.from({ length: N }, (_, i) => i));
      } finally {
        await store.close();
      }
    } finally {
      await watcher.endAsync();
      for (const p of started) await p.kill();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
