/**
 * Simulated tariff costs (docs/domain.md §Tariffs; docs/spec.md §1: figures are labelled simulated). The same
 * hourly energy — the billed import after hourly netting across phases — is priced zone by zone with the
 * tariff calendar, whose day types know Polish public holidays.
 */

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  createTariffCalendar,
  fineRollupAt,
  fixedBucketStart,
  HOUR_MS,
  type HolidayCalendar,
  isDynamicGroup,
  localDateString,
  nextTurn,
  startOfLocalDay,
  startOfLocalMonth,
  TARIFF_GROUPS,
  type Tariff,
  type TariffGroup,
  type Zone,
} from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type Holidays from 'date-holidays';
import type { DeviceContext, Range } from './context.ts';
import { deviceCounters, type FineEnergy, fineEnergy } from './energy.ts';

const holidayYears = new Map<number, Set<string>>();
// Loaded at the first tariff answer, not at start-up (the library and its data take ~0.3 s of CPU).
const require = createRequire(import.meta.url);
let polish: Holidays | undefined;
const polishCalendar = (): Holidays => {
  polish ??= new (require('date-holidays') as typeof Holidays)('PL');
  return polish;
};

/** A worker's program: loads the holiday library and answers the public holidays of the years asked. */
const HOLIDAY_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const hd = new (require(workerData.library))('PL');
const days = {};
for (const y of workerData.years)
  days[y] = hd.getHolidays(y).filter((h) => h.type === 'public').map((h) => h.date.slice(0, 10));
parentPort.postMessage(days);
`;

/** Years being worked out by a worker now: a second request for them waits for the same answer. */
const learning = new Map<number, Promise<void>>();

/**
 * Works the years' holidays out in a worker thread, so the event loop never waits on loading the
 * library (~0.3 s of CPU, once) or on its rules (tens of ms per year). Should the worker fail, each
 * year is worked out here, a year per turn of the event loop.
 */
async function learnHolidayYears(first: number, last: number): Promise<void> {
  const waits: Promise<void>[] = [];
  const missing: number[] = [];
  for (let y = first; y <= last; y++) {
    const pending = learning.get(y);
    if (pending) waits.push(pending);
    else if (!holidayYears.has(y)) missing.push(y);
  }
  if (missing.length > 0) {
    const work = new Promise<Record<string, string[]>>((resolve, reject) => {
      const worker = new Worker(HOLIDAY_WORKER, {
        eval: true,
        workerData: { library: require.resolve('date-holidays'), years: missing },
      });
      worker.once('message', (days: Record<string, string[]>) => {
        resolve(days);
        void worker.terminate();
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`holiday worker exited with ${code}`)));
    }).then(
      (days) => {
        for (const y of missing) if (!holidayYears.has(y)) holidayYears.set(y, new Set(days[y] ?? []));
      },
      async () => {
        for (const y of missing) {
          if (holidayYears.has(y)) continue;
          POLISH_HOLIDAYS.isHoliday(y, 1, 1);
          await nextTurn();
        }
      },
    );
    const done = work.finally(() => {
      for (const y of missing) learning.delete(y);
    });
    for (const y of missing) learning.set(y, done);
    waits.push(done);
  }
  await Promise.all(waits);
}

/** Polish public holidays from the maintained date-holidays data (Easter-based days move every year). */
export const POLISH_HOLIDAYS: HolidayCalendar = {
  isHoliday(year, month, day) {
    let set = holidayYears.get(year);
    if (!set) {
      set = new Set(
        polishCalendar()
          .getHolidays(year)
          .filter((h) => h.type === 'public')
          .map((h) => h.date.slice(0, 10)),
      );
      holidayYears.set(year, set);
    }
    return set.has(`${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`);
  },
};

export interface Prices {
  zone1: number;
  zone2: number;
  zone3: number;
  fixed: number;
}

/**
 * Reference prices (PLN gross per kWh and per month) for groups the user has no tariff of: indicative
 * household prices, only ever shown as a simulation.
 */
export const REFERENCE_PRICES: Record<TariffGroup, Prices> = {
  G11: { zone1: 1.02, zone2: 1.02, zone3: 1.02, fixed: 24 },
  G12: { zone1: 1.18, zone2: 0.68, zone3: 0.68, fixed: 26 },
  G12as: { zone1: 1.12, zone2: 0.62, zone3: 0.62, fixed: 26 },
  G12n: { zone1: 1.1, zone2: 0.6, zone3: 0.6, fixed: 26 },
  G12r: { zone1: 1.19, zone2: 0.66, zone3: 0.66, fixed: 26 },
  G12w: { zone1: 1.22, zone2: 0.7, zone3: 0.7, fixed: 26 },
  // Added to each hour's market price: distribution, fees and the seller's margin.
  dynamic: { zone1: 0.55, zone2: 0.55, zone3: 0.55, fixed: 30 },
};

export interface ZoneCost {
  zone: Zone;
  energy: number;
  cost: number;
}

export interface MonthCost {
  month: string;
  zones: ZoneCost[];
  energy: number;
  fixed: number;
  cost: number;
}

export interface PricingInput {
  group: TariffGroup;
  operator?: string | null;
  schedule?: Tariff['schedule'];
  clockBasis?: Tariff['clockBasis'];
  prices: Prices;
  /** Local dates `YYYY-MM-DD`: only hours of days in [validFrom, validTo] are priced by this tariff. */
  validFrom?: string;
  validTo?: string | null;
  /**
   * The location's price series per bucket of the energy (aligned with its `t`, `stepPrices`): a `dynamic`
   * group's hour costs that price plus zone 1's; a bucket without one is unpriced, never priced at zero.
   */
  series?: readonly (number | null)[];
}

/**
 * What one bucket of billed import costs: its zone's price, plus the bucket's market price for a dynamic
 * group; null when a dynamic bucket has no price.
 */
export function bucketCost(
  group: TariffGroup,
  prices: Prices,
  zone: Zone,
  energy: number,
  market: number | null | undefined,
): number | null {
  const zonePrice = zone === 1 ? prices.zone1 : zone === 2 ? prices.zone2 : prices.zone3;
  if (!isDynamicGroup(group)) return energy * zonePrice;
  if (market === null || market === undefined) return null;
  return energy * (zonePrice + market);
}

/** Unpriced buckets named in one answer. */
export const UNPRICED_NAMED = 1_000;

/** Hours priced between two turns of the event loop (a few ms of zone and calendar lookups). */
const HOURS_PER_TURN = 2048;

/** One fine bucket of billed import with the tariff zone core's calendar puts it in (null without energy). */
export interface ZonedBucket {
  t: number;
  /** The bucket's index in the energy it came from. */
  i: number;
  /** Local date `YYYY-MM-DD` in the location's zone. */
  date: string;
  zone: Zone | null;
  energy: number | null;
}

/**
 * The hourly (or 15-minute) billed import with its zone from the tariff calendar (core's
 * `createTariffCalendar`, Polish holidays), only the buckets of days the tariff is valid on. Pricing per
 * month (`priceHours`) and energy per zone per bucket (`zoneEnergy`) both read this. Years of hours take
 * a zone lookup each, so the event loop gets a turn every `HOURS_PER_TURN` hours.
 */
export async function zonedBuckets(
  energy: FineEnergy,
  tz: string,
  input: Omit<PricingInput, 'prices'>,
): Promise<ZonedBucket[]> {
  const calendar = createTariffCalendar({
    group: input.group,
    operator: input.operator ?? null,
    schedule: input.schedule ?? null,
    ...(input.clockBasis ? { clockBasis: input.clockBasis } : {}),
    holidays: POLISH_HOLIDAYS,
  });
  if (energy.t.length > 0) {
    const first = new Date(energy.t[0]!).getUTCFullYear();
    const last = new Date(energy.t[energy.t.length - 1]!).getUTCFullYear();
    await learnHolidayYears(first - 1, last + 1);
  }
  const out: ZonedBucket[] = [];
  for (let i = 0; i < energy.t.length; i++) {
    if (i % HOURS_PER_TURN === HOURS_PER_TURN - 1) await nextTurn();
    const t = energy.t[i]!;
    const date = localDateString(t, tz);
    if (input.validFrom && date < input.validFrom) continue;
    if (input.validTo && date > input.validTo) continue;
    const e = energy.billedImport[i];
    if (e === null || e === undefined) out.push({ t, i, date, zone: null, energy: null });
    else out.push({ t, i, date, zone: calendar.zoneAt(t, tz), energy: e });
  }
  return out;
}

export interface PricedMonths {
  months: MonthCost[];
  /** Buckets with billed import a dynamic group had no price for (their energy is left out of the cost). */
  unpriced: number[];
}

/** Prices hourly billed import per zone and local month. */
export async function priceHours(energy: FineEnergy, tz: string, input: PricingInput): Promise<PricedMonths> {
  const months = new Map<string, Map<Zone, { energy: number; cost: number }>>();
  const unpriced: number[] = [];
  for (const b of await zonedBuckets(energy, tz, input)) {
    const month = b.date.slice(0, 7);
    let zones = months.get(month);
    if (!zones) {
      zones = new Map();
      months.set(month, zones);
    }
    if (b.zone === null || b.energy === null) continue;
    const cost = bucketCost(input.group, input.prices, b.zone, b.energy, input.series?.[b.i]);
    if (cost === null) {
      if (b.energy > 0 && unpriced.length < UNPRICED_NAMED) unpriced.push(b.t);
      continue;
    }
    const acc = zones.get(b.zone) ?? { energy: 0, cost: 0 };
    acc.energy += b.energy;
    acc.cost += cost;
    zones.set(b.zone, acc);
  }
  return {
    unpriced,
    months: [...months].map(([month, zones]) => {
      const list = [...zones]
        .sort(([a], [b]) => a - b)
        .map(([zone, z]) => ({ zone, energy: z.energy, cost: z.cost }));
      const energySum = list.reduce((s, z) => s + z.energy, 0);
      const variable = list.reduce((s, z) => s + z.cost, 0);
      return {
        month,
        zones: list,
        energy: energySum,
        fixed: input.prices.fixed,
        cost: variable + input.prices.fixed,
      };
    }),
  };
}

export type ZoneBucketUnit = 'hour' | 'day' | 'month';

export interface ZoneEnergy {
  /** Bucket starts: whole hours, local days or local months of `tz`. */
  t: number[];
  /** Per zone that occurs in the range (ascending), billed import per bucket; null where nothing was metered. */
  zones: { zone: Zone; energy: (number | null)[] }[];
}

/**
 * Billed import per tariff zone per hour, local day or local month: the buckets `/api/tariffs/:id/stats`
 * prices, summed by bucket instead of by month, so the months of this equal that route's zone energy.
 */
export async function zoneEnergy(
  energy: FineEnergy,
  tz: string,
  input: Omit<PricingInput, 'prices'>,
  unit: ZoneBucketUnit,
): Promise<ZoneEnergy> {
  const startOf = (t: number) =>
    unit === 'hour'
      ? fixedBucketStart(t, HOUR_MS)
      : unit === 'day'
        ? startOfLocalDay(t, tz)
        : startOfLocalMonth(t, tz);
  const t: number[] = [];
  const sums: Map<Zone, number>[] = [];
  const metered: boolean[] = [];
  const seen = new Set<Zone>();
  for (const b of await zonedBuckets(energy, tz, input)) {
    const start = startOf(b.t);
    if (t[t.length - 1] !== start) {
      t.push(start);
      sums.push(new Map());
      metered.push(false);
    }
    const i = t.length - 1;
    if (b.zone === null || b.energy === null) continue;
    metered[i] = true;
    seen.add(b.zone);
    sums[i]!.set(b.zone, (sums[i]!.get(b.zone) ?? 0) + b.energy);
  }
  const zones = [...seen]
    .sort((a, b) => a - b)
    .map((zone) => ({ zone, energy: t.map((_, i) => (metered[i] ? (sums[i]!.get(zone) ?? 0) : null)) }));
  return { t, zones };
}

export async function hourlyBilledEnergy(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
): Promise<FineEnergy> {
  const counters = await deviceCounters(store, ctx.deviceKey);
  return fineEnergy(store, ctx, counters, range, fineRollupAt(ctx.tz, range.from));
}

export function pricesOf(t: Pick<Tariff, 'zone1Price' | 'zone2Price' | 'zone3Price' | 'fixedPrice'>): Prices {
  return { zone1: t.zone1Price, zone2: t.zone2Price, zone3: t.zone3Price, fixed: t.fixedPrice };
}

export interface GroupCost {
  group: TariffGroup;
  zones: ZoneCost[];
  energy: number;
  fixed: number;
  cost: number;
  prices: Prices;
}

export interface GroupComparison {
  groups: GroupCost[];
  /**
   * The dynamic group is ranked only where the location's price series prices every hour with billed import:
   * `covered` false leaves it out, `unpriced` names the hours without a price (none: no series at all).
   */
  dynamic: { covered: boolean; unpriced: number[] };
}

/**
 * Every group priced on the same hourly energy, cheapest first. `own` supplies the user's prices per group;
 * `series` (aligned with the energy's buckets) the location's prices for the dynamic group.
 */
export async function compareGroups(
  energy: FineEnergy,
  tz: string,
  own: Partial<Record<TariffGroup, Tariff>>,
  series?: readonly (number | null)[],
): Promise<GroupComparison> {
  const out: GroupCost[] = [];
  let dynamic: GroupComparison['dynamic'] = { covered: false, unpriced: [] };
  for (const group of TARIFF_GROUPS) {
    if (isDynamicGroup(group) && !series) continue;
    const t = own[group];
    const prices = t ? pricesOf(t) : REFERENCE_PRICES[group];
    const priced = await priceHours(energy, tz, {
      group,
      operator: t?.operator ?? null,
      schedule: t?.schedule ?? null,
      ...(t?.clockBasis ? { clockBasis: t.clockBasis } : {}),
      prices,
      ...(series ? { series } : {}),
    });
    if (isDynamicGroup(group)) {
      dynamic = { covered: priced.unpriced.length === 0, unpriced: priced.unpriced };
      if (!dynamic.covered) continue;
    }
    const months = priced.months;
    const zones = new Map<Zone, ZoneCost>();
    for (const m of months)
      for (const z of m.zones) {
        const acc = zones.get(z.zone) ?? { zone: z.zone, energy: 0, cost: 0 };
        acc.energy += z.energy;
        acc.cost += z.cost;
        zones.set(z.zone, acc);
      }
    out.push({
      group,
      zones: [...zones.values()].sort((a, b) => a.zone - b.zone),
      energy: months.reduce((s, m) => s + m.energy, 0),
      fixed: months.reduce((s, m) => s + m.fixed, 0),
      cost: months.reduce((s, m) => s + m.cost, 0),
      prices,
    });
  }
  return { groups: out.sort((a, b) => a.cost - b.cost), dynamic };
}
