/**
 * What a Grafana panel may ask for (`POST /metrics`): every gauge of the parameter catalogue (per phase
 * and all phases together), energy per bucket from the meters' counters (also per tariff zone), the voltage
 * limit bands and the voltage-quality shares. Names are stable: dashboards refer to them.
 */
import { COMBINED_PARAMS, PARAMS } from '@kilowatch/core';

export type MetricKind = 'gauge' | 'energy' | 'zones' | 'bands' | 'quality';

export interface MetricDef {
  name: string;
  label: string;
  unit: string;
  kind: MetricKind;
  /** 1..3 for a per-phase gauge. */
  phase?: 1 | 2 | 3;
  /** The all-phases name of a per-phase gauge, or the name itself. */
  stem?: string;
}

export const ENERGY_METRICS = {
  'energy.import': 'Energy imported per bucket',
  'energy.export': 'Energy exported per bucket',
  'energy.balance': 'Balance per bucket (netted per hour across phases)',
} as const;
export type EnergyMetric = keyof typeof ENERGY_METRICS;

/** Billed import per tariff zone per bucket (the zones of the device's tariff, or the payload's). */
export const ZONES_METRIC = 'energy.zones';
export const BANDS_METRIC = 'voltage.bands';
export const QUALITY_METRIC = 'voltage.quality';

export const METRICS: readonly MetricDef[] = [
  ...Object.entries(ENERGY_METRICS).map(([name, label]) => ({
    name,
    label,
    unit: 'kWh',
    kind: 'energy' as const,
  })),
  {
    name: ZONES_METRIC,
    label: "Energy imported per tariff zone per bucket (billed import; the device's tariff)",
    unit: 'kWh',
    kind: 'zones',
  },
  ...PARAMS.filter((p) => p.kind === 'gauge').map((p) => ({
    name: p.name,
    label: `${p.name} (${p.unit || 'ratio'})`,
    unit: p.unit,
    kind: 'gauge' as const,
    ...(p.phase ? { phase: p.phase } : {}),
    ...(p.stem ? { stem: p.stem } : {}),
  })),
  ...COMBINED_PARAMS.filter((p) => p.kind === 'gauge').map((p) => ({
    name: p.name,
    label: `${p.name}, all phases (${p.unit || 'ratio'}, ${p.combine})`,
    unit: p.unit,
    kind: 'gauge' as const,
    stem: p.name,
  })),
  { name: BANDS_METRIC, label: 'Voltage warning and critical bands (V)', unit: 'V', kind: 'bands' },
  {
    name: QUALITY_METRIC,
    label: 'Share of 10-minute mean voltages in the bands and EN 50160 (table)',
    unit: 'percentunit',
    kind: 'quality',
  },
];

const byName = new Map(METRICS.map((m) => [m.name, m]));

export function metricDef(name: string): MetricDef | undefined {
  return byName.get(name);
}

export const METRIC_NAMES: readonly string[] = METRICS.map((m) => m.name);
