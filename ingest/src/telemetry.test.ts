import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Reading } from '@kilowatch/core';
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';
import { DEMO_DEVICES } from './simulator/devices.ts';
import { startTelemetry } from './telemetry.ts';
import { waitFor } from './test/helpers.ts';

const quiet = { info() {}, warn() {}, error() {} };

describe('loadConfig', () => {
  it.each([
    [{}, { demo: true, shared: false, publishLive: false, embeddedMqttPort: 1883, rollupIntervalMs: 10_000 }],
    [
      { MQTT_URL: 'mqtt://127.0.0.1:1884' },
      { demo: false, shared: false, publishLive: true, mqttUrl: 'mqtt://127.0.0.1:1884' },
    ],
    [
      { MQTT_URL: 'mqtt://127.0.0.1:1884', KW_ROLE: 'ingest' },
      { shared: true, role: 'ingest' },
    ],
    [
      { INFLUX_URL: 'http://127.0.0.1:8086', INFLUX_DB: 'kw', INFLUX_USER: 'u', INFLUX_PASSWORD: 'p' },
      { demo: false, influx: { url: 'http://127.0.0.1:8086', database: 'kw', username: 'u', password: 'p' } },
    ],
    [
      { INFLUX_URL: 'http://127.0.0.1:8086', INFLUX_TOKEN: 't' },
      { influx: { url: 'http://127.0.0.1:8086', database: 'kilowatch', token: 't' } },
    ],
    [
      { KW_DEMO: '0', KW_MQTT_PORT: '0' },
      { demo: false, embeddedMqttPort: 0 },
    ],
  ] as const)('%j', (env, expected) => {
    expect(loadConfig(env)).toMatchObject(expected);
  });

  it('gives DuckDB 1 GB unless KW_DUCKDB_MEMORY_LIMIT says otherwise', () => {
    expect(loadConfig({}).duckdbMemoryLimit).toBe('1GB');
    expect(loadConfig({ KW_DUCKDB_MEMORY_LIMIT: ' 3GB ' }).duckdbMemoryLimit).toBe('3GB');
    expect(() => loadConfig({ KW_DUCKDB_MEMORY_LIMIT: '80%' })).toThrow(
      'KW_DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 2GB, got "80%"',
    );
  });

  it('puts the DuckDB file and dead letters under KW_DATA_DIR', () => {
    const c = loadConfig({ KW_DATA_DIR: '/srv/kw' });
    expect(c.duckdbPath).toBe('/srv/kw/telemetry.duckdb');
    expect(c.deadLetterDir).toBe('/srv/kw/dead-letters');
  });

  it.each([
    [{ KW_ROLE: 'worker' }],
    [{ KW_MQTT_PORT: '-1' }],
    [{ KW_ROLLUP_INTERVAL_MS: 'soon' }],
    [{ KW_DUCKDB_MEMORY_LIMIT: 'half' }],
  ])('rejects %j', (env) => {
    expect(() => loadConfig(env)).toThrow();
  });
});

describe('startTelemetry (embedded)', () => {
  it('backfills the demo history into an empty DuckDB file, then simulated meters publish live readings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kw-telemetry-'));
    const config = loadConfig({
      KW_DATA_DIR: dir,
      KW_MQTT_PORT: '0',
      KW_DEMO_HISTORY_DAYS: '1',
      KW_SIM_INTERVAL_MS: '500',
    });
    const telemetry = await startTelemetry(config, { logger: quiet });
    try {
      expect(telemetry.broker?.url).toBe(telemetry.mqttUrl);
      expect((await telemetry.store.devices()).sort()).toEqual(DEMO_DEVICES.map((d) => d.deviceKey).sort());
      const live: Reading[] = [];
      telemetry.runtime.bus.onReading((r) => live.push(r));
      await waitFor(
        () => new Set(live.map((r) => r.deviceKey)).size === DEMO_DEVICES.length,
        15_000,
        'live readings',
      );
      const weak = DEMO_DEVICES.find((d) => d.kind === 'single-phase')!;
      expect(telemetry.runtime.deviceState(weak.deviceKey)?.status).toBe('weak-signal');

      // A meter of one's own reaches the same store through the embedded broker.
      const own = telemetry.meterAuth!.issue('00aa00bb00cc');
      const meter = await mqtt.connectAsync(telemetry.mqttUrl, { clientId: 'kw-own-meter', ...own });
      const ts = Math.floor(Date.now() / 1000) * 1000 - 5000;
      await meter.publishAsync(
        'kilowatch/meters/00aa00bb00cc/readings',
        JSON.stringify({ ts, values: { vave1: 230.5 } }),
        { qos: 1 },
      );
      await meter.endAsync();
      await waitFor(async () => (await telemetry.store.latest('00aa00bb00cc')) !== null, 10_000, 'own meter');
    } finally {
      await telemetry.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
