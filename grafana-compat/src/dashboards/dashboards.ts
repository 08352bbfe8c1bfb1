/**
 * The provisioned dashboards, generated from code with the Grafana foundation SDK's builders (`pnpm
 * --filter @kilowatch/grafana run dashboards` writes them to provisioning/dashboards/). Three read the JSON
 * API data source (household energy, per-phase power quality, fleet comparison); three read InfluxDB
 * directly in server deployments (household energy, power quality, fleet; the layout of influx/README.md).
 */
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { influxDirect, influxFleet, influxPowerQuality } from './influx.ts';
import { fleetComparison, householdEnergy, powerQuality } from './json-api.ts';

/** Every provisioned dashboard by file name. */
export const DASHBOARDS: Record<string, () => dashboard.Dashboard> = {
  'household-energy': householdEnergy,
  'power-quality': powerQuality,
  'fleet-comparison': fleetComparison,
  'influxdb-direct': influxDirect,
  'influxdb-power-quality': influxPowerQuality,
  'influxdb-fleet': influxFleet,
};
