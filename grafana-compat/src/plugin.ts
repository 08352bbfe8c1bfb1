/**
 * Kilowatch as a Grafana data source, mounted by the API at `/grafana` (docs/api.md §Grafana): the simPod
 * "JSON API" protocol (`GET /`, `POST /metrics`, `/metric-payload-options` and `/options`, `/query`,
 * `/variable`, `/tag-keys`, `/tag-values`) and flat rows for the Infinity data source (`GET /rows`).
 * Every request is authenticated by the mounting app (an API key or a session) and sees only its
 * owner's devices. A body that cannot be used is answered 400 with the reason; a request past one of the
 * bounds (bounds.ts) is answered 400, 413 or 503 naming the bound.
 */
import { MAX_POINTS_PER_SERIES } from '@kilowatch/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import * as v from 'valibot';
import { answerTarget, columnsOf } from './answers.ts';
import {
  AnswerBudget,
  DEFAULT_GRAFANA_LIMITS,
  GrafanaLimitError,
  type GrafanaLimits,
  page,
  RETRY_AFTER_S,
} from './bounds.ts';
import { METRICS, metricDef } from './metrics.ts';
import { payloadsOf } from './payloads.ts';
import {
  MetricsRequestSchema,
  PagingEntries,
  type Payload,
  PayloadOptionsRequestSchema,
  QueryRequestSchema,
  type QueryResponse,
  type Row,
  RowsQuerySchema,
  TagValuesRequestSchema,
  VariableRequestSchema,
} from './protocol.ts';
import {
  BadGrafanaRequest,
  filtersOf,
  PHASE_VALUES,
  parse,
  rangeOf,
  selectDevices,
  tokens,
} from './request.ts';
import type { Resolution } from './resolution.ts';
import type { GrafanaSource } from './source.ts';

export interface GrafanaPluginOptions {
  source: GrafanaSource;
  /** onRequest hook of the mounting app: 401 unless the request carries a key or a session. */
  authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** The user the authenticated request acts for. */
  userOf: (request: FastifyRequest) => number;
  /** Bounds other than the defaults (`DEFAULT_GRAFANA_LIMITS`). */
  limits?: Partial<GrafanaLimits>;
  /** The clock of the answer budget (ms); the mounting app's clock. */
  now?: () => number;
}

/** Points per series when a query names no `maxDataPoints`. */
export const DEFAULT_MAX_DATA_POINTS = 2_000;
export const TAG_KEYS = ['device', 'location', 'phase'] as const;
/** What a dashboard variable may list (`POST /variable`). */
export const VARIABLE_TARGETS = ['devices', 'locations', 'metrics', 'phases'] as const;

export function grafanaPlugin(app: FastifyInstance, options: GrafanaPluginOptions): Promise<void> {
  const { source, userOf } = options;
  const limits: GrafanaLimits = { ...DEFAULT_GRAFANA_LIMITS, ...options.limits };
  const now = options.now ?? Date.now;
  const budgetOf = () => new AnswerBudget(limits, now);
  app.addHook('onRequest', options.authenticate);

  /** Wraps a handler so a request Kilowatch cannot use is answered 400 with its reason. */
  function handle<T>(fn: (req: FastifyRequest, reply: FastifyReply) => Promise<T>) {
    return async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        return await fn(req, reply);
      } catch (err) {
        if (err instanceof BadGrafanaRequest) {
          const status = err instanceof GrafanaLimitError ? err.status : 400;
          if (status === 503) reply.header('Retry-After', String(RETRY_AFTER_S));
          return reply
            .code(status)
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
      // Every metric repeats the device and tariff lists: the first few only, the rest are paged by
      // /metric-payload-options.
      const listed = devices.slice(0, limits.maxMetricsOptions);
      const tariffsListed = tariffs.slice(0, limits.maxMetricsOptions);
      return METRICS.map((m) => ({
        label: m.label,
        value: m.name,
        payloads: payloadsOf(m, listed, tariffsListed),
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
    return page(payload.options ?? [], (o) => `${o.label ?? ''} ${o.value}`, body, limits.maxOptions);
  });
  app.post('/metric-payload-options', doc('Options of one payload of a metric'), payloadOptions);
  app.post('/options', doc('Options of one payload of a metric (older name)'), payloadOptions);

  app.post(
    '/query',
    doc('Time series and tables for a panel'),
    handle(async (req) => {
      const body = parse(QueryRequestSchema, req.body ?? {});
      if (body.targets.length > limits.maxTargets)
        throw new GrafanaLimitError(
          `a query has at most ${limits.maxTargets} targets, this one ${body.targets.length}`,
          400,
          'targets',
        );
      const range = rangeOf(body.range.from, body.range.to);
      const maxDataPoints = Math.min(body.maxDataPoints ?? DEFAULT_MAX_DATA_POINTS, MAX_POINTS_PER_SERIES);
      const res: Resolution = { ...range, intervalMs: body.intervalMs ?? 0, maxDataPoints };
      const filters = filtersOf(body.adhocFilters);
      const userId = userOf(req);
      const all = await source.devices(userId);
      const out: QueryResponse = [];
      const budget = budgetOf();
      for (const target of body.targets) {
        if (target.hide) continue;
        out.push(...(await answerTarget(source, userId, target, all, filters, res, budget)));
        budget.check();
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
      let paging: v.InferOutput<v.ObjectSchema<typeof PagingEntries, undefined>> = {};
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
            v.object({ target: v.optional(v.string()), location: v.optional(v.string()), ...PagingEntries }),
            json,
          );
          what = parsed.target ?? what;
          location = parsed.location;
          paging = parsed;
        } else if (text) what = text;
      } else if (body.payload) {
        what = body.payload.target ?? what;
        location = body.payload.location;
        paging = body.payload;
      }
      const devices = await source.devices(userOf(req));
      const listed = <T extends { __text: string }>(items: T[]) =>
        page(items, (x) => x.__text, paging, limits.maxOptions);
      switch (what) {
        case 'devices':
          return listed(
            devices
              .filter((d) => location === undefined || d.location === location)
              .map((d) => ({ __text: d.name, __value: String(d.id) })),
          );
        case 'locations':
          return listed(
            [...new Set(devices.map((d) => d.location).filter((l): l is string => l !== null))].map((l) => ({
              __text: l,
              __value: l,
            })),
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
      const body = parse(TagValuesRequestSchema, req.body ?? {});
      const { key } = body;
      const devices = await source.devices(userOf(req));
      const listed = (items: { text: string }[]) => page(items, (x) => x.text, body, limits.maxOptions);
      if (key === 'device') return listed(devices.map((d) => ({ text: d.name })));
      if (key === 'location')
        return listed(
          [...new Set(devices.map((d) => d.location).filter((l): l is string => l !== null))].map((text) => ({
            text,
          })),
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
      const budget = budgetOf();
      const devices = budget.devices('rows', selectDevices(await source.devices(userId), q.device));
      const payload: Payload = { interval: q.interval ?? 'auto', stat: q.stat ?? 'avg' };
      const rows: Row[] = [];
      for (const name of tokens(q.param)) {
        const m = metricDef(name);
        if (!m || (m.kind !== 'gauge' && m.kind !== 'energy'))
          throw new BadGrafanaRequest(`unknown parameter "${name}" (a gauge or energy metric)`, 'param');
        const columns = await columnsOf(source, userId, m, devices, payload, res, new Set([1, 2, 3]), budget);
        budget.check();
        for (const c of columns) {
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
