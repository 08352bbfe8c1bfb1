/**
 * Kilowatch as a Grafana data source, mounted by the API at `/grafana` (docs/api.md §Grafana): the simPod
 * "JSON API" protocol (`GET /`, `POST /metrics`, `/metric-payload-options` and `/options`, `/query`,
 * `/variable`, `/tag-keys`, `/tag-values`) and flat rows for the Infinity data source (`GET /rows`).
 * Every request is authenticated by the mounting app (an API key or a session) and sees only its
 * owner's devices. A body that cannot be used is answered 400 with the reason.
 */
import {
  EARLIEST_QUERY_MS,
  LATEST_QUERY_MS,
  MAX_POINTS_PER_SERIES,
  MESSAGES,
  voltageBand,
} from '@kilowatch/core';
import type { EnergyInterval, SeriesInterval, Stat } from '@kilowatch/tsdb';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import * as v from 'valibot';
import {
  BANDS_METRIC,
  type EnergyMetric,
  METRICS,
  type MetricDef,
  metricDef,
  QUALITY_METRIC,
  ZONES_METRIC,
} from './metrics.ts';
import {
  type AdhocFilter,
  MetricsRequestSchema,
  type MetricsResponse,
  type Payload,
  PayloadOptionsRequestSchema,
  PayloadSchema,
  QueryRequestSchema,
  type QueryResponse,
  type QueryTarget,
  type Row,
  RowsQuerySchema,
  reason,
  type TableAnswer,
  TagValuesRequestSchema,
  VariableRequestSchema,
} from './protocol.ts';
import {
  ENERGY_INTERVALS,
  energyInterval,
  type Resolution,
  SERIES_INTERVALS,
  seriesInterval,
  thin,
  ZONE_INTERVALS,
} from './resolution.ts';
import type { GrafanaDevice, GrafanaSource, GrafanaTariff } from './source.ts';

export interface GrafanaPluginOptions {
  source: GrafanaSource;
  /** onRequest hook of the mounting app: 401 unless the request carries a key or a session. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** The user the authenticated request acts for. */
  userOf: (request: FastifyRequest) => number;
}

/** Points per series when a query names no `maxDataPoints`. */
export const DEFAULT_MAX_DATA_POINTS = 2_000;
export const TAG_KEYS = ['device', 'location', 'phase'] as const;
/** What a dashboard variable may list (`POST /variable`). */
export const VARIABLE_TARGETS = ['devices', 'locations', 'metrics', 'phases'] as const;
const STATS: readonly Stat[] = ['avg', 'min', 'max'];
const FORMATS = ['timeseries', 'table'] as const;
const PHASE_VALUES = ['1', '2', '3'];

/** A request Kilowatch cannot answer as asked: 400 with the reason. */
export class BadGrafanaRequest extends Error {
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'BadGrafanaRequest';
  }
}

function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (!r.success) throw new BadGrafanaRequest(reason(r.issues));
  return r.output;
}

/** An instant as ISO 8601 or epoch milliseconds. */
function instant(value: string, field: string): number {
  const ms = /^\d{10,14}$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new BadGrafanaRequest(`${field} must be an ISO 8601 instant or epoch milliseconds`, field);
  return ms;
}

function rangeOf(from: string, to: string): { from: number; to: number } {
  const f = instant(from, 'from');
  const t = instant(to, 'to');
  if (t <= f) throw new BadGrafanaRequest('the range must end after it starts', 'to');
  if (f < EARLIEST_QUERY_MS || t > LATEST_QUERY_MS) throw new BadGrafanaRequest(MESSAGES.rangeTooLong, 'to');
  return { from: f, to: t };
}

/** Payload values as a flat list: Grafana writes multi-value variables as `{a,b}` or as a list. */
function tokens(value: Payload[string]): string[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value : [value];
  return list
    .flatMap((x) =>
      String(x)
        .replace(/^\{(.*)\}$/, '$1')
        .split(','),
    )
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
}

const ALL = new Set(['$__all', '*', 'All', 'all']);

function selectDevices(
  all: readonly GrafanaDevice[],
  wanted: Payload[string],
  field = 'device',
): GrafanaDevice[] {
  const names = tokens(wanted);
  if (names.length === 0 || names.some((n) => ALL.has(n))) return [...all];
  const out: GrafanaDevice[] = [];
  for (const n of names) {
    const d = all.find((x) => String(x.id) === n) ?? all.find((x) => x.name === n);
    // Unknown and someone else's read the same, so nothing about other accounts is revealed.
    if (!d) throw new BadGrafanaRequest(`unknown device "${n}"`, field);
    if (!out.includes(d)) out.push(d);
  }
  return out;
}

interface Filters {
  devices(all: readonly GrafanaDevice[]): GrafanaDevice[];
  phases: Set<number>;
}

function filtersOf(adhoc: readonly AdhocFilter[] = []): Filters {
  const checks: ((d: GrafanaDevice) => boolean)[] = [];
  let phases = new Set([1, 2, 3]);
  for (const f of adhoc) {
    const op = f.operator;
    if (op !== '=' && op !== '!=')
      throw new BadGrafanaRequest(
        `adhoc filter operator "${op}" is not supported (use = or !=)`,
        'adhocFilters',
      );
    const value = String(f.value);
    const keep = (match: boolean) => (op === '=' ? match : !match);
    if (f.key === 'device') checks.push((d) => keep(d.name === value || String(d.id) === value));
    else if (f.key === 'location') checks.push((d) => keep((d.location ?? '') === value));
    else if (f.key === 'phase') {
      if (!PHASE_VALUES.includes(value))
        throw new BadGrafanaRequest(`phase must be 1, 2 or 3, not "${value}"`, 'adhocFilters');
      phases = new Set([...phases].filter((p) => keep(String(p) === value)));
    } else
      throw new BadGrafanaRequest(
        `unknown adhoc filter key "${f.key}" (device, location, phase)`,
        'adhocFilters',
      );
  }
  return { devices: (all) => all.filter((d) => checks.every((c) => c(d))), phases };
}

function payloadOf(target: QueryTarget): Payload {
  const raw = target.payload ?? target.data;
  if (raw === undefined) return {};
  if (typeof raw !== 'string') return raw;
  if (raw.trim() === '') return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new BadGrafanaRequest(`the payload of "${target.target}" is not JSON`, 'payload');
  }
  return parse(PayloadSchema, json);
}

function one(payload: Payload, name: string): string | undefined {
  const t = tokens(payload[name]);
  if (t.length > 1) throw new BadGrafanaRequest(`${name} takes one value`, name);
  return t[0];
}

function pick<T extends string>(payload: Payload, name: string, allowed: readonly T[], fallback: T): T {
  const value = one(payload, name);
  if (value === undefined || value === 'auto') return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new BadGrafanaRequest(`${name} must be one of ${allowed.join(', ')}, not "${value}"`, name);
  return value as T;
}

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

export function grafanaPlugin(app: FastifyInstance, options: GrafanaPluginOptions): Promise<void> {
  const { source, userOf } = options;
  app.addHook('onRequest', options.authenticate);

  /** Energy or gauge columns of one metric for the devices, at the resolution the panel asked for. */
  async function columnsOf(
    userId: number,
    m: MetricDef,
    devices: readonly GrafanaDevice[],
    payload: Payload,
    res: Resolution,
    phases: Set<number>,
  ): Promise<Column[]> {
    const out: Column[] = [];
    if (m.kind === 'energy') {
      const atLeast = pick<EnergyInterval | 'auto'>(
        payload,
        'interval',
        ['auto', ...ENERGY_INTERVALS],
        'auto',
      );
      const interval = energyInterval(res, atLeast === 'auto' ? undefined : atLeast);
      const key = m.name.slice('energy.'.length) as 'import' | 'export' | 'balance';
      for (const d of devices) {
        const e = await source.energy(userId, d.id, { from: res.from, to: res.to, interval });
        const thinned = thin(e.t, e[key], res.maxDataPoints, 'sum');
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
      const s = await source.series(userId, d.id, {
        params: [param],
        from: res.from,
        to: res.to,
        interval,
        stats: [stat],
      });
      const thinned = thin(s.t, s.series[param]?.[stat] ?? [], res.maxDataPoints, stat);
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
    userId: number,
    devices: readonly GrafanaDevice[],
    payload: Payload,
    res: Resolution,
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

  async function answerTarget(
    userId: number,
    target: QueryTarget,
    all: readonly GrafanaDevice[],
    filters: Filters,
    res: Resolution,
  ): Promise<QueryResponse> {
    const m = metricDef(target.target);
    if (!m)
      throw new BadGrafanaRequest(`unknown metric "${target.target}" (POST /metrics lists them)`, 'target');
    const payload = payloadOf(target);
    const devices = filters.devices(selectDevices(all, payload.device));
    const format = pick(payload, 'format', FORMATS, m.kind === 'quality' ? 'table' : 'timeseries');

    if (m.name === QUALITY_METRIC) {
      const rows: (string | number)[][] = [];
      for (const d of devices) {
        const q = await source.voltageQuality(userId, d.id, { from: res.from, to: res.to });
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
        const limits = await source.limits(userId, d.id);
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
      const columns = await zoneColumnsOf(userId, devices, payload, res);
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

    const columns = await columnsOf(userId, m, devices, payload, res, filters.phases);
    if (format === 'table') return [asTable(m.name, columns)];
    return columns.map((c) => ({ target: c.label, datapoints: datapoints(c.t, c.values) }));
  }

  function payloadsOf(
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

  /** Wraps a handler so a request Kilowatch cannot use is answered 400 with its reason. */
  function handle<T>(fn: (req: FastifyRequest, reply: FastifyReply) => Promise<T>) {
    return async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        return await fn(req, reply);
      } catch (err) {
        if (err instanceof BadGrafanaRequest) {
          return reply
            .code(400)
            .send(
              err.field
                ? { message: err.message, errors: { [err.field]: [err.message] } }
                : { message: err.message },
            );
        }
        throw err;
      }
    };
  }

  // OpenAPI fields for the mounting app's docs (the swagger plugin declares them; this package does not).
  const doc = (summary: string) => ({
    schema: { summary, tags: ['grafana'], security: [{ bearer: [] }] } as FastifySchema,
  });

  // The connection test, at the mount point with and without its trailing slash (Grafana asks for `<url>/`).
  const testConnection = async () => ({ status: 'ok', product: 'Kilowatch' });
  app.get(
    '/',
    { ...doc('Test connection (JSON API data source)'), prefixTrailingSlash: 'no-slash' },
    testConnection,
  );
  app.get('/', { schema: { hide: true } as FastifySchema, prefixTrailingSlash: 'slash' }, testConnection);

  app.post(
    '/metrics',
    doc('Metrics a panel may query, with their payload options'),
    handle(async (req) => {
      parse(MetricsRequestSchema, req.body ?? {});
      const userId = userOf(req);
      const [devices, tariffs] = await Promise.all([source.devices(userId), source.tariffs(userId)]);
      return METRICS.map((m) => ({
        label: m.label,
        value: m.name,
        payloads: payloadsOf(m, devices, tariffs),
      }));
    }),
  );

  const payloadOptions = handle(async (req) => {
    const body = parse(PayloadOptionsRequestSchema, req.body ?? {});
    const m = metricDef(body.metric);
    if (!m) throw new BadGrafanaRequest(`unknown metric "${body.metric}"`, 'metric');
    const userId = userOf(req);
    const [devices, tariffs] = await Promise.all([source.devices(userId), source.tariffs(userId)]);
    const payload = payloadsOf(m, devices, tariffs).find((p) => p.name === body.name);
    if (!payload) throw new BadGrafanaRequest(`metric "${m.name}" has no payload "${body.name}"`, 'name');
    return payload.options ?? [];
  });
  app.post('/metric-payload-options', doc('Options of one payload of a metric'), payloadOptions);
  app.post('/options', doc('Options of one payload of a metric (older name)'), payloadOptions);

  app.post(
    '/query',
    doc('Time series and tables for a panel'),
    handle(async (req) => {
      const body = parse(QueryRequestSchema, req.body ?? {});
      const range = rangeOf(body.range.from, body.range.to);
      const maxDataPoints = Math.min(body.maxDataPoints ?? DEFAULT_MAX_DATA_POINTS, MAX_POINTS_PER_SERIES);
      const res: Resolution = { ...range, intervalMs: body.intervalMs ?? 0, maxDataPoints };
      const filters = filtersOf(body.adhocFilters);
      const userId = userOf(req);
      const all = await source.devices(userId);
      const out: QueryResponse = [];
      for (const target of body.targets) {
        if (target.hide) continue;
        out.push(...(await answerTarget(userId, target, all, filters, res)));
      }
      return out;
    }),
  );

  app.post(
    '/variable',
    doc('Values of a dashboard variable: devices, locations, metrics, phases'),
    handle(async (req) => {
      const body = parse(VariableRequestSchema, req.body ?? {});
      let what = 'devices';
      let location: string | undefined;
      if (typeof body.payload === 'string') {
        const text = body.payload.trim();
        if (text.startsWith('{')) {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            throw new BadGrafanaRequest('the variable query is not JSON', 'payload');
          }
          const parsed = parse(
            v.object({ target: v.optional(v.string()), location: v.optional(v.string()) }),
            json,
          );
          what = parsed.target ?? what;
          location = parsed.location;
        } else if (text) what = text;
      } else if (body.payload) {
        what = body.payload.target ?? what;
        const loc = (body.payload as Record<string, unknown>).location;
        if (typeof loc === 'string') location = loc;
      }
      const devices = await source.devices(userOf(req));
      switch (what) {
        case 'devices':
          return devices
            .filter((d) => location === undefined || d.location === location)
            .map((d) => ({ __text: d.name, __value: String(d.id) }));
        case 'locations':
          return [...new Set(devices.map((d) => d.location).filter((l): l is string => l !== null))].map(
            (l) => ({
              __text: l,
              __value: l,
            }),
          );
        case 'metrics':
          return METRICS.map((m) => ({ __text: m.label, __value: m.name }));
        case 'phases':
          return PHASE_VALUES.map((p) => ({ __text: `L${p}`, __value: p }));
        default:
          throw new BadGrafanaRequest(
            `unknown variable "${what}" (${VARIABLE_TARGETS.join(', ')})`,
            'payload',
          );
      }
    }),
  );

  app.post('/tag-keys', doc('Ad hoc filter keys'), async () =>
    TAG_KEYS.map((text) => ({ type: 'string', text })),
  );

  app.post(
    '/tag-values',
    doc('Values of an ad hoc filter key'),
    handle(async (req) => {
      const { key } = parse(TagValuesRequestSchema, req.body ?? {});
      const devices = await source.devices(userOf(req));
      if (key === 'device') return devices.map((d) => ({ text: d.name }));
      if (key === 'location')
        return [...new Set(devices.map((d) => d.location).filter((l): l is string => l !== null))].map(
          (text) => ({
            text,
          }),
        );
      if (key === 'phase') return PHASE_VALUES.map((text) => ({ text }));
      throw new BadGrafanaRequest(`unknown tag key "${key}" (device, location, phase)`, 'key');
    }),
  );

  app.get(
    '/rows',
    doc('Flat JSON or CSV rows for the Infinity data source'),
    handle(async (req, reply) => {
      const q = parse(RowsQuerySchema, req.query ?? {});
      const range = rangeOf(q.from, q.to);
      const maxDataPoints = q.maxDataPoints === undefined ? DEFAULT_MAX_DATA_POINTS : Number(q.maxDataPoints);
      if (!Number.isInteger(maxDataPoints) || maxDataPoints < 1)
        throw new BadGrafanaRequest('maxDataPoints must be a whole number ≥ 1', 'maxDataPoints');
      const res: Resolution = {
        ...range,
        intervalMs: 0,
        maxDataPoints: Math.min(maxDataPoints, MAX_POINTS_PER_SERIES),
      };
      const userId = userOf(req);
      const devices = selectDevices(await source.devices(userId), q.device);
      const payload: Payload = { interval: q.interval ?? 'auto', stat: q.stat ?? 'avg' };
      const rows: Row[] = [];
      for (const name of tokens(q.param)) {
        const m = metricDef(name);
        if (!m || (m.kind !== 'gauge' && m.kind !== 'energy'))
          throw new BadGrafanaRequest(`unknown parameter "${name}" (a gauge or energy metric)`, 'param');
        for (const c of await columnsOf(userId, m, devices, payload, res, new Set([1, 2, 3]))) {
          for (let i = 0; i < c.t.length; i++) {
            const x = c.values[i];
            if (x === null || x === undefined) continue;
            rows.push({
              time: new Date(c.t[i]!).toISOString(),
              ts: c.t[i]!,
              device: c.device.name,
              deviceId: c.device.id,
              param: name,
              value: x,
            });
          }
        }
      }
      const csv =
        q.format === 'csv' || (q.format === undefined && /text\/csv/.test(req.headers.accept ?? ''));
      if (q.format !== undefined && q.format !== 'csv' && q.format !== 'json')
        throw new BadGrafanaRequest('format must be json or csv', 'format');
      if (!csv) return rows;
      return reply.type('text/csv; charset=utf-8').send(toCsv(rows));
    }),
  );

  return Promise.resolve();
}

function csvCell(value: string | number): string {
  const s = String(value);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(rows: readonly Row[]): string {
  const head = 'time,ts,device,deviceId,param,value\n';
  return (
    head +
    rows
      .map((r) => [r.time, r.ts, r.device, r.deviceId, r.param, r.value].map(csvCell).join(','))
      .join('\n') +
    (rows.length ? '\n' : '')
  );
}
