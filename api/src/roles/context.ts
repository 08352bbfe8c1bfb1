/**
 * What the roles of a Kilowatch process share (`main.ts` composes them): the configuration, the
 * telemetry store, the stop steps, the broker, and the options ingest runs with in either role.
 */
import path from 'node:path';
import type { EmbeddedBroker, IngestOptions } from '@kilowatch/ingest';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyServerOptions } from 'fastify';
import type { ServerConfig } from '../config.ts';
import type { Queryable } from '../db/sql.ts';

export type Stop = () => Promise<unknown>;

export interface RoleContext {
  config: ServerConfig;
  logger: FastifyServerOptions['logger'];
  store: TelemetryStore;
  /**
   * The shutdown's steps, run first to last. A part puts its stop in front once it is up, so the part
   * started last stops first.
   */
  stops: Stop[];
  /** The broker's URL: MQTT_URL's, or the embedded broker's, which the first call starts. */
  mqttUrl(): Promise<string>;
  /** The embedded broker, once started. */
  broker(): EmbeddedBroker | undefined;
  /** Whether a shutdown has started. */
  stopping(): boolean;
}

/** The options ingest runs with, as either role starts it (the role adds its lock and group). */
export function ingestOptions(
  ctx: RoleContext,
  url: string,
  extra: Pick<IngestOptions, 'rollupLock' | 'leaveGroup' | 'tasmotaDevice' | 'logger'>,
): IngestOptions {
  const { config } = ctx;
  const broker = ctx.broker();
  return {
    store: ctx.store,
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
    ...(extra.rollupLock ? { rollupLock: extra.rollupLock } : {}),
    ...(extra.leaveGroup ? { leaveGroup: extra.leaveGroup } : {}),
    shared: config.ingestShared,
    publishLive: config.publishLive,
    meterLimits: config.meterLimits,
    ...(extra.tasmotaDevice ? { tasmotaDevice: extra.tasmotaDevice } : {}),
    deadLetterDir: path.join(config.dataDir, 'dead-letters'),
    ...(extra.logger ? { logger: extra.logger } : {}),
  };
}

/** The claimed device with a stock Tasmota topic's MAC suffix, when exactly one has it. */
export function tasmotaDeviceIn(sql: Queryable) {
  return async (suffix: string): Promise<string | null> => {
    // The one device that holds the suffix (a unique index); a twin uses its key as its Topic.
    const { rows } = await sql.query<{ device_key: string }>(
      'select device_key from devices where stock_suffix = $1',
      [suffix.toUpperCase()],
    );
    return rows[0]?.device_key ?? null;
  };
}
