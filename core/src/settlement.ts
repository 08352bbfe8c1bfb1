/**
 * Polish prosumer settlement of a location (docs/domain.md §Prosumer settlement): net-metering banks a share
 * of each hour's exported energy as kWh, net-billing credits each hour's exported energy at that hour's price
 * to a deposit in money; either is drawn against later import, oldest credit first, and lapses after a
 * number of months. Settled per billing period, as the bill is. Pure arithmetic: the API reads the grid
 * meter's hourly balance, the prices and the import cost and passes them in.
 */
import type { PriceRow } from './api/prices.ts';
import type { Period } from './buckets/billing.ts';
import { HOUR_MS, localParts, startOfLocalMonth, zonedTimeToUtc } from './time.ts';

export const SETTLEMENT_SCHEMES = ['none', 'net-metering', 'net-billing'] as const;
export type SettlementScheme = (typeof SETTLEMENT_SCHEMES)[number];

/** The coefficients and dates of the rules: settings (`KW_SETTLEMENT_*`, docs/configuration.md), not literals. */
export interface SettlementRules {
  /** Net-metering: share of exported kWh banked by an installation of at most `smallUpToKw`… */
  smallRatio: number;
  /** …and by a larger one. */
  largeRatio: number;
  smallUpToKw: number;
  /** Months a credit (kWh or deposit) stays usable after the hour it was earned in. */
  creditMonths: number;
  /**
   * Net-billing: the first local day whose hours are valued at their own price (hourly RCE); hours before it
   * at their month's price (RCEm), the mean of the series' prices in that local month.
   */
  hourlyPriceFrom: string;
  /** Net-billing: what the hour's price is multiplied by (1 unless a rule says otherwise). */
  priceFactor: number;
}

export const DEFAULT_SETTLEMENT_RULES: SettlementRules = {
  smallRatio: 0.8,
  largeRatio: 0.7,
  smallUpToKw: 10,
  creditMonths: 12,
  hourlyPriceFrom: '2024-07-01',
  priceFactor: 1,
};

/** The net-metering share of an installation of `installedKw`. */
export function netMeteringRatio(installedKw: number, rules: SettlementRules): number {
  return installedKw <= rules.smallUpToKw ? rules.smallRatio : rules.largeRatio;
}

/** The same local wall time `months` later (the day clamped to the month's length: 31 Mar + 1 → 30 Apr). */
export function addLocalMonthsKeepingTime(ts: number, months: number, tz: string): number {
  const p = localParts(ts, tz);
  const mi = p.year * 12 + (p.month - 1) + months;
  const y = Math.floor(mi / 12);
  const m = (mi % 12) + 1;
  const length = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return zonedTimeToUtc(y, m, Math.min(p.day, length), p.hour, p.minute, p.second, tz);
}

/**
 * Each step's price from the series: the mean of the prices starting within it (quarter-hour prices for an
 * hourly step), else the price of the hour it lies in (an hourly price for a quarter step); null without.
 */
export function stepPrices(
  stepStarts: readonly number[],
  stepMs: number,
  prices: readonly PriceRow[],
): (number | null)[] {
  const out = new Array<number | null>(stepStarts.length).fill(null);
  let j = 0;
  for (let i = 0; i < stepStarts.length; i++) {
    const t = stepStarts[i]!;
    // The latest price starting at most an hour before the step.
    while (j < prices.length && prices[j]!.start < t) j++;
    let sum = 0;
    let n = 0;
    for (let k = j; k < prices.length && prices[k]!.start < t + stepMs; k++) {
      sum += prices[k]!.price;
      n++;
    }
    if (n > 0) out[i] = sum / n;
    else if (j > 0 && prices[j - 1]!.start > t - HOUR_MS) out[i] = prices[j - 1]!.price;
  }
  return out;
}

/**
 * Each hour's price for net-billing: from `hourlyFrom` on, the mean of the prices starting in the hour (a
 * quarter-hour series) or the hourly price it lies in; before it, the mean of every price starting in the
 * hour's local month (RCEm, or the one monthly row uploaded for it). Null where the series has none.
 */
export function settlementPrices(
  hours: readonly number[],
  prices: readonly PriceRow[],
  hourlyFrom: number,
  tz: string,
): (number | null)[] {
  const out = stepPrices(hours, HOUR_MS, prices);
  const monthMeans = new Map<number, number | null>();
  const monthMean = (monthStart: number): number | null => {
    let mean = monthMeans.get(monthStart);
    if (mean !== undefined) return mean;
    const next = addLocalMonthsKeepingTime(monthStart, 1, tz);
    let sum = 0;
    let n = 0;
    for (let k = lowerBound(prices, monthStart); k < prices.length && prices[k]!.start < next; k++) {
      sum += prices[k]!.price;
      n++;
    }
    mean = n > 0 ? sum / n : null;
    monthMeans.set(monthStart, mean);
    return mean;
  };
  for (let i = 0; i < hours.length; i++) {
    const t = hours[i]!;
    if (t < hourlyFrom) out[i] = monthMean(startOfLocalMonth(t, tz));
  }
  return out;
}

/** The first row starting at or after `t` (rows ascending by start). */
function lowerBound(rows: readonly PriceRow[], t: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid]!.start < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface SettlementInput {
  scheme: Exclude<SettlementScheme, 'none'>;
  /** Net-metering: the installation's power, choosing the banked share. */
  installedKw: number | null;
  rules: SettlementRules;
  tz: string;
  /** Consecutive billing periods, ascending; the first is where the scheme's account starts (no credit before). */
  periods: readonly Period[];
  /** Where the credits of the last period's remainder lapse: the end of the period after it. */
  nextEnd: number;
  /** Hour starts (or quarter starts where the zone's hours do not nest), ascending, within the periods. */
  steps: readonly number[];
  /** Per step: the netted balance's positive part (billed import) and negative part (billed export), kWh. */
  billedImport: readonly (number | null)[];
  billedExport: readonly (number | null)[];
  /** Net-billing: per step, the energy part of the import's cost and the export's price. */
  importCost?: readonly (number | null)[];
  prices?: readonly (number | null)[];
}

export interface SettlementPeriod {
  start: number;
  end: number;
  /** Credit earned in the period: kWh (net-metering) or money (net-billing). */
  credited: number;
  /** What the credit could be drawn against: the period's billed import (kWh) or its energy cost (money). */
  drawable: number;
  /** Credit drawn in the period, oldest first. */
  used: number;
  /** Of `drawable`, what no credit covered: billed as usual. */
  payable: number;
  /** Credit that lapsed in the period unused. */
  expired: number;
  /** Credit left at the period's end. */
  left: number;
  /** Of `left`, what lapses by the end of the next period unless used. */
  expiring: number;
}

export interface Settlement {
  periods: SettlementPeriod[];
  /** Steps that exported without a price (net-billing): credited nothing, named here, never valued at zero. */
  unpriced: number[];
  /** Steps that imported without a known cost (net-billing: outside the tariff's validity, or no tariff). */
  uncosted: number[];
}

/** Steps named in `unpriced` and `uncosted` at most. */
const NAMED = 1_000;

/**
 * Settles the steps period by period: the period's credits are banked (each lapsing `creditMonths` after its
 * step), then the period's drawable amount is drawn from the oldest credit on, then credits lapsing by the
 * period's end are dropped.
 */
export function settle(input: SettlementInput): Settlement {
  const { rules, tz, steps } = input;
  const ratio =
    input.scheme === 'net-metering'
      ? netMeteringRatio(input.installedKw ?? Number.POSITIVE_INFINITY, rules)
      : 1;
  // The bank: credits in the order earned (so also in the order they lapse).
  const amounts: number[] = [];
  const lapses: number[] = [];
  let head = 0;
  const unpriced: number[] = [];
  const uncosted: number[] = [];
  const out: SettlementPeriod[] = [];
  let i = 0;
  for (const [p, period] of input.periods.entries()) {
    while (i < steps.length && steps[i]! < period.start) i++;
    let credited = 0;
    let drawable = 0;
    for (; i < steps.length && steps[i]! < period.end; i++) {
      const t = steps[i]!;
      const exported = input.billedExport[i] ?? 0;
      const imported = input.billedImport[i] ?? 0;
      let credit = 0;
      if (input.scheme === 'net-metering') {
        credit = exported * ratio;
        drawable += imported;
      } else {
        if (exported > 0) {
          const price = input.prices?.[i];
          if (price === null || price === undefined) {
            if (unpriced.length < NAMED) unpriced.push(t);
          } else credit = exported * price * rules.priceFactor;
        }
        if (imported > 0) {
          const cost = input.importCost?.[i];
          if (cost === null || cost === undefined) {
            if (uncosted.length < NAMED) uncosted.push(t);
          } else drawable += cost;
        }
      }
      // A negative price makes an hour's export cost money: no credit, never a debit against the bank.
      if (credit > 0) {
        credited += credit;
        amounts.push(credit);
        lapses.push(addLocalMonthsKeepingTime(t, rules.creditMonths, tz));
      }
    }
    let used = 0;
    let want = drawable;
    for (let k = head; k < amounts.length && want > 0; k++) {
      const take = Math.min(amounts[k]!, want);
      amounts[k]! -= take;
      want -= take;
      used += take;
    }
    let expired = 0;
    while (head < amounts.length && lapses[head]! <= period.end) expired += amounts[head++]!;
    const nextEnd = input.periods[p + 1]?.end ?? input.nextEnd;
    let left = 0;
    let expiring = 0;
    for (let k = head; k < amounts.length; k++) {
      left += amounts[k]!;
      if (lapses[k]! <= nextEnd) expiring += amounts[k]!;
    }
    out.push({
      start: period.start,
      end: period.end,
      credited,
      drawable,
      used,
      payable: drawable - used,
      expired,
      left,
      expiring,
    });
  }
  return { periods: out, unpriced, uncosted };
}
