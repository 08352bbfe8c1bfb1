import { type InfluxTestServer, influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { describeTelemetryStoreConformance } from '@kilowatch/tsdb/conformance';
import { afterAll, beforeAll, describe } from 'vitest';
import { createInfluxStore } from './store.ts';

const skip = influxSkipReason();
if (skip) console.warn(skip);

describe.skipIf(skip !== null)('InfluxDB 1.x (real influxd)', () => {
  let server: InfluxTestServer;
  beforeAll(async () => {
    server = await startInfluxServer();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  describeTelemetryStoreConformance('influxdb', () =>
    createInfluxStore({ url: server.url, database: server.database }),
  );
});
