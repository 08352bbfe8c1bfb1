/**
 * The server entry (`pnpm start`). With no configuration it runs the embedded deployment in one
 * process: MQTT broker (aedes), ingest, meter simulator with a year of demo history, DuckDB telemetry,
 * PGlite metadata and the API + built web client on http://127.0.0.1:8080. Environment variables
 * (docs/configuration.md) swap in external servers; KW_ROLE=api|ingest runs one side alone.
 *
 * Over 500 lines on purpose: it is the composition root, the one place that wires the parts of each role
 * together and orders their start and stop; the parts themselves live in their own modules.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, newMeterPassword } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import {
  backfillHistory,
  DEMO_DEVICES,
  type EmbeddedBroker,
  type IngestRuntime,
  type Simulator,
  startEmbeddedBroker,
  startIngest,
  startLiveSubscriber,
  startSimulator,
} from '@kilowatch/ingest';
import { createDuckDbStore, type DuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import Fastify, { type FastifyInstance } from 'fastify';
import { startSharedAlertSource } from './alerts/shared-source.ts';
import { buildApp } from './app.ts';
import { watchBrokerLog, withBrokerLog } from './broker-log.ts';
import { configFromEnv } from './config.ts';
import { createPostgresSql, type Queryable } from './db/sql.ts';
import { ensureDemoAccount } from './demo.ts';
import { startManagedBroker } from './dynsec.ts';
import { createLocalLiveSource } from './hub/live-source.ts';
import { startHubRelay } from './hub/relay.ts';
import { chooseLogFormat, errorInOneLine, prettyDestination } from './log-format.ts';
import { databaseMeterAuth } from './mqtt-auth.ts';
import { readMqttTls } from './mqtt-tls.ts';
import {
  type EmbeddedMeterParts,
  embeddedMeterAccess,
  type MeterAccess,
} from './plugins/app/meter-access.ts';
import { hashMeterPassword } from './plugins/app/meter-credentials.ts';
import { within } from './routes/health.ts';
import type { Dependency } from './routes/options.ts';
import { answerWhileStarting, takeHandedOver } from './starting.ts';

const DAY_MS = 86_400_000;
const RECENT_HISTORY_MS = 2 * DAY_MS;

const config = (() => {
  try {
    return configFromEnv();
  } catch (err) {
    // One line per wrong variable, then stop: nothing has started yet.
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
})();
/** The embedded broker's TLS listener, its certificate and key read and checked before anything starts. */
const mqttTls = (() => {
  try {
    return config.mqttTls ? readMqttTls(config.mqttTls) : undefined;
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  }
})();
const HISTORY_MS = config.demoHistoryDays * DAY_MS;
/**
 * The services' MQTT account: from the configuration, or made up at start for the embedded broker (whose
 * own ingest and API attach in process and need none; it serves whoever is given it then).
 */
const mqttService = config.mqttService ?? {
  username: 'kilowatch-service',
  password: randomBytes(24).toString('base64url'),
};
const serviceLogin = config.mqttService
  ? { username: config.mqttService.username, password: config.mqttService.password }
  : {};
/** Text on a terminal, JSON lines otherwise or when asked (`KW_LOG_FORMAT`, log-format.ts). */
const logFormat = chooseLogFormat(config.logFormat, process.stdout.isTTY);
const logger = {
  level: config.logLevel,
  ...(logFormat === 'pretty' ? { stream: prettyDestination() } : {}),
  serializers: {
    // Never log query strings: the hub carries the access token in one.
    req: (req: { method: string; url: string; ip?: string }) => ({
      method: req.method,
      url: req.url.split('?')[0],
      ip: req.ip,
    }),
  },
};

/** The embedded store, when telemetry is in DuckDB. */
let duckdb: DuckDbStore | undefined;

async function openStore(): Promise<TelemetryStore> {
  if (config.influx) return createInfluxStore(config.influx);
  await mkdir(config.dataDir, { recursive: true });
  duckdb = await createDuckDbStore({
    path: path.join(config.dataDir, 'telemetry.duckdb'),
    memoryLimit: config.duckdbMemoryLimit,
    ...(config.duckdbIdleMemoryLimit ? { idleMemoryLimit: config.duckdbIdleMemoryLimit } : {}),
    ...(config.duckdbBulkMemoryLimit ? { bulkMemoryLimit: config.duckdbBulkMemoryLimit } : {}),
  });
  return duckdb;
}

/**
 * The demo's year of history, written once in the background (a marker file records completion). The
 * last two days go first, so the dashboard's recent charts are complete within seconds; the rest of the
 * year follows oldest-first. Counters are a pure function of time, so the order changes no value.
 */
const demoHistoryMarker = () => path.join(config.dataDir, 'demo-history.done');

async function writeDemoHistory(store: TelemetryStore, http: FastifyInstance): Promise<void> {
  const marker = demoHistoryMarker();
  if (existsSync(marker)) return;
  const to = Math.floor(Date.now() / 60_000) * 60_000;
  const recentFrom = to - Math.min(RECENT_HISTORY_MS, HISTORY_MS);
  http.log.info(
    `writing ${HISTORY_MS / DAY_MS} days of demo history for ${DEMO_DEVICES.length} simulated meters (once, in the background)…`,
  );
  // Generated and laid out in columns in a worker thread; batches of 10,000 readings (the store still
  // merges them in large transactions), so handing one to DuckDB holds the event loop only briefly.
  const batchSize = 10_000;
  // A failed load runs once more at once: the store keeps what it stored, and after running out of memory
  // under its bulk memory limit it gives that limit up (tsdb limits.ts), so the second run completes it.
  const load = async (from: number, until: number) => {
    const opts = { from, to: until, batchSize, thread: true };
    try {
      return await backfillHistory(store, DEMO_DEVICES, opts);
    } catch (e) {
      // One line: DuckDB's out-of-memory message goes on for paragraphs of possible solutions.
      http.log.warn(`demo history: writing failed (${errorInOneLine(e)}); trying once more`);
      return backfillHistory(store, DEMO_DEVICES, opts);
    }
  };
  const recent = await load(recentFrom, to);
  await store.refreshRollups();
  demoHistoryState = 'recent';
  http.log.info(`demo history: the last two days are written (${recent.readings} readings)`);
  const older = await load(to - HISTORY_MS, recentFrom);
  await store.refreshRollups();
  await writeFile(marker, new Date().toISOString());
  http.log.info(`demo history written: ${recent.readings + older.readings} readings`);
}

let demoHistory: Promise<void> | undefined;
/** `recent`: the last two days are there; `done`: the whole year. */
let demoHistoryState: 'none' | 'writing' | 'recent' | 'done' | 'failed' = 'none';
const DEMO_KEYS = new Set(DEMO_DEVICES.map((d) => d.deviceKey));
/**
 * Whether a meter's totals would count only part of its history: a demo meter's until its history is
 * written (a failed write is written again at the next start, so its totals stay partial until then).
 */
const historyLoading = (deviceKey: string) =>
  DEMO_KEYS.has(deviceKey) &&
  (demoHistoryState === 'writing' || demoHistoryState === 'recent' || demoHistoryState === 'failed');

/** The one line a person starting Kilowatch reads: where it is and how to sign in. */
function welcomeLine(): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
  if (!config.demo) return `Kilowatch is ready at ${url}: sign in there, or create an account.`;
  const pending =
    demoHistoryState !== 'done'
      ? ' (its year of history is being written in the background; totals appear once it is)'
      : '';
  return `Kilowatch is ready at ${url}: open it and choose "Try the demo" to sign in${pending}.`;
}

/** The claimed device with a stock Tasmota topic's MAC suffix, when exactly one has it. */
function tasmotaDeviceIn(sql: Queryable) {
  return async (suffix: string): Promise<string | null> => {
    // The one device that holds the suffix (a unique index); a twin uses its key as its Topic.
    const { rows } = await sql.query<{ device_key: string }>(
      'select device_key from devices where stock_suffix = $1',
      [suffix.toUpperCase()],
    );
    return rows[0]?.device_key ?? null;
  };
}

/** Ingest's part of `/api/health`: not ok while the store refuses its writes, with the store's reason. */
function ingestHealth(rt: IngestRuntime): { ok: boolean; devices: number; detail?: string } {
  const problem = rt.writeProblem();
  return { ok: problem === null, devices: rt.deviceStates().length, ...(problem ? { detail: problem } : {}) };
}

async function main(): Promise<void> {
  const stops: (() => Promise<unknown>)[] = [];
  /** Set once a shutdown starts. */
  let stopping = false;
  // The port answers at once ("starting", starting.ts; the compiled entry opened it before this module
  // loaded) and is handed to the API below, when it is ready.
  const starting =
    takeHandedOver() ?? (config.port === 0 ? undefined : await answerWhileStarting(config.port, config.host));
  const store = await openStore();
  stops.unshift(() => store.close());

  let broker: EmbeddedBroker | undefined;
  let runtime: IngestRuntime | undefined;
  let simulator: Simulator | undefined;
  /** Where the demo's simulated meters connect (set when they run), started once the server answers. */
  let simulatorUrl: string | undefined;
  let http: FastifyInstance;
  /** The API app, once built: the embedded broker checks meters' accounts through its repository. */
  let api: FastifyInstance | undefined;
  /** The embedded broker and ingest, as the API's meter access sees them once they are up. */
  const meterParts: EmbeddedMeterParts = {};
  /**
   * The simulated meters' accounts (embedded demo). A demo meter's rotated password is theirs before the
   * old connection is closed, so the simulator reconnects with it; a deleted demo meter's simulator stops.
   */
  const demoCredentials = new Map<string, { username: string; password: string }>();
  const embeddedAccess = embeddedMeterAccess(meterParts);
  const embeddedWithDemo: MeterAccess = {
    ...embeddedAccess,
    async issued(deviceKey, credentials) {
      if (demoCredentials.has(deviceKey)) demoCredentials.set(deviceKey, credentials);
      await embeddedAccess.issued(deviceKey, credentials);
    },
    async revoked(deviceKey, username) {
      demoCredentials.delete(deviceKey);
      await embeddedAccess.revoked(deviceKey, username);
    },
  };

  const mqttUrl = async () => {
    if (config.mqttUrl) return config.mqttUrl;
    broker = await startEmbeddedBroker({
      port: config.mqttPort,
      host: config.mqttHost,
      ...(mqttTls ? { tls: mqttTls } : {}),
      // Meters' accounts are read from the metadata database at each connection.
      auth: databaseMeterAuth(() => api?.devices),
      services: [mqttService],
    });
    meterParts.broker = broker;
    stops.unshift(() => broker!.close());
    return broker.url;
  };

  if (config.role === 'ingest') {
    const url = await mqttUrl();
    http = Fastify({ logger });
    // Ingest processes take turns refreshing rollups under a PostgreSQL advisory lock: each dirty range
    // once, and still after one of them dies. Without DATABASE_URL this one refreshes on its own.
    const rollupSql = config.databaseUrl
      ? await createPostgresSql({ connectionString: config.databaseUrl, max: 2 })
      : undefined;
    if (rollupSql) stops.unshift(() => rollupSql.close());
    // The ingest processes alive, so that a graceful stop leaves the shared group unless it is the last.
    const members = rollupSql ? await rollupSql.member('ingest') : undefined;
    runtime = await startIngest({
      store,
      ...(broker
        ? { broker }
        : {
            mqttUrl: url,
            mqttUsername: config.mqttService?.username,
            mqttPassword: config.mqttService?.password,
          }),
      clientId: config.ingestClientId,
      sessionExpirySeconds: config.ingestSessionExpirySeconds,
      rollupIntervalMs: config.rollupIntervalMs,
      ...(rollupSql ? { rollupLock: (fn) => rollupSql.exclusive('rollups', fn, { wait: false }) } : {}),
      ...(members ? { leaveGroup: async () => !(await members.leave()) } : {}),
      shared: config.ingestShared,
      publishLive: config.publishLive,
      meterLimits: config.meterLimits,
      ...(rollupSql && !broker ? { tasmotaDevice: tasmotaDeviceIn(rollupSql) } : {}),
      deadLetterDir: path.join(config.dataDir, 'dead-letters'),
      logger: http.log,
    });
    stops.unshift(() => runtime!.stop());
    const rt = runtime;
    http.get('/metrics', async (_req, reply) =>
      reply.type('text/plain; version=0.0.4').send(rt.metricsText()),
    );
    // Liveness: the process is up. Readiness: it takes readings, which needs the broker and the store.
    http.get('/api/health/live', async () => ({ status: 'ok', role: 'ingest' }));
    http.get('/api/health/ready', async (_req, reply) => {
      const storeHealth = await within(store.health(), (detail) => ({
        ok: false,
        engine: store.engine,
        detail,
      }));
      const dependencies = {
        mqtt: { ok: rt.mqttConnected(), required: true, url },
        store: { ...storeHealth, required: true },
      };
      const ready = dependencies.mqtt.ok && dependencies.store.ok;
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not-ready', role: 'ingest', dependencies });
    });
    http.get('/api/health', async (_req, reply) => {
      const ingest = ingestHealth(rt);
      const storeHealth = await within(store.health(), (detail) => ({
        ok: false,
        engine: store.engine,
        detail,
      }));
      if (!ingest.ok || !storeHealth.ok) reply.code(503);
      return {
        status: ingest.ok && storeHealth.ok ? 'ok' : 'degraded',
        store: storeHealth,
        broker: { ok: true, url },
        ingest,
      };
    });
  } else {
    // The hub and the alerts listen here; in one process the ingest bus feeds it once ingest is up.
    const live = createLocalLiveSource();
    // On an external broker, every API process (an api replica, or an all-in-one beside api replicas or
    // other ingest processes) takes the live readings from the broker: all of them for its own WebSocket
    // clients (plain subscription to kilowatch/live/+), and each one evaluated for alerts by one process
    // only (shared). Its own ingest's bus would see only what that ingest took, and alerts evaluated on
    // it as well as by the group would be raised twice.
    // Meters' accounts on an external Mosquitto, kept in step through its dynamic security plugin (first,
    // so that the services' account exists before the services connect with it).
    const managed =
      config.mqttUrl && config.mqttAdmin
        ? await startManagedBroker({
            mqttUrl: config.mqttUrl,
            admin: config.mqttAdmin,
            service: config.mqttService,
            deviceKeys: () => api?.devices.deviceKeys(),
            withoutStockTopics: () => api?.devices.keysWithoutStockSuffix(),
            log: { info: (m) => console.log(m), warn: (m) => console.warn(m) },
          })
        : undefined;
    if (managed) stops.unshift(() => managed.stop());
    // What the broker's log and ingest report of meters' connections and refusals (the connection route).
    const brokerLog =
      managed && config.mqttUrl && config.mqttService
        ? watchBrokerLog({
            mqttUrl: config.mqttUrl,
            username: config.mqttService.username,
            password: config.mqttService.password,
            tasmotaDevice: async (suffix) => (api ? tasmotaDeviceIn(api.sql)(suffix) : null),
          })
        : undefined;
    if (brokerLog) stops.unshift(() => brokerLog.stop());
    const managedAccess =
      managed && brokerLog ? withBrokerLog(managed, brokerLog, () => meterParts.runtime) : managed;
    if (!managed && config.mqttUrl)
      console.warn(
        'MQTT_URL without KW_MQTT_ADMIN_USERNAME: meters\' accounts are not put on the broker (README "Meters on Mosquitto")',
      );
    const replica = config.mqttUrl
      ? {
          subscriber: await startLiveSubscriber({ mqttUrl: config.mqttUrl, ...serviceLogin }),
          alerts: await startSharedAlertSource({ mqttUrl: config.mqttUrl, ...serviceLogin }),
          // Notifications, export progress and logouts reach the sockets other processes hold.
          relay: await startHubRelay({
            mqttUrl: config.mqttUrl,
            ...serviceLogin,
            onError: (err) => console.warn('hub relay publish failed', err),
          }),
        }
      : undefined;
    if (config.role === 'api' && !config.mqttUrl) {
      console.warn('KW_ROLE=api without MQTT_URL: no live readings reach the hub or the alerts');
    }
    if (replica) {
      const offs = [
        replica.subscriber.onReading((r) => live.publish(r)),
        replica.subscriber.onStatus((st) => live.publishStatus(st)),
      ];
      stops.unshift(async () => {
        for (const off of offs) off();
        await replica.subscriber.stop();
        await replica.alerts.stop();
        await replica.relay.stop();
      });
    }
    http = await buildApp({
      config,
      store,
      logger,
      live,
      ...(replica
        ? {
            liveServices: {
              alerts: { alertSource: replica.alerts, sharedState: true },
              hub: { relay: replica.relay },
            },
          }
        : {}),
      deviceStates: {
        deviceState: (key) => replica?.subscriber.deviceState(key) ?? runtime?.deviceState(key),
      },
      metricsText: () =>
        [
          replica
            ? [
                '# HELP kilowatch_live_subscriber_connected 1 while the live subscription (kilowatch/live/+) is connected.',
                '# TYPE kilowatch_live_subscriber_connected gauge',
                `kilowatch_live_subscriber_connected ${replica.subscriber.connected() ? 1 : 0}`,
                '# HELP kilowatch_live_readings_received_total Live readings received from the broker.',
                '# TYPE kilowatch_live_readings_received_total counter',
                `kilowatch_live_readings_received_total ${replica.subscriber.received()}`,
                '# HELP kilowatch_live_messages_dropped_total Messages on kilowatch/live/ that were not a reading, dropped.',
                '# TYPE kilowatch_live_messages_dropped_total counter',
                `kilowatch_live_messages_dropped_total{subscription="hub"} ${replica.subscriber.dropped()}`,
                `kilowatch_live_messages_dropped_total{subscription="alerts"} ${replica.alerts.dropped()}`,
                '# HELP kilowatch_alerts_source_connected 1 while the shared alert subscription is connected.',
                '# TYPE kilowatch_alerts_source_connected gauge',
                `kilowatch_alerts_source_connected ${replica.alerts.connected() ? 1 : 0}`,
              ].join('\n')
            : '',
          runtime?.metricsText() ?? '',
          broker?.metricsText() ?? '',
        ]
          .filter(Boolean)
          .join('\n'),
      ...(config.mqttUrl
        ? managedAccess
          ? { meterAccess: managedAccess }
          : {}
        : { meterAccess: embeddedWithDemo }),
      readiness: {
        role: config.role,
        // An api replica serves login, devices and settings without the telemetry store; a process that
        // also ingests needs it.
        storeRequired: config.role === 'all',
        dependencies: (): Record<string, Dependency> =>
          replica
            ? {
                // Live readings for the hub and the alerts: reported, not required (the rest still works).
                mqtt: {
                  ok: replica.subscriber.connected() && replica.alerts.connected(),
                  required: false,
                  live: replica.subscriber.connected(),
                  alerts: replica.alerts.connected(),
                },
              }
            : broker
              ? { mqtt: { ok: true, required: true, embedded: true } }
              : {},
      },
      historyLoading,
      health: async () =>
        config.role === 'all'
          ? {
              broker: { ok: Boolean(broker) || Boolean(config.mqttUrl), embedded: Boolean(broker) },
              ingest: runtime ? ingestHealth(runtime) : { ok: false, devices: 0 },
              demoHistory: { ok: true, state: demoHistoryState },
            }
          : {},
    });
    await http.ready();
    api = http;
    // Devices claimed before their accounts existed, or deleted while the broker was away.
    if (managed)
      void managed
        .reconcile()
        .catch((err: unknown) => http.log.warn({ err }, 'meter account reconcile failed'));

    if (config.role === 'all') {
      const members = config.embedded ? undefined : await http.sql.member('ingest');
      if (config.demo) await ensureDemoAccount(http, DEMO_DEVICES);
      const url = await mqttUrl();
      runtime = await startIngest({
        store,
        ...(broker
          ? { broker }
          : {
              mqttUrl: url,
              mqttUsername: config.mqttService?.username,
              mqttPassword: config.mqttService?.password,
            }),
        clientId: config.ingestClientId,
        sessionExpirySeconds: config.ingestSessionExpirySeconds,
        rollupIntervalMs: config.rollupIntervalMs,
        rollupLock: (fn) => http.sql.exclusive('rollups', fn, { wait: false }),
        ...(members ? { leaveGroup: async () => !(await members.leave()) } : {}),
        shared: config.ingestShared,
        publishLive: config.publishLive,
        meterLimits: config.meterLimits,
        ...(broker ? {} : { tasmotaDevice: tasmotaDeviceIn(http.sql) }),
        deadLetterDir: path.join(config.dataDir, 'dead-letters'),
        logger: http.log,
      });
      meterParts.runtime = runtime;
      stops.unshift(() => runtime!.stop());
      const unsubscribe = replica
        ? []
        : [
            runtime.bus.onReading((r) => live.publish(r)),
            runtime.bus.onStatus((st) => live.publishStatus(st)),
          ];
      stops.unshift(async () => {
        for (const off of unsubscribe) off();
      });
      if (config.demo) {
        simulatorUrl = url;
        if (existsSync(demoHistoryMarker())) demoHistoryState = 'done';
        else demoHistoryState = 'writing';
      }
    }
  }
  if (duckdb) {
    http.log.info(
      `telemetry in ${path.join(config.dataDir, 'telemetry.duckdb')} (DuckDB, memory limit ${await duckdb.memoryLimit()}; KW_DUCKDB_MEMORY_LIMIT sets it)`,
    );
  }
  stops.unshift(() => http.close());
  starting?.close();
  await http.listen({ port: config.port, host: config.host });
  if (simulatorUrl !== undefined) {
    // The simulated meters start once the server answers (~0.2 s of a start). They connect as meters do,
    // each with its own account (a new password per start).
    for (const d of DEMO_DEVICES) {
      const password = newMeterPassword();
      const account = { username: d.deviceKey, passwordHash: hashMeterPassword(password) };
      if (await http.devices.setMqttCredentialsByKey(d.deviceKey, account))
        demoCredentials.set(d.deviceKey, { username: d.deviceKey, password });
    }
    simulator = await startSimulator({
      mqttUrl: simulatorUrl,
      devices: DEMO_DEVICES,
      intervalMs: config.simulatorIntervalMs,
      credentialsOf: (d) => demoCredentials.get(d.deviceKey),
    });
    stops.unshift(() => simulator!.stop());
  }
  // The demo history is written once the server answers, so its first requests do not wait on it.
  if (demoHistoryState === 'writing') {
    const app = http;
    demoHistory = writeDemoHistory(store, app).then(
      () => {
        demoHistoryState = 'done';
      },
      (err: unknown) => {
        demoHistoryState = 'failed';
        // Cut short by a shutdown: expected, not an error.
        if (stopping)
          app.log.info('demo history interrupted by the shutdown; it is written again at the next start');
        else app.log.error({ err }, 'demo history failed; it is written again at the next start');
      },
    );
  }
  // Last of the start's lines, set apart on a terminal: where Kilowatch is and how to sign in. A store
  // that is not ready says so after it (its check may wait on a remote server). (pino writes JSON lines
  // asynchronously, so in that form the ready line may come a line or two early; the text form is written
  // in order.)
  if (config.role !== 'ingest')
    process.stdout.write(`${logFormat === 'pretty' ? '\n' : ''}${welcomeLine()}\n`);
  void store.health().then(
    (h) => {
      if (!h.ok) http.log.error(`the telemetry store is not ready: ${h.detail}`);
    },
    (err: unknown) => http.log.error({ err }, 'the telemetry store is not ready'),
  );

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    http.log.info(`${signal}: shutting down`);
    // A history write in progress is abandoned; without its marker it runs again at the next start.
    void demoHistory;
    for (const stop of stops) {
      await stop().catch((err: unknown) => http.log.error({ err }, 'shutdown step failed'));
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
