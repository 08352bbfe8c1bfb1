/**
 * The telemetry half of a deployment: broker (embedded unless MQTT_URL), store, ingest, and the demo
 * simulator with its year of history. The API's main composes this with the HTTP server.
 */
import { mkdir } from 'node:fs/promises';
import { DAY_MS } from '@kilowatch/core';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { consoleLogger, type IngestLogger, type IngestRuntime, startIngest } from './bridge.ts';
import { type BrokerAuth, type EmbeddedBroker, startEmbeddedBroker } from './broker.ts';
import type { TelemetryConfig } from './config.ts';
import { createMemoryMeterAuth, type MemoryMeterAuth } from './meterAuth.ts';
import { backfillHistory } from './simulator/backfill.ts';
import { DEMO_DEVICES } from './simulator/devices.ts';
import { type Simulator, startSimulator } from './simulator/live.ts';

export interface Telemetry {
  store: TelemetryStore;
  runtime: IngestRuntime;
  broker?: EmbeddedBroker;
  simulator?: Simulator;
  /** The embedded broker's meter accounts, when kept in memory here (no `deps.auth`). */
  meterAuth?: MemoryMeterAuth;
  mqttUrl: string;
  stop(): Promise<void>;
}

export interface StartTelemetryDeps {
  /**
   * Opens the store. Default: the DuckDB file. InfluxDB (config.influx) is opened by the caller, because
   * ingest does not depend on the InfluxDB engine (docs/architecture.md §Packages).
   */
  openStore?: (config: TelemetryConfig) => Promise<TelemetryStore>;
  logger?: IngestLogger;
  /** Meters' credentials for the embedded broker; default: the simulated meters' own, made at start. */
  auth?: BrokerAuth;
}

export async function startTelemetry(
  config: TelemetryConfig,
  deps: StartTelemetryDeps = {},
): Promise<Telemetry> {
  const log = deps.logger ?? consoleLogger(true);
  let store: TelemetryStore;
  if (deps.openStore) store = await deps.openStore(config);
  else if (config.influx) {
    throw new Error('INFLUX_URL is set: open the InfluxDB store in the caller and pass it as deps.openStore');
  } else {
    await mkdir(config.dataDir, { recursive: true });
    store = await createDuckDbStore({ path: config.duckdbPath, memoryLimit: config.duckdbMemoryLimit });
  }
  let broker: EmbeddedBroker | undefined;
  try {
    const demoAuth = createMemoryMeterAuth();
    const demoCredentials = new Map(DEMO_DEVICES.map((d) => [d.deviceKey, demoAuth.issue(d.deviceKey)]));
    const services = config.mqttUsername
      ? [{ username: config.mqttUsername, password: config.mqttPassword ?? '' }]
      : [];
    if (!config.mqttUrl)
      broker = await startEmbeddedBroker({
        port: config.embeddedMqttPort,
        auth: deps.auth ?? demoAuth,
        services,
      });
    const mqttUrl = config.mqttUrl ?? (broker as EmbeddedBroker).url;

    if (config.demo && (await store.devices()).length === 0) {
      const to = Math.floor(Date.now() / 60_000) * 60_000;
      const t0 = performance.now();
      log.info(
        `writing ${config.demoHistoryDays} days of demo history for ${DEMO_DEVICES.length} simulated meters…`,
      );
      const { readings } = await backfillHistory(store, DEMO_DEVICES, {
        from: to - config.demoHistoryDays * DAY_MS,
        to,
      });
      await store.refreshRollups();
      log.info(`demo history: ${readings} readings in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }

    const runtime = await startIngest({
      store,
      ...(broker
        ? { broker }
        : { mqttUrl, mqttUsername: config.mqttUsername, mqttPassword: config.mqttPassword }),
      clientId: config.clientId,
      shared: config.shared,
      publishLive: config.publishLive,
      rollupIntervalMs: config.rollupIntervalMs,
      deadLetterDir: config.deadLetterDir,
      logger: log,
    });
    const simulator = config.demo
      ? await startSimulator({
          mqttUrl,
          devices: DEMO_DEVICES,
          intervalMs: config.simulatorIntervalMs,
          rssiOf: (d) => (d.kind === 'single-phase' ? -84 : -58),
          credentialsOf: (d) => demoCredentials.get(d.deviceKey),
        })
      : undefined;
    log.info(
      `telemetry: MQTT ${mqttUrl}${broker ? ' (embedded)' : ''}, store ${config.influx ? config.influx.url : config.duckdbPath}` +
        `${simulator ? `, ${DEMO_DEVICES.length} simulated meters every ${config.simulatorIntervalMs / 1000} s` : ''}`,
    );
    const out: Telemetry = {
      store,
      runtime,
      mqttUrl,
      async stop() {
        await simulator?.stop();
        await runtime.stop();
        await store.close();
        await broker?.close();
      },
    };
    if (broker) out.broker = broker;
    if (broker && !deps.auth) out.meterAuth = demoAuth;
    if (simulator) out.simulator = simulator;
    return out;
  } catch (e) {
    await broker?.close();
    await store.close();
    throw e;
  }
}
