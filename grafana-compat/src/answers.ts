/** The answers to `/query` (and the columns of `/rows`): each metric read from the source as series or tables. */
import { voltageBand } from '@kilowatch/core';
import type { EnergyInterval, SeriesInterval, Stat } from '@kilowatch/tsdb';
import type { AnswerBudget } from './bounds.ts';
import {
  BANDS_METRIC,
  type EnergyMetric,
  type MetricDef,
  metricDef,
  QUALITY_METRIC,
  ZONES_METRIC,
} from './metrics.ts';
import type { Payload, QueryResponse, QueryTarget, TableAnswer } from './protocol.ts';
import {
  BadGrafanaRequest,
  type Filters,
  FORMATS,
  one,
  payloadOf,
  pick,
  STATS,
  selectDevices,
} from './request.ts';
import {
  ENERGY_INTERVALS,
  energyInterval,
  type Resolution,
  SERIES_INTERVALS,
  seriesInterval,
  thin,
  ZONE_INTERVALS,
} from './resolution.ts';
import type { GrafanaDevice, GrafanaSource } from './source.ts';

/** The stored or all-phase parameter a gauge metric reads under the phase filter, or null when filtered out. */
function gaugeParam(m: MetricDef, phases: Set<number>): string | null {
  if (m.phase) return phases.has(m.phase) ? m.name : null;
  if (phases.size === 3) return m.name;
  // An all-phases gauge under "phase = N" reads that phase.
  if (phases.size === 1 && m.stem) return `${m.stem}${[...phases][0]}`;
  return null;
}

function datapoints(t: readonly number[], values: readonly (number | null)[]): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < t.length; i++) {
    const x = values[i];
    if (x !== null && x !== undefined && Number.isFinite(x)) out.push([x, t[i]!]);
  }
  return out;
}

interface Column {
  device: GrafanaDevice;
  label: string;
  t: number[];
  values: (number | null)[];
}

function asTable(metric: string, columns: readonly Column[]): TableAnswer {
  const rows: (string | number)[][] = [];
  for (const c of columns)
    for (let i = 0; i < c.t.length; i++) {
      const x = c.values[i];
      if (x !== null && x !== undefined) rows.push([c.t[i]!, c.device.name, c.device.location ?? '', x]);
    }
  return {
    type: 'table',
    columns: [
      { text: 'Time', type: 'time' },
      { text: 'Device', type: 'string' },
      { text: 'Location', type: 'string' },
      { text: metric, type: 'number' },
    ],
    rows,
  };
}

/** Energy or gauge columns of one metric for the devices, at the resolution the panel asked for. */
export async function columnsOf(
  source: GrafanaSource,
  userId: number,
  m: MetricDef,
  devices: readonly GrafanaDevice[],
  payload: Payload,
  res: Resolution,
  phases: Set<number>,
  budget: AnswerBudget,
): Promise<Column[]> {
  const out: Column[] = [];
  if (m.kind === 'energy') {
    const atLeast = pick<EnergyInterval | 'auto'>(payload, 'interval', ['auto', ...ENERGY_INTERVALS], 'auto');
    const interval = energyInterval(res, atLeast === 'auto' ? undefined : atLeast);
    const key = m.name.slice('energy.'.length) as 'import' | 'export' | 'balance';
    for (const d of devices) {
      await budget.turn();
      const e = await source.energy(userId, d.id, { from: res.from, to: res.to, interval });
      const thinned = thin(e.t, e[key], res.maxDataPoints, 'sum');
      budget.spend(thinned.t.length);
      out.push({
        device: d,
        label: `${d.name} ${m.name as EnergyMetric}`,
        t: thinned.t,
        values: thinned.values,
      });
    }
    return out;
  }
  const param = gaugeParam(m, phases);
  if (param === null) return out;
  const stat = pick<Stat>(payload, 'stat', STATS, 'avg');
  const atLeast = pick<SeriesInterval | 'auto'>(payload, 'interval', ['auto', ...SERIES_INTERVALS], 'auto');
  const interval = seriesInterval(res, atLeast === 'auto' ? undefined : atLeast);
  for (const d of devices) {
    await budget.turn();
    const s = await source.series(userId, d.id, {
      params: [param],
      from: res.from,
      to: res.to,
      interval,
      stats: [stat],
    });
    const thinned = thin(s.t, s.series[param]?.[stat] ?? [], res.maxDataPoints, stat);
    budget.spend(thinned.t.length);
    const suffix = stat === 'avg' ? '' : ` ${stat}`;
    out.push({ device: d, label: `${d.name} ${param}${suffix}`, t: thinned.t, values: thinned.values });
  }
  return out;
}

/**
 * Billed import per tariff zone: one column per device and zone, in whole hours, local days or local
 * months (the `interval` payload is the finest allowed), zoned by the `tariff` payload or each device's
 * own tariff. A device named alone without a tariff is a 400; among several such devices are left out.
 */
async function zoneColumnsOf(
  source: GrafanaSource,
  userId: number,
  devices: readonly GrafanaDevice[],
  payload: Payload,
  res: Resolution,
  budget: AnswerBudget,
): Promise<(Column & { zone: number; tariff: string })[]> {
  const atLeast = pick<(typeof ZONE_INTERVALS)[number] | 'auto'>(
    payload,
    'interval',
    ['auto', ...ZONE_INTERVALS],
    'auto',
  );
  const interval = energyInterval(res, atLeast === 'auto' ? '1h' : atLeast);
  const unit = interval === '1mo' ? 'month' : interval === '1d' ? 'day' : 'hour';
  const wanted = one(payload, 'tariff');
  let tariffId: number | undefined;
  if (wanted !== undefined && wanted !== 'device') {
    const known = await source.tariffs(userId);
    const t = known.find((x) => String(x.id) === wanted);
    if (!t) throw new BadGrafanaRequest(`unknown tariff "${wanted}" (POST /metrics lists them)`, 'tariff');
    tariffId = t.id;
  }
  const out: (Column & { zone: number; tariff: string })[] = [];
  for (const d of devices) {
    await budget.turn();
    const z = await source.zoneEnergy(userId, d.id, {
      from: res.from,
      to: res.to,
      unit,
      ...(tariffId === undefined ? {} : { tariffId }),
    });
    if (z === null) {
      if (devices.length === 1)
        throw new BadGrafanaRequest(
          `device "${d.name}" has no tariff: give it one in Kilowatch or pick one in the tariff payload`,
          'tariff',
        );
      continue;
    }
    for (const zone of z.zones) {
      const thinned = thin(z.t, zone.energy, res.maxDataPoints, 'sum');
      budget.spend(thinned.t.length);
      out.push({
        device: d,
        label: `${d.name} zone ${zone.zone}`,
        t: thinned.t,
        values: thinned.values,
        zone: zone.zone,
        tariff: z.tariff.name,
      });
    }
  }
  return out;
}

export async function answerTarget(
  source: GrafanaSource,
  userId: number,
  target: QueryTarget,
  all: readonly GrafanaDevice[],
  filters: Filters,
  res: Resolution,
  budget: AnswerBudget,
): Promise<QueryResponse> {
  const m = metricDef(target.target);
  if (!m)
    throw new BadGrafanaRequest(`unknown metric "${target.target}" (POST /metrics lists them)`, 'target');
  const payload = payloadOf(target);
  const devices = budget.devices(m.name, filters.devices(selectDevices(all, payload.device)));
  const format = pick(payload, 'format', FORMATS, m.kind === 'quality' ? 'table' : 'timeseries');

  if (m.name === QUALITY_METRIC) {
    const rows: (string | number)[][] = [];
    for (const d of devices) {
      await budget.turn();
      const q = await source.voltageQuality(userId, d.id, { from: res.from, to: res.to });
      budget.spend(q.phases.length);
      for (const p of q.phases) {
        if (!filters.phases.has(p.phase)) continue;
        if (p.withinWarning === null || p.withinCritical === null || p.withinEn50160 === null) continue;
        rows.push([d.name, p.phase, p.samples, p.withinWarning, p.withinCritical, p.withinEn50160]);
      }
    }
    return [
      {
        type: 'table',
        columns: [
          { text: 'Device', type: 'string' },
          { text: 'Phase', type: 'number' },
          { text: '10-minute means', type: 'number' },
          { text: 'Within warning band', type: 'number' },
          { text: 'Within critical band', type: 'number' },
          { text: 'Within EN 50160', type: 'number' },
        ],
        rows,
      },
    ];
  }

  if (m.name === BANDS_METRIC) {
    const columns: Column[] = [];
    for (const d of devices) {
      await budget.turn();
      const limits = await source.limits(userId, d.id);
      budget.spend(8);
      for (const [band, percent] of [
        ['warning', limits.warning],
        ['critical', limits.critical],
      ] as const) {
        const { low, high } = voltageBand(percent);
        const t = [res.from, res.to];
        columns.push({ device: d, label: `${d.name} ${band} low`, t, values: [low, low] });
        columns.push({ device: d, label: `${d.name} ${band} high`, t, values: [high, high] });
      }
    }
    return format === 'table'
      ? [asTable(m.name, columns)]
      : columns.map((c) => ({ target: c.label, datapoints: datapoints(c.t, c.values) }));
  }

  if (m.name === ZONES_METRIC) {
    const columns = await zoneColumnsOf(source, userId, devices, payload, res, budget);
    if (format === 'table') {
      const rows: (string | number)[][] = [];
      for (const c of columns)
        for (let i = 0; i < c.t.length; i++) {
          const x = c.values[i];
          if (x !== null && x !== undefined) rows.push([c.t[i]!, c.device.name, c.tariff, c.zone, x]);
        }
      return [
        {
          type: 'table',
          columns: [
            { text: 'Time', type: 'time' },
            { text: 'Device', type: 'string' },
            { text: 'Tariff', type: 'string' },
            { text: 'Zone', type: 'number' },
            { text: m.name, type: 'number' },
          ],
          rows,
        },
      ];
    }
    return columns.map((c) => ({ target: c.label, datapoints: datapoints(c.t, c.values) }));
  }

  const columns = await columnsOf(source, userId, m, devices, payload, res, filters.phases, budget);
  if (format === 'table') return [asTable(m.name, columns)];
  return columns.map((c) => ({ target: c.label, datapoints: datapoints(c.t, c.values) }));
}
