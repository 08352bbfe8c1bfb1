/** Environment → telemetry configuration (docs/configuration.md); the API's main reuses it. */
import { join, resolve } from 'node:path';
import { DEPLOYMENT_MEMORY_LIMIT, isMemorySize } from '@kilowatch/tsdb';

export interface TelemetryConfig {
  role: 'all' | 'api' | 'ingest';
  dataDir: string;
  /** DuckDB file of the embedded deployment. */
  duckdbPath: string;
  /** DuckDB's memory limit (`KW_DUCKDB_MEMORY_LIMIT`, e.g. `2GB`; default 1GB). */
  duckdbMemoryLimit: string;
  /** External broker; unset → the embedded aedes broker on `embeddedMqttPort`. */
  mqttUrl?: string;
  embeddedMqttPort: number;
  influx?: { url: string; database: string; token?: string; username?: string; password?: string };
  /** Demo meters: a year of history once, then live readings. */
  demo: boolean;
  /** Days of demo history written once into an empty store. */
  demoHistoryDays: number;
  simulatorIntervalMs: number;
  /** Shared subscription across ingest replicas. */
  shared: boolean;
  /** Publish committed readings on `kilowatch/live/<deviceKey>` for api replicas. */
  publishLive: boolean;
  rollupIntervalMs: number;
  deadLetterDir: string;
  clientId: string;
  /** The services' MQTT account (`KW_MQTT_USERNAME`, `KW_MQTT_PASSWORD`): for an external broker, or served by the embedded one. */
  mqttUsername?: string;
  mqttPassword?: string;
}

const flag = (v: string | undefined, dflt: boolean) =>
  v === undefined || v === '' ? dflt : ['1', 'true', 'on', 'yes'].includes(v.toLowerCase());

function int(v: string | undefined, dflt: number, name: string): number {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`);
  return n;
}

/** `KW_DUCKDB_MEMORY_LIMIT`, checked; unset → `DEPLOYMENT_MEMORY_LIMIT`. */
export function memoryLimit(v: string | undefined): string {
  if (v === undefined || v === '') return DEPLOYMENT_MEMORY_LIMIT;
  if (!isMemorySize(v))
    throw new Error(`KW_DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 2GB, got "${v}"`);
  return v.trim();
}

export function loadConfig(env: Record<string, string | undefined> = process.env): TelemetryConfig {
  const role = (env.KW_ROLE ?? 'all') as TelemetryConfig['role'];
  if (!['all', 'api', 'ingest'].includes(role))
    throw new Error(`KW_ROLE must be all, api or ingest, got "${role}"`);
  const dataDir = resolve(env.KW_DATA_DIR || './data');
  const mqttUrl = env.MQTT_URL || undefined;
  let influx: TelemetryConfig['influx'];
  if (env.INFLUX_URL) {
    influx = { url: env.INFLUX_URL, database: env.INFLUX_DB || 'kilowatch' };
    if (env.INFLUX_TOKEN) influx.token = env.INFLUX_TOKEN;
    if (env.INFLUX_USER) influx.username = env.INFLUX_USER;
    if (env.INFLUX_PASSWORD) influx.password = env.INFLUX_PASSWORD;
  }
  const embedded = !mqttUrl && !influx;
  const config: TelemetryConfig = {
    role,
    dataDir,
    duckdbPath: join(dataDir, 'telemetry.duckdb'),
    duckdbMemoryLimit: memoryLimit(env.KW_DUCKDB_MEMORY_LIMIT),
    embeddedMqttPort: int(env.KW_MQTT_PORT, 1883, 'KW_MQTT_PORT'),
    demo: flag(env.KW_DEMO, embedded),
    demoHistoryDays: int(env.KW_DEMO_HISTORY_DAYS, 365, 'KW_DEMO_HISTORY_DAYS'),
    simulatorIntervalMs: int(env.KW_SIM_INTERVAL_MS, 10_000, 'KW_SIM_INTERVAL_MS'),
    shared: flag(env.KW_INGEST_SHARED, Boolean(mqttUrl) && role === 'ingest'),
    publishLive: flag(env.KW_PUBLISH_LIVE, Boolean(mqttUrl)),
    rollupIntervalMs: int(env.KW_ROLLUP_INTERVAL_MS, 10_000, 'KW_ROLLUP_INTERVAL_MS'),
    deadLetterDir: join(dataDir, 'dead-letters'),
    clientId: env.KW_INGEST_CLIENT_ID || 'kilowatch-ingest',
  };
  if (mqttUrl) config.mqttUrl = mqttUrl;
  if (env.KW_MQTT_USERNAME) {
    config.mqttUsername = env.KW_MQTT_USERNAME;
    config.mqttPassword = env.KW_MQTT_PASSWORD ?? '';
  }
  if (influx) config.influx = influx;
  return config;
}
