/** @kilowatch/grafana: Kilowatch as a Grafana data source, and the dashboards provisioned with it. */
export * from './bounds.ts';
export * from './metrics.ts';
export {
  DEFAULT_MAX_DATA_POINTS,
  type GrafanaPluginOptions,
  grafanaPlugin,
  TAG_KEYS,
  toCsv,
  VARIABLE_TARGETS,
} from './plugin.ts';
export * from './protocol.ts';
export { BadGrafanaRequest } from './request.ts';
export * from './resolution.ts';
export type * from './source.ts';
