/**
 * The API role (`KW_ROLE=api`) and the all-in-one (`all`, the default): the Fastify app with its hub and
 * alerts, the meters' accounts on the broker, and — all-in-one — ingest in the same process and the
 * demo's simulated meters. On an external broker, every API process takes the live readings from the
 * broker: all of them for its own WebSocket clients (plain subscription to kilowatch/live/+), and each one
 * evaluated for alerts by one process only (shared). Its own ingest's bus would see only what that ingest
 * took, and alerts evaluated on it as well as by the group would be raised twice.
 */
import {
  DEMO_DEVICES,
  type IngestRuntime,
  startIngest,
  startLiveSubscriber,
  startSimulator,
} from '@kilowatch/ingest';
import type { FastifyInstance } from 'fastify';
import { startSharedAlertSource } from '../alerts/shared-source.ts';
import { buildApp } from '../app.ts';
import { watchBrokerLog, withBrokerLog } from '../broker-log.ts';
import { ensureDemoAccount } from '../demo.ts';
import { startManagedBroker } from '../dynsec.ts';
import { createLocalLiveSource } from '../hub/live-source.ts';
import { startHubRelay } from '../hub/relay.ts';
import {
  type EmbeddedMeterParts,
  embeddedMeterAccess,
  type MeterAccess,
} from '../plugins/app/meter-access.ts';
import { hashMeterPassword, newMeterPassword } from '../plugins/app/meter-credentials.ts';
import { ingestHealth } from '../routes/health.ts';
import type { Dependency } from '../routes/options.ts';
import { ingestOptions, type RoleContext, tasmotaDeviceIn } from './context.ts';
import type { DemoHistory } from './demo-history.ts';

export interface AppRole {
  http: FastifyInstance;
  /** Once the server answers: the demo's simulated meters connect and its history is written. */
  listening(): Promise<void>;
}

export async function startAppRole(
  ctx: RoleContext,
  parts: {
    /** The services' broker login beside an external broker (none for the embedded one). */
    serviceLogin: { username?: string; password?: string };
    demoHistory: DemoHistory;
    /** The app, once built (the embedded broker's meter checks go through it). */
    setApp(app: FastifyInstance): void;
  },
): Promise<AppRole> {
  const { config, store, stops } = ctx;
  const { serviceLogin, demoHistory } = parts;
  let api: FastifyInstance | undefined;
  let runtime: IngestRuntime | undefined;
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

  // The hub and the alerts listen here; in one process the ingest bus feeds it once ingest is up.
  const live = createLocalLiveSource();
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
  const http = await buildApp({
    config,
    store,
    logger: ctx.logger,
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
        ctx.broker()?.metricsText() ?? '',
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
          : ctx.broker()
            ? { mqtt: { ok: true, required: true, embedded: true } }
            : {},
    },
    historyLoading: demoHistory.loading,
    health: async () =>
      config.role === 'all'
        ? {
            broker: { ok: Boolean(ctx.broker()) || Boolean(config.mqttUrl), embedded: Boolean(ctx.broker()) },
            ingest: runtime ? ingestHealth(runtime) : { ok: false, devices: 0 },
            demoHistory: { ok: true, state: demoHistory.state },
          }
        : {},
  });
  await http.ready();
  api = http;
  parts.setApp(http);
  // Devices claimed before their accounts existed, or deleted while the broker was away.
  if (managed)
    void managed
      .reconcile()
      .catch((err: unknown) => http.log.warn({ err }, 'meter account reconcile failed'));

  /** Where the demo's simulated meters connect (set when they run), started once the server answers. */
  let simulatorUrl: string | undefined;
  if (config.role === 'all') {
    const members = config.embedded ? undefined : await http.sql.member('ingest');
    if (config.demo) await ensureDemoAccount(http, DEMO_DEVICES);
    const url = await ctx.mqttUrl();
    meterParts.broker = ctx.broker();
    const started = await startIngest(
      ingestOptions(ctx, url, {
        rollupLock: (fn) => http.sql.exclusive('rollups', fn, { wait: false }),
        ...(members ? { leaveGroup: async () => !(await members.leave()) } : {}),
        ...(ctx.broker() ? {} : { tasmotaDevice: tasmotaDeviceIn(http.sql) }),
        logger: http.log,
      }),
    );
    runtime = started;
    meterParts.runtime = started;
    stops.unshift(() => started.stop());
    const unsubscribe = replica
      ? []
      : [started.bus.onReading((r) => live.publish(r)), started.bus.onStatus((st) => live.publishStatus(st))];
    stops.unshift(async () => {
      for (const off of unsubscribe) off();
    });
    if (config.demo) {
      simulatorUrl = url;
      demoHistory.expect();
    }
  }

  return {
    http,
    async listening() {
      if (simulatorUrl !== undefined) {
        // The simulated meters start once the server answers (~0.2 s of a start). They connect as meters
        // do, each with its own account (a new password per start).
        for (const d of DEMO_DEVICES) {
          const password = newMeterPassword();
          const account = { username: d.deviceKey, passwordHash: hashMeterPassword(password) };
          if (await http.devices.setMqttCredentialsByKey(d.deviceKey, account))
            demoCredentials.set(d.deviceKey, { username: d.deviceKey, password });
        }
        const simulator = await startSimulator({
          mqttUrl: simulatorUrl,
          devices: DEMO_DEVICES,
          intervalMs: config.simulatorIntervalMs,
          credentialsOf: (d) => demoCredentials.get(d.deviceKey),
        });
        stops.unshift(() => simulator.stop());
      }
      // The demo history is written once the server answers, so its first requests do not wait on it.
      demoHistory.start(store, http.log, ctx.stopping);
    },
  };
}
