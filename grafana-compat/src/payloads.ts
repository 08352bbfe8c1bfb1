/** The payload options each metric offers a panel (`POST /metrics`, `/metric-payload-options`). */
import type { MetricDef } from './metrics.ts';
import type { MetricsResponse } from './protocol.ts';
import { FORMATS, STATS } from './request.ts';
import { ENERGY_INTERVALS, SERIES_INTERVALS, ZONE_INTERVALS } from './resolution.ts';
import type { GrafanaDevice, GrafanaTariff } from './source.ts';

export function payloadsOf(
  m: MetricDef,
  devices: readonly GrafanaDevice[],
  tariffs: readonly GrafanaTariff[],
): MetricsResponse[number]['payloads'] {
  const device = {
    label: 'Device',
    name: 'device',
    type: 'multi-select' as const,
    placeholder: 'All devices',
    options: devices.map((d) => ({ label: d.name, value: String(d.id) })),
  };
  const format = {
    label: 'Format',
    name: 'format',
    type: 'select' as const,
    options: FORMATS.map((f) => ({ value: f })),
  };
  const interval = (list: readonly string[]) => ({
    label: 'Interval',
    name: 'interval',
    type: 'select' as const,
    placeholder: 'auto',
    options: ['auto', ...list].map((i) => ({ value: i })),
  });
  if (m.kind === 'energy') return [device, interval(ENERGY_INTERVALS), format];
  if (m.kind === 'zones')
    return [
      device,
      interval(ZONE_INTERVALS),
      {
        label: 'Tariff',
        name: 'tariff',
        type: 'select',
        placeholder: "the device's tariff",
        options: [
          { label: "The device's tariff", value: 'device' },
          ...tariffs.map((t) => ({ label: `${t.name} (${t.group})`, value: String(t.id) })),
        ],
      },
      format,
    ];
  if (m.kind === 'gauge')
    return [
      device,
      {
        label: 'Statistic',
        name: 'stat',
        type: 'select',
        placeholder: 'avg',
        options: STATS.map((s) => ({ value: s })),
      },
      interval(SERIES_INTERVALS),
      format,
    ];
  if (m.kind === 'bands') return [device, format];
  return [device];
}
