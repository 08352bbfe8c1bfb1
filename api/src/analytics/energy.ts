/**
 * Energy answers (docs/domain.md §Energy from counters, §Balance): import and export per bucket from the
 * meter's own counters — Σ eai1..3 (or energy3phases_import when that is what the meter reports), export
 * likewise — netted per hour across phases, then summed into days and months of the location's zone.
 */
import {
  addLocalDays,
  addLocalMonths,
  billingPeriodAt,
  calendarBucketCountAtMost,
  calendarBucketStartsYielding,
  combinedParamDef,
  fineRollupAt,
  fixedBucketStart,
  hourlyBalance,
  MAX_POINTS_PER_SERIES,
  ROLLUP_STEP_MS,
  startOfLocalDay,
  startOfLocalMonth,
  startOfLocalYear,
  sumSeries,
} from '@kilowatch/core';
import type { EnergyInterval, QuerySource, RollupInterval, TelemetryStore } from '@kilowatch/tsdb';
import type { MeterOffset } from '../plugins/app/devices-repository.ts';
import { type DeviceContext, type Range, rangeTooLong } from './context.ts';

export interface EnergyCounters {
  import: string[];
  export: string[];
}

/** The per-phase registers of the catalogue's all-phase counters (`eai` = eai1 + eai2 + eai3). */
const PHASE_IMPORT = combinedParamDef('eai')!.of;
const PHASE_EXPORT = combinedParamDef('eae')!.of;

/** The counters a meter reports: per-phase registers when it has any, its three-phase totals otherwise. */
export function countersOf(reported: readonly string[]): EnergyCounters {
  const has = new Set(reported);
  const pick = (phases: readonly string[], total: string) => {
    const p = phases.filter((c) => has.has(c));
    if (p.length > 0) return p;
    return has.has(total) ? [total] : [];
  };
  return {
    import: pick(PHASE_IMPORT, 'energy3phases_import'),
    export: pick(PHASE_EXPORT, 'energy3phases_export'),
  };
}

export async function deviceCounters(store: TelemetryStore, deviceKey: string): Promise<EnergyCounters> {
  const latest = await store.latest(deviceKey);
  return countersOf(latest ? Object.keys(latest.values) : []);
}

export interface FineEnergy {
  interval: RollupInterval;
  t: number[];
  import: (number | null)[];
  export: (number | null)[];
  balance: (number | null)[];
  /** Positive part of the netted balance (billed import) and the negative part as a positive number. */
  billedImport: (number | null)[];
  billedExport: (number | null)[];
}

/** The API's one cap on the buckets of an answer (docs/api.md, "Data range is too long."). */
const MAX_FINE_BUCKETS = MAX_POINTS_PER_SERIES;

/** Energy per fixed bucket (15m, 30m or 1h) with import and export netted per bucket across phases. */
export async function fineEnergy(
  store: TelemetryStore,
  ctx: DeviceContext,
  counters: EnergyCounters,
  range: Range,
  interval: RollupInterval,
  source?: QuerySource,
): Promise<FineEnergy> {
  const step = ROLLUP_STEP_MS[interval];
  const from = fixedBucketStart(range.from, step);
  const to = fixedBucketStart(range.to + step - 1, step);
  if ((to - from) / step > MAX_FINE_BUCKETS) throw rangeTooLong();
  const all = [...counters.import, ...counters.export];
  const res = all.length
    ? await store.energy({
        deviceKey: ctx.deviceKey,
        counters: all,
        from,
        to,
        interval,
        tz: ctx.tz,
        events: false,
        ...(source ? { source } : {}),
      })
    : null;
  const t = res?.t ?? [];
  if (!res) for (let s = from; s < to; s += step) t.push(s);
  const col = (names: string[]) =>
    names.map((c) => res?.energy[c] ?? new Array<number | null>(t.length).fill(null));
  const imp = counters.import.length
    ? sumSeries(col(counters.import))
    : new Array<number | null>(t.length).fill(null);
  const exp = counters.export.length
    ? sumSeries(col(counters.export))
    : new Array<number | null>(t.length).fill(null);
  const b = hourlyBalance([imp], [exp]);
  return { interval, t, import: imp, export: exp, ...b };
}

export interface EnergyAnswer {
  interval: EnergyInterval;
  tz: string;
  t: number[];
  import: (number | null)[];
  export: (number | null)[];
  balance: (number | null)[];
}

function calendarEnd(last: number, unit: 'day' | 'month', tz: string): number {
  return unit === 'day' ? addLocalDays(last, 1, tz) : addLocalMonths(last, 1, tz);
}

/**
 * `/energy`: fixed buckets come straight from the counters (sub-hour buckets net within the bucket);
 * days and months read the counters' energy per local day or month. Their balance is the sum of their
 * hourly balances, and since each hour's balance is its import minus its export (docs/domain.md §Balance), that
 * sum is the bucket's import minus its export; only the billed parts of a balance need the hours.
 */
export async function energySeries(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
  interval: EnergyInterval,
  source?: QuerySource,
  known?: EnergyCounters,
): Promise<EnergyAnswer> {
  const counters = known ?? (await deviceCounters(store, ctx.deviceKey));
  if (interval === '15m' || interval === '30m' || interval === '1h') {
    const f = await fineEnergy(store, ctx, counters, range, interval, source);
    return { interval, tz: ctx.tz, t: f.t, import: f.import, export: f.export, balance: f.balance };
  }
  const unit = interval === '1d' ? 'day' : 'month';
  // Counted by arithmetic first: building the local-day starts of a too-long range is the costly part.
  if (calendarBucketCountAtMost(range.from, range.to, unit) > MAX_FINE_BUCKETS + 2) throw rangeTooLong();
  const starts = await calendarBucketStartsYielding(range.from, range.to, unit, ctx.tz);
  if (starts.length > MAX_FINE_BUCKETS) throw rangeTooLong();
  if (starts.length === 0) return { interval, tz: ctx.tz, t: [], import: [], export: [], balance: [] };
  const all = [...counters.import, ...counters.export];
  const none = () => new Array<number | null>(starts.length).fill(null);
  const res = all.length
    ? await store.energy({
        deviceKey: ctx.deviceKey,
        counters: all,
        from: starts[0]!,
        to: calendarEnd(starts[starts.length - 1]!, unit, ctx.tz),
        interval,
        tz: ctx.tz,
        events: false,
        ...(source ? { source } : {}),
      })
    : null;
  const sum = (names: string[]) =>
    names.length ? sumSeries(names.map((c) => res?.energy[c] ?? none())) : none();
  const imp = sum(counters.import);
  const exp = sum(counters.export);
  return {
    interval,
    tz: ctx.tz,
    t: starts,
    import: imp,
    export: exp,
    balance: hourlyBalance([imp], [exp]).balance,
  };
}

export interface Triple {
  import: number | null;
  export: number | null;
  balance: number | null;
}

type Buckets = Pick<FineEnergy, 't' | 'import' | 'export' | 'balance'>;

function sumWithin(f: Buckets, from: number, to: number): Triple {
  let imp: number | null = null;
  let exp: number | null = null;
  let bal: number | null = null;
  for (let i = 0; i < f.t.length; i++) {
    const t = f.t[i]!;
    if (t < from || t >= to) continue;
    const a = f.import[i];
    const e = f.export[i];
    const b = f.balance[i];
    if (a !== null && a !== undefined) imp = (imp ?? 0) + a;
    if (e !== null && e !== undefined) exp = (exp ?? 0) + e;
    if (b !== null && b !== undefined) bal = (bal ?? 0) + b;
  }
  return { import: imp, export: exp, balance: bal };
}

/** The register a counter shows on the physical meter: stored value plus the newest offset in force. */
export function registerValue(
  counter: string,
  stored: number,
  offsets: readonly MeterOffset[],
  at: number,
): number {
  let offset = 0;
  for (const o of offsets) if (o.param === counter && o.at <= at) offset = o.offset;
  return stored + offset;
}

export interface EnergySummaryAnswer {
  tz: string;
  unit: 'kWh';
  today: Triple;
  month: Triple;
  year: Triple;
  total: Triple;
  billingPeriod: { start: string; end: string };
  billing: Triple;
}

/** Today, this month, this year and this billing period in the location's zone, and the meter totals. */
export async function energySummary(
  store: TelemetryStore,
  ctx: DeviceContext,
  offsets: readonly MeterOffset[],
  now: number,
): Promise<EnergySummaryAnswer> {
  const { tz } = ctx;
  const latest = await store.latest(ctx.deviceKey);
  const counters = countersOf(latest ? Object.keys(latest.values) : []);
  const period = billingPeriodAt(now, ctx.device.billingStart, ctx.device.billingMonths, tz);
  const day = startOfLocalDay(now, tz);
  const month = startOfLocalMonth(now, tz);
  const year = startOfLocalYear(now, tz);
  const from = Math.min(year, period.start);
  // Per local day (a year is 365 buckets, not 8,760 hours; today's bucket holds what was read so far,
  // and no reading runs more than minutes ahead). A period's balance, the sum of its hourly balances, is
  // its import minus its export, so days carry it. A period not starting at a local midnight takes hours.
  const f =
    startOfLocalDay(from, tz) === from
      ? await energySeries(store, ctx, { from, to: now }, '1d', undefined, counters)
      : await fineEnergy(store, ctx, counters, { from, to: now }, fineRollupAt(tz, from));
  const within = (since: number): Triple => sumWithin(f, since, now + 1);
  const register = (names: string[]): number | null => {
    if (!latest || names.length === 0) return null;
    let sum = 0;
    for (const c of names) {
      const v = latest.values[c];
      if (v === undefined) return null;
      sum += registerValue(c, v, offsets, now);
    }
    return sum;
  };
  const totalImport = register(counters.import);
  const totalExport = register(counters.export);
  return {
    tz,
    unit: 'kWh',
    today: within(day),
    month: within(month),
    year: within(year),
    total: {
      import: totalImport,
      export: totalExport,
      balance: totalImport === null && totalExport === null ? null : (totalImport ?? 0) - (totalExport ?? 0),
    },
    billingPeriod: { start: new Date(period.start).toISOString(), end: new Date(period.end).toISOString() },
    billing: within(period.start),
  };
}
