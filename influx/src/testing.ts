/**
 * What the InfluxDB engine's tests against a real influxd share: why they are skipped on a machine
 * without one, fresh device keys, their clock, and an influxd of the test file's own with a store on it.
 */
import { randomBytes } from 'node:crypto';
import { type InfluxTestServer, influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { createInfluxStore, type InfluxTelemetryStore } from './store.ts';

/** Why this machine cannot run influxd (the tests are skipped), or null. */
export const skip = influxSkipReason();
if (skip) console.warn(skip);

export const device = () => randomBytes(6).toString('hex');
export const MIN = 60_000;
export const T0 = Date.UTC(2025, 0, 6); // a Monday, 00:00 UTC

/** Starts an influxd and a store on it writing in requests of 500 readings. */
export async function startEngine(): Promise<{ server: InfluxTestServer; store: InfluxTelemetryStore }> {
  const server = await startInfluxServer();
  const store = await createInfluxStore({ url: server.url, database: server.database, batchSize: 500 });
  return { server, store };
}

/** Closes the store and stops its server (either may be missing when the start failed). */
export async function stopEngine(server?: InfluxTestServer, store?: InfluxTelemetryStore): Promise<void> {
  await store?.close();
  await server?.stop();
}
