/**
 * The embedded broker and ingest beside a test app, as the all-in-one deployment wires them: the broker
 * checks each meter's account in the app's database, ingest stores into the test's store, and both are
 * handed to the app's meter access (connection states, disconnects, refusals).
 */
import {
  DEFAULT_METER_LIMITS,
  type EmbeddedBroker,
  type IngestRuntime,
  type MeterLimits,
  startEmbeddedBroker,
  startIngest,
} from '@kilowatch/ingest';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { databaseMeterAuth } from '../mqtt-auth.ts';
import type { DevicesRepository } from '../plugins/app/devices-repository.ts';
import type { EmbeddedMeterParts } from '../plugins/app/meter-access.ts';

/** The API's own broker account (the services' listener). */
const SERVICE = { username: 'kilowatch-test-api', password: 'service-secret' };
const quiet = { info() {}, warn() {}, error() {} };

export interface EmbeddedMeters {
  broker: EmbeddedBroker;
  runtime: IngestRuntime;
  /** Stops ingest, then the broker. */
  stop(): Promise<void>;
}

export async function startEmbeddedMeters(opts: {
  devices: () => DevicesRepository | undefined;
  store: TelemetryStore;
  /** Filled with the broker and ingest: the `meterAccess` the test app was built with. */
  parts: EmbeddedMeterParts;
  /** Ingest's clock (readings from its future are refused). */
  now: () => number;
  /** How often ingest's scheduler refreshes rollups; 0 leaves them to the test. */
  rollupIntervalMs?: number;
  meterLimits?: MeterLimits;
}): Promise<EmbeddedMeters> {
  const broker = await startEmbeddedBroker({
    port: 0,
    auth: databaseMeterAuth(opts.devices),
    services: [SERVICE],
  });
  const runtime = await startIngest({
    store: opts.store,
    broker,
    rollupIntervalMs: opts.rollupIntervalMs ?? 0,
    logger: quiet,
    decodeThread: false,
    meterLimits: opts.meterLimits ?? DEFAULT_METER_LIMITS,
    now: opts.now,
  });
  opts.parts.broker = broker;
  opts.parts.runtime = runtime;
  return {
    broker,
    runtime,
    async stop() {
      await runtime.stop();
      await broker.close();
    },
  };
}
