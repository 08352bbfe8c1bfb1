/** The two telemetry engines the analytics suites answer from: DuckDB in memory and a real InfluxDB. */
import { createInfluxStore } from '@kilowatch/influx';
import { influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';

export interface EngineCase {
  name: string;
  /** Why the engine cannot run here (null: it can); under CI=true a missing server is a failure instead. */
  skip: string | null;
  open(): Promise<{ store: TelemetryStore; stop(): Promise<void> }>;
}

export const ENGINES: EngineCase[] = [
  {
    name: 'duckdb',
    skip: null,
    async open() {
      const store = await createDuckDbStore();
      return { store, stop: () => store.close() };
    },
  },
  {
    name: 'influxdb',
    skip: influxSkipReason(),
    async open() {
      const server = await startInfluxServer();
      const store = await createInfluxStore({ url: server.url, database: server.database });
      return {
        store,
        async stop() {
          await store.close();
          await server.stop();
        },
      };
    },
  },
];
