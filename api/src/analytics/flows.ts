/**
 * A location's energy flows (docs/domain.md §Energy flows, docs/api.md §Energy flows): each device's
 * counters read per step (an hour, or a quarter where the zone's hours do not nest), summed per role,
 * allocated and summed into the asked intervals by core's `flowSeries`; the grid import's energy part
 * priced by the location's tariff.
 */
import {
  calendarBucketCountAtMost,
  calendarBuckets,
  type DeviceRole,
  FLOW_KEYS,
  type FlowColumns,
  type FlowInterval,
  type Flows,
  fineRollup,
  fixedBucketStart,
  flowSeries,
  type PriceRow,
  ROLLUP_STEP_MS,
  stepPrices,
  type Tariff,
} from '@kilowatch/core';
import type { RollupInterval, TelemetryStore } from '@kilowatch/tsdb';
import type { DeviceRecord } from '../plugins/app/devices-repository.ts';
import { type Range, rangeTooLong } from './context.ts';
import { deviceCounters, type FineEnergy, fineEnergy } from './energy.ts';
import { bucketCost, pricesOf, UNPRICED_NAMED, zonedBuckets } from './tariffs.ts';

/** Steps of one answer (a year of quarters is 35,040; five years of hours 43,824). */
export const MAX_FLOW_STEPS = 100_000;
/** Steps × devices of one answer: what the store is asked for. */
export const MAX_FLOW_READS = 1_000_000;
/** Devices of one location read concurrently. */
const READ_AHEAD = 4;

interface Intervals {
  starts: number[];
  end: number;
}

function intervalsOf(range: Range, interval: FlowInterval, tz: string): Intervals {
  if (interval === '15m' || interval === '1h') {
    const step = ROLLUP_STEP_MS[interval];
    const from = fixedBucketStart(range.from, step);
    const end = fixedBucketStart(range.to + step - 1, step);
    if ((end - from) / step > MAX_FLOW_STEPS) throw rangeTooLong();
    const starts: number[] = [];
    for (let t = from; t < end; t += step) starts.push(t);
    return { starts, end };
  }
  const unit = interval === '1d' ? 'day' : 'month';
  if (calendarBucketCountAtMost(range.from, range.to, unit) > MAX_FLOW_STEPS) throw rangeTooLong();
  const b = calendarBuckets(range.from, range.to, unit, tz);
  return { starts: b.starts, end: b.end };
}

/** What a device adds to the home in its role, per step: I − E, P, D − C, or a sub-meter's use. */
function contribution(role: DeviceRole, imp: number | null, exp: number | null): number | null {
  if (role === 'grid') return imp === null && exp === null ? null : (imp ?? 0) - (exp ?? 0);
  if (role === 'production') return exp;
  if (role === 'storage') return imp === null && exp === null ? null : (exp ?? 0) - (imp ?? 0);
  return imp;
}

export interface FlowsInput {
  store: TelemetryStore;
  locationId: number;
  tz: string;
  devices: readonly DeviceRecord[];
  range: Range;
  interval: FlowInterval;
  /** The location's tariff, pricing the grid import's energy part; null leaves the cost null. */
  tariff: Tariff | null;
  /** The location's price series from an hour before the range on (by start): the export's value, a dynamic tariff's import. */
  prices: readonly PriceRow[];
}

export async function locationFlows(input: FlowsInput): Promise<Flows> {
  const { store, tz, devices, interval } = input;
  const intervals = intervalsOf(input.range, interval, tz);
  const step: RollupInterval = interval === '15m' ? '15m' : interval === '1h' ? '1h' : fineRollup(intervals);
  const stepMs = ROLLUP_STEP_MS[step];
  const from = intervals.starts[0] ?? input.range.from;
  const end = intervals.end;
  // Counted before any is built: a century of months is a few hundred thousand hours.
  const count = Math.ceil((end - from) / stepMs);
  if (count > MAX_FLOW_STEPS || count * devices.length > MAX_FLOW_READS) throw rangeTooLong();
  const stepStarts: number[] = [];
  for (let t = from; t < end; t += stepMs) stepStarts.push(t);

  // Each device's import and export per step, on the common grid of steps.
  const energies: FineEnergy[] = new Array(devices.length);
  let next = 0;
  const reader = async () => {
    for (let k = next++; k < devices.length; k = next++) {
      const d = devices[k]!;
      const counters = await deviceCounters(store, d.deviceKey);
      energies[k] = await fineEnergy(
        store,
        { device: d, deviceKey: d.deviceKey, tz },
        counters,
        { from, to: end },
        step,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(READ_AHEAD, devices.length) }, reader));
  const onGrid = (f: FineEnergy, values: readonly (number | null)[]): (number | null)[] => {
    const out = new Array<number | null>(stepStarts.length).fill(null);
    for (let i = 0; i < f.t.length; i++) {
      const k = Math.round((f.t[i]! - from) / stepMs);
      if (k >= 0 && k < out.length) out[k] = values[i] ?? null;
    }
    return out;
  };

  // Import and export stay unknown without a grid meter, and in the steps it has no counter delta for; a
  // step any other device has no delta for counts as zero.
  const n = stepStarts.length;
  const columns: FlowColumns = {
    import: new Array<number | null>(n).fill(null),
    export: new Array<number | null>(n).fill(null),
    production: new Array<number>(n).fill(0),
    charge: new Array<number>(n).fill(0),
    discharge: new Array<number>(n).fill(0),
    subMeters: new Array<number>(n).fill(0),
  };
  const add = (column: (number | null)[], values: readonly (number | null)[]) => {
    for (let i = 0; i < n; i++) column[i] = (column[i] ?? 0) + (values[i] ?? 0);
  };
  const perDevice: Record<string, (number | null)[]> = {};
  const roles: Record<string, DeviceRole> = {};
  let gridEnergy: FineEnergy | null = null;
  for (const [k, d] of devices.entries()) {
    const f = energies[k]!;
    const imp = onGrid(f, f.import);
    const exp = onGrid(f, f.export);
    roles[String(d.id)] = d.role;
    const own = imp.map((x, i) => contribution(d.role, x, exp[i]!));
    perDevice[String(d.id)] = summedInto(stepStarts, own, intervals);
    if (d.role === 'grid') {
      gridEnergy = f;
      const I = columns.import as (number | null)[];
      const E = columns.export as (number | null)[];
      for (let i = 0; i < n; i++) {
        if (imp[i] === null && exp[i] === null) continue;
        I[i] = imp[i] ?? 0;
        E[i] = exp[i] ?? 0;
      }
    } else if (d.role === 'production') add(columns.production as number[], exp);
    else if (d.role === 'storage') {
      add(columns.charge as number[], imp);
      add(columns.discharge as number[], exp);
    } else add(columns.subMeters as number[], imp);
  }

  const series = flowSeries(stepStarts, columns, intervals);
  const whole = flowSeries(stepStarts, columns, { starts: [from], end });
  const cost = await importCost(gridEnergy, input.tariff, tz, intervals, input.prices);
  const exported = exportValue(columns, stepStarts, stepMs, input.prices, intervals);
  const at0 = <T>(values: readonly T[]) => values[0]!;
  const totalFlows =
    whole.consumption[0] === null
      ? null
      : (Object.fromEntries(FLOW_KEYS.map((key) => [key, whole.flows[key][0] ?? 0])) as NonNullable<
          Flows['totals']['flows']
        >);
  return {
    locationId: input.locationId,
    interval,
    tz,
    step: step === '15m' ? '15m' : '1h',
    unit: 'kWh',
    t: intervals.starts.map((t) => new Date(t).toISOString()),
    import: series.import,
    export: series.export,
    production: series.production,
    charge: series.charge,
    discharge: series.discharge,
    consumption: series.consumption,
    subMeters: series.subMeters,
    untracked: series.untracked,
    selfConsumption: series.selfConsumption,
    selfSufficiency: series.selfSufficiency,
    flows: series.flows,
    inconsistent: series.inconsistent,
    cost: {
      import: cost.perInterval,
      exportValue: exported.perInterval,
      currency: input.tariff?.currency ?? null,
      // Steps without a price: exporting ones (any tariff), importing ones under a dynamic tariff.
      unpriced: [...new Set([...exported.unpriced, ...cost.unpriced])]
        .sort((x, y) => x - y)
        .slice(0, UNPRICED_NAMED)
        .map((t) => new Date(t).toISOString()),
    },
    devices: perDevice,
    roles,
    totals: {
      import: at0(whole.import),
      export: at0(whole.export),
      production: at0(whole.production),
      charge: at0(whole.charge),
      discharge: at0(whole.discharge),
      consumption: at0(whole.consumption),
      subMeters: at0(whole.subMeters),
      untracked: at0(whole.untracked),
      selfConsumption: at0(whole.selfConsumption),
      selfSufficiency: at0(whole.selfSufficiency),
      flows: totalFlows,
      inconsistent: at0(whole.inconsistent),
      cost: {
        import: cost.total,
        exportValue: exported.total,
        currency: input.tariff?.currency ?? null,
      },
    },
  };
}

/** Sums per-step values into the intervals (null where no step of an interval has one). */
function summedInto(
  stepStarts: readonly number[],
  values: readonly (number | null)[],
  intervals: Intervals,
): (number | null)[] {
  const out = new Array<number | null>(intervals.starts.length).fill(null);
  let k = 0;
  for (let i = 0; i < stepStarts.length; i++) {
    const t = stepStarts[i]!;
    if (t < (intervals.starts[0] ?? Number.POSITIVE_INFINITY) || t >= intervals.end) continue;
    while (k + 1 < intervals.starts.length && t >= intervals.starts[k + 1]!) k++;
    const v = values[i];
    if (v !== null && v !== undefined) out[k] = (out[k] ?? 0) + v;
  }
  return out;
}

/**
 * The grid's net export of each step (its export less its import: the hour's negative balance for hourly
 * steps) at the step's price, summed per interval; steps that exported without a price are named.
 */
function exportValue(
  columns: FlowColumns,
  stepStarts: readonly number[],
  stepMs: number,
  prices: readonly PriceRow[],
  intervals: Intervals,
): { perInterval: (number | null)[]; total: number | null; unpriced: number[] } {
  const price = stepPrices(stepStarts, stepMs, prices);
  const values = new Array<number | null>(stepStarts.length).fill(null);
  const unpriced: number[] = [];
  for (let i = 0; i < stepStarts.length; i++) {
    const I = columns.import[i];
    const E = columns.export[i];
    if (I == null || E == null || E - I <= 0) continue;
    const p = price[i];
    if (p === null || p === undefined) {
      if (unpriced.length < UNPRICED_NAMED) unpriced.push(stepStarts[i]!);
      continue;
    }
    values[i] = (E - I) * p;
  }
  const perInterval = summedInto(stepStarts, values, intervals);
  let total: number | null = null;
  for (const c of perInterval) if (c !== null) total = (total ?? 0) + c;
  return { perInterval, total, unpriced };
}

/**
 * The grid import's energy part per interval: each step's billed import (the hourly netted balance's
 * positive part, docs/domain.md §Balance) at the price of the tariff zone the step falls in, on the days the
 * tariff is valid; under a dynamic tariff plus the step's price from the series, and a step without one is
 * named, never priced at zero. The monthly fixed price is the tariff comparison's, not an interval's.
 */
async function importCost(
  grid: FineEnergy | null,
  tariff: Tariff | null,
  tz: string,
  intervals: Intervals,
  prices: readonly PriceRow[],
): Promise<{ perInterval: (number | null)[]; total: number | null; unpriced: number[] }> {
  const none = { perInterval: intervals.starts.map(() => null), total: null, unpriced: [] };
  if (!grid || !tariff) return none;
  const zonePrices = pricesOf(tariff);
  const series = stepPrices(grid.t, ROLLUP_STEP_MS[grid.interval], prices);
  const zoned = await zonedBuckets(grid, tz, {
    group: tariff.group,
    operator: tariff.operator,
    schedule: tariff.schedule,
    clockBasis: tariff.clockBasis,
    validFrom: tariff.validFrom,
    validTo: tariff.validTo,
  });
  const unpriced: number[] = [];
  const starts = zoned.map((b) => b.t);
  const costs = zoned.map((b) => {
    if (b.zone === null || b.energy === null) return null;
    const cost = bucketCost(tariff.group, zonePrices, b.zone, b.energy, series[b.i]);
    if (cost === null && b.energy > 0 && unpriced.length < UNPRICED_NAMED) unpriced.push(b.t);
    return cost;
  });
  const perInterval = summedInto(starts, costs, intervals);
  let total: number | null = null;
  for (const c of perInterval) if (c !== null) total = (total ?? 0) + c;
  return { perInterval, total, unpriced };
}
