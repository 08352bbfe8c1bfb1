/** @kilowatch/influx: the InfluxDB engine of the TelemetryStore port (v1 HTTP API). */
export {
  type ClientStats,
  InfluxClient,
  type InfluxClientOptions,
  parseRetryAfter,
  type RetryInfo,
  type RetryOptions,
} from './client.ts';
export {
  encodeLine,
  escapeKey,
  escapeMeasurement,
  formatFloat,
  ident,
  literal,
  quoteString,
} from './lineProtocol.ts';
export { DIRTY, READINGS, ROLLUP_MEASUREMENT, STATE } from './schema.ts';
export {
  createInfluxStore,
  type InfluxStoreOptions,
  type InfluxStoreStats,
  type InfluxTelemetryStore,
} from './store.ts';
