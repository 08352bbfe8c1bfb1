/**
 * A location's prosumer settlement per billing period (docs/domain.md §Prosumer settlement, docs/api.md
 * §Prosumer settlement): the grid meter's hourly netted balance from the day the scheme began, the export
 * banked as kWh (net-metering) or valued at the price series (net-billing), drawn by core's `settle`.
 */
import {
  billingPeriodAt,
  fineRollupAt,
  type Location,
  netMeteringRatio,
  type PriceRow,
  ROLLUP_STEP_MS,
  type SettlementAnswer,
  type SettlementRules,
  settle,
  settlementPrices,
  stepPrices,
  type Tariff,
  zonedTimeToUtc,
} from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { DeviceRecord } from '../plugins/app/devices-repository.ts';
import { type Range, rangeTooLong } from './context.ts';
import { deviceCounters, fineEnergy } from './energy.ts';
import { MAX_FLOW_STEPS } from './flows.ts';
import { bucketCost, pricesOf, zonedBuckets } from './tariffs.ts';

/** Billing periods of one answer. */
const MAX_PERIODS = 600;

export interface SettlementInput {
  store: TelemetryStore;
  location: Location;
  /** The location's grid meter: its counters and its billing periods. */
  grid: DeviceRecord;
  /** Prices the import's energy part (net-billing's deposit offsets only that); null: nothing to offset. */
  tariff: Tariff | null;
  /** The location's price series from the scheme's first day on (net-billing). */
  prices: readonly PriceRow[];
  range: Range;
  rules: SettlementRules;
}

function dayStart(day: string, tz: string): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return zonedTimeToUtc(y, m, d, 0, 0, 0, tz);
}

export async function locationSettlement(input: SettlementInput): Promise<SettlementAnswer> {
  const { location, grid, rules, range } = input;
  const tz = location.timezone;
  const { scheme, installedKw, since } = location.settlement;
  if (scheme === 'none' || since === null) throw new Error('a location without a settlement scheme');
  const sinceTs = dayStart(since, tz);
  const periodOf = (t: number) => billingPeriodAt(t, grid.billingStart, grid.billingMonths, tz);

  // Every period from the one the scheme began in (from its first day) to the one the range ends in.
  const periods: { start: number; end: number }[] = [];
  const last = Math.max(range.to - 1, sinceTs);
  for (let p = periodOf(sinceTs); p.start <= last; p = periodOf(p.end)) {
    periods.push({ start: Math.max(p.start, sinceTs), end: p.end });
    if (periods.length > MAX_PERIODS) throw rangeTooLong();
  }
  const simEnd = periods.at(-1)!.end;
  const nextEnd = periodOf(simEnd).end;
  const step = fineRollupAt(tz, sinceTs);
  if ((simEnd - sinceTs) / ROLLUP_STEP_MS[step] > MAX_FLOW_STEPS) throw rangeTooLong('from');

  const counters = await deviceCounters(input.store, grid.deviceKey);
  const energy = await fineEnergy(
    input.store,
    { device: grid, deviceKey: grid.deviceKey, tz },
    counters,
    { from: sinceTs, to: simEnd },
    step,
  );

  let importCost: (number | null)[] | undefined;
  let prices: (number | null)[] | undefined;
  if (scheme === 'net-billing') {
    prices = settlementPrices(energy.t, input.prices, dayStart(rules.hourlyPriceFrom, tz), tz);
    importCost = new Array<number | null>(energy.t.length).fill(null);
    if (input.tariff) {
      const zonePrices = pricesOf(input.tariff);
      const zoned = await zonedBuckets(energy, tz, {
        group: input.tariff.group,
        operator: input.tariff.operator,
        schedule: input.tariff.schedule,
        clockBasis: input.tariff.clockBasis,
        validFrom: input.tariff.validFrom,
        validTo: input.tariff.validTo,
      });
      const market = stepPrices(energy.t, ROLLUP_STEP_MS[step], input.prices);
      for (const b of zoned) {
        if (b.zone === null || b.energy === null) continue;
        importCost[b.i] = bucketCost(input.tariff.group, zonePrices, b.zone, b.energy, market[b.i]);
      }
    }
  }

  const result = settle({
    scheme,
    installedKw,
    rules,
    tz,
    periods,
    nextEnd,
    steps: energy.t,
    billedImport: energy.billedImport,
    billedExport: energy.billedExport,
    ...(importCost ? { importCost } : {}),
    ...(prices ? { prices } : {}),
  });
  const iso = (t: number) => new Date(t).toISOString();
  return {
    locationId: location.id,
    scheme,
    installedKw: scheme === 'net-metering' ? installedKw : null,
    since,
    ratio:
      scheme === 'net-metering' ? netMeteringRatio(installedKw ?? Number.POSITIVE_INFINITY, rules) : null,
    unit: scheme === 'net-metering' ? 'kWh' : (input.tariff?.currency ?? 'PLN'),
    tz,
    step,
    creditMonths: rules.creditMonths,
    periods: result.periods
      .filter((p) => p.end > range.from && p.start < range.to)
      .map((p) => ({
        period: { start: iso(p.start), end: iso(p.end) },
        scheme,
        credited: p.credited,
        drawable: p.drawable,
        used: p.used,
        payable: p.payable,
        expired: p.expired,
        left: p.left,
        expiring: p.expiring,
      })),
    unpriced: result.unpriced.map(iso),
    uncosted: result.uncosted.map(iso),
  };
}
