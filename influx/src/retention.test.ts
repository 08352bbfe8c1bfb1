/**
 * `INFLUX_RP`: a store given a retention policy other than the database's default writes its readings,
 * rollups and markers there and reads them back from there; the default policy stays empty.
 */
import { HOUR_MS, type Reading } from '@kilowatch/core';
import { type InfluxTestServer, influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InfluxClient } from './client.ts';
import { createInfluxStore, type InfluxTelemetryStore } from './store.ts';

const skip = influxSkipReason();
if (skip) console.warn(skip);

const MIN = 60_000;
const T0 = Date.UTC(2025, 0, 6);

describe.skipIf(skip !== null)('a store on a retention policy other than the default', () => {
  let server: InfluxTestServer;
  let store: InfluxTelemetryStore;
  let admin: InfluxClient;

  beforeAll(async () => {
    server = await startInfluxServer();
    admin = new InfluxClient({ url: server.url, database: server.database });
    await admin.query(
      `CREATE RETENTION POLICY "two_years" ON "${server.database}" DURATION 104w REPLICATION 1`,
    );
    store = await createInfluxStore({
      url: server.url,
      database: server.database,
      retentionPolicy: 'two_years',
    });
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await server?.stop();
  });

  it('writes, rolls up and reads in that policy only', async () => {
    const rows: Reading[] = Array.from({ length: 120 }, (_, i) => ({
      deviceKey: 'a0b1c2d3e4f5',
      ts: T0 + (i + 1) * MIN,
      values: { vave1: 230, eai1: i / 10 },
    }));
    await store.write(rows);
    await store.refreshRollups(T0 + 3 * HOUR_MS);
    const page = await store.readRaw({
      deviceKey: 'a0b1c2d3e4f5',
      from: T0,
      to: T0 + 3 * HOUR_MS,
      limit: 500,
    });
    expect(page.items).toHaveLength(120);
    const series = await store.series({
      deviceKey: 'a0b1c2d3e4f5',
      params: ['vave1'],
      from: T0,
      to: T0 + 2 * HOUR_MS,
      interval: '1h',
      stats: ['avg'],
    });
    expect(series.t).toEqual([T0, T0 + HOUR_MS]);
    const count = async (rp: string, measurement: string) => {
      const [res] = await admin.query(`SELECT * FROM "${rp}"."${measurement}"`);
      return res?.series?.[0]?.values.length ?? 0;
    };
    expect(await count('two_years', 'readings')).toBe(120);
    expect(await count('two_years', 'rollup_15m')).toBeGreaterThan(0);
    expect(await count('autogen', 'readings')).toBe(0);
    expect(await count('autogen', 'rollup_15m')).toBe(0);
  });
});
