/**
 * For tests of other packages: the generated dashboards and their query shapes (the API's test runs the
 * InfluxDB-direct dashboards' queries on a real InfluxDB). The API itself never loads the dashboards.
 */
export { DASHBOARDS } from './dashboards/dashboards.ts';
export type { InfluxQlQuery, JsonApiQuery } from './dashboards/queries.ts';
