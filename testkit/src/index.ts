/**
 * Test tooling shared by the packages' suites and the benches. Dev-only: production code never imports
 * it (a dependency-cruiser rule). Real servers on free loopback ports (Mosquitto, InfluxDB 1.x,
 * PostgreSQL), with one rule for a server the machine lacks (`serverMissing`: skip locally, fail under
 * CI=true), a Kilowatch process of the repository's own server (`startKilowatch`), throw-away TLS
 * certificates (`makeTestCertificates`, by the `openssl` CLI), free ports, a CSV reader, and the waits
 * (`until` a condition holds; `sleep` only to pace what a test sends).
 */
export { findOpenssl, makeTestCertificates, type TestCertificates } from './certs.ts';
export { parseCsv } from './csv.ts';
export {
  type InfluxTestServer,
  type InfluxTestServerOptions,
  influxdPath,
  influxSkipReason,
  startInfluxServer,
} from './influxd.ts';
export {
  findDynsecPlugin,
  type MosquittoOptions,
  type MosquittoServer,
  startMosquitto,
  TEST_SERVICE,
} from './mosquitto.ts';
export { freePort } from './ports.ts';
export {
  POSTGRES_BIN,
  type PostgresServer,
  postgresInstalled,
  removeWhenGone,
  startPostgresServer,
} from './postgres.ts';
export {
  type KilowatchProcess,
  type KilowatchProcessOptions,
  REPO_DIR,
  type ReadyCondition,
  startKilowatch,
  startTogether,
} from './process.ts';
export { findServerBinary, lookUpBinary, serverMissing } from './servers.ts';
export { sleep, until } from './waits.ts';
