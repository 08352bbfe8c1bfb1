/**
 * Test tooling shared by the packages' suites and the benches. Dev-only: production code never imports
 * it (a dependency-cruiser rule). The real-server harnesses stay with the package that owns the server's
 * protocol (PostgreSQL in api, InfluxDB in influx, Mosquitto in ingest) and take their ports from here.
 */
export { parseCsv } from './csv.ts';
export { freePort } from './ports.ts';
