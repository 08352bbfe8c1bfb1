/**
 * The server entry (`pnpm start`). With no configuration it runs the embedded deployment in one
 * process: MQTT broker (aedes), ingest, meter simulator with a year of demo history, DuckDB telemetry,
 * PGlite metadata and the API + built web client on http://127.0.0.1:8080. Environment variables
 * (docs/configuration.md) swap in external servers; KW_ROLE=api|ingest runs one side alone.
 *
 * The composition root: it reads the configuration, opens the store and the broker, starts the role
 * (`roles/ingest.ts`, or `roles/app.ts` for `api` and `all`) and orders the start and the shutdown.
 */
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import { type EmbeddedBroker, startEmbeddedBroker } from '@kilowatch/ingest';
import { createDuckDbStore, type DuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import { configFromEnv } from './config.ts';
import { chooseLogFormat, prettyDestination } from './log-format.ts';
import { databaseMeterAuth } from './mqtt-auth.ts';
import { readMqttTls } from './mqtt-tls.ts';
import { startAppRole } from './roles/app.ts';
import type { RoleContext, Stop } from './roles/context.ts';
import { DemoHistory } from './roles/demo-history.ts';
import { startIngestRole } from './roles/ingest.ts';
import { answerWhileStarting, takeHandedOver } from './starting.ts';

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

const demoHistory = new DemoHistory(config.dataDir, config.demoHistoryDays);

/** The one line a person starting Kilowatch reads: where it is and how to sign in. */
function welcomeLine(): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
  if (!config.demo) return `Kilowatch is ready at ${url}: sign in there, or create an account.`;
  const pending =
    demoHistory.state !== 'done'
      ? ' (its year of history is being written in the background; totals appear once it is)'
      : '';
  return `Kilowatch is ready at ${url}: open it and choose "Try the demo" to sign in${pending}.`;
}

async function main(): Promise<void> {
  const stops: Stop[] = [];
  /** Set once a shutdown starts. */
  let stopping = false;
  // The port answers at once ("starting", starting.ts; the compiled entry opened it before this module
  // loaded) and is handed to the API below, when it is ready.
  const starting =
    takeHandedOver() ?? (config.port === 0 ? undefined : await answerWhileStarting(config.port, config.host));
  const store = await openStore();
  stops.unshift(() => store.close());

  let broker: EmbeddedBroker | undefined;
  /** The API app, once built: the embedded broker checks meters' accounts through its repository. */
  let api: FastifyInstance | undefined;
  const ctx: RoleContext = {
    config,
    logger,
    store,
    stops,
    broker: () => broker,
    stopping: () => stopping,
    async mqttUrl() {
      if (config.mqttUrl) return config.mqttUrl;
      if (broker) return broker.url;
      broker = await startEmbeddedBroker({
        port: config.mqttPort,
        host: config.mqttHost,
        ...(mqttTls ? { tls: mqttTls } : {}),
        // Meters' accounts are read from the metadata database at each connection.
        auth: databaseMeterAuth(() => api?.devices),
        services: [mqttService],
      });
      const started = broker;
      stops.unshift(() => started.close());
      return started.url;
    },
  };

  let http: FastifyInstance;
  let listening: () => Promise<void> = async () => {};
  if (config.role === 'ingest') {
    http = (await startIngestRole(ctx)).http;
  } else {
    const role = await startAppRole(ctx, {
      serviceLogin,
      demoHistory,
      setApp: (app) => {
        api = app;
      },
    });
    http = role.http;
    listening = role.listening;
  }
  if (duckdb) {
    http.log.info(
      `telemetry in ${path.join(config.dataDir, 'telemetry.duckdb')} (DuckDB, memory limit ${await duckdb.memoryLimit()}; KW_DUCKDB_MEMORY_LIMIT sets it)`,
    );
  }
  stops.unshift(() => http.close());
  starting?.close();
  await http.listen({ port: config.port, host: config.host });
  await listening();
  // Last of the start's lines, set apart on a terminal: where Kilowatch is and how to sign in. A store
  // that is not ready says so after it (its check may wait on a remote server). (pino writes JSON lines
  // asynchronously, so in that form the ready line may come a line or two early; the text form is written
  // in order.)
  if (config.role !== 'ingest') {
    const writeWelcome = () =>
      process.stdout.write(`${logFormat === 'pretty' ? '\n' : ''}${welcomeLine()}\n`);
    writeWelcome();
    // The demo history's lines follow the ready line for minutes; once it is written, the ready line (now
    // without its "being written" remark) is the last line again.
    if (demoHistory.state === 'writing')
      void demoHistory.finished.then((written) => {
        if (written && !stopping) writeWelcome();
      });
  }
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
