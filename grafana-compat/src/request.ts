/**
 * Reading a Grafana request: its schema, its time range, the devices it names, its ad hoc filters and its
 * payload values. What cannot be used is a BadGrafanaRequest, answered 400 with the reason.
 */
import { EARLIEST_QUERY_MS, LATEST_QUERY_MS, MESSAGES } from '@kilowatch/core';
import type { Stat } from '@kilowatch/tsdb';
import * as v from 'valibot';
import { type AdhocFilter, type Payload, PayloadSchema, type QueryTarget, reason } from './protocol.ts';
import type { GrafanaDevice } from './source.ts';

export const STATS: readonly Stat[] = ['avg', 'min', 'max'];
export const FORMATS = ['timeseries', 'table'] as const;
export const PHASE_VALUES = ['1', '2', '3'];

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

export function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
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

export function rangeOf(from: string, to: string): { from: number; to: number } {
  const f = instant(from, 'from');
  const t = instant(to, 'to');
  if (t <= f) throw new BadGrafanaRequest('the range must end after it starts', 'to');
  if (f < EARLIEST_QUERY_MS || t > LATEST_QUERY_MS) throw new BadGrafanaRequest(MESSAGES.rangeTooLong, 'to');
  return { from: f, to: t };
}

/** Payload values as a flat list: Grafana writes multi-value variables as `{a,b}` or as a list. */
export function tokens(value: Payload[string]): string[] {
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

export function selectDevices(
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

export interface Filters {
  devices(all: readonly GrafanaDevice[]): GrafanaDevice[];
  phases: Set<number>;
}

export function filtersOf(adhoc: readonly AdhocFilter[] = []): Filters {
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

export function payloadOf(target: QueryTarget): Payload {
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

export function one(payload: Payload, name: string): string | undefined {
  const t = tokens(payload[name]);
  if (t.length > 1) throw new BadGrafanaRequest(`${name} takes one value`, name);
  return t[0];
}

export function pick<T extends string>(
  payload: Payload,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const value = one(payload, name);
  if (value === undefined || value === 'auto') return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new BadGrafanaRequest(`${name} must be one of ${allowed.join(', ')}, not "${value}"`, name);
  return value as T;
}
