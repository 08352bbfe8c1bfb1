/**
 * Reliability against real servers: readings at QoS 1 through real Mosquitto into a real InfluxDB that is
 * killed for 30 s mid-stream. Nothing acknowledged may be lost, the bridge's buffer stays within its window
 * (it stops taking messages instead of growing), and ingest catches up once InfluxDB is back.
 *
 * Test-only composition: ingest's code never imports the InfluxDB engine; this test wires the two.
 */
import { createInfluxStore } from '@kilowatch/influx';
import { findServerBinary, influxSkipReason, startInfluxServer, startMosquitto } from '@kilowatch/testkit';
import { describe, expect, it } from 'vitest';
import { runStoreOutageScenario } from './testing.ts';

const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
const skip = influxSkipReason() ?? (mosquittoBin ? null : 'mosquitto is not installed');
if (skip) console.warn(`skipping the InfluxDB outage test: ${skip}`);

describe.skipIf(skip !== null)('ingest through Mosquitto into InfluxDB with an outage', () => {
  it('InfluxDB killed for 30 s mid-stream: nothing lost, buffer bounded, catches up', async () => {
    const server = await startInfluxServer();
    const mosquitto = await startMosquitto(mosquittoBin as string);
    const store = await createInfluxStore({ url: server.url, database: server.database, timeoutMs: 2000 });
    try {
      const result = await runStoreOutageScenario({
        store,
        mqttUrl: mosquitto.url,
        outage: { begin: () => server.kill('SIGKILL'), end: () => server.restart() },
        outageMs: 30_000,
        readings: 4_500,
        ratePerS: 100,
        maxInFlight: 500,
      });
      expect(result.published).toBe(4_500);
      expect(result.stored).toBe(4_500);
      expect(result.missing).toBe(0);
      // The outage outlasted the window, so it filled, but it never overflowed.
      expect(result.maxBufferMessages).toBeGreaterThan(0);
      expect(result.maxBufferMessages).toBeLessThanOrEqual(result.maxInFlight);
      expect(result.retried).toBeGreaterThan(0);
    } finally {
      await store.close();
      await mosquitto.stop();
      await server.stop();
    }
  }, 240_000);
});
