/** The consumption table (docs/api.md `/analytics/consumption`): rows per bucket, one column group per device. */

import { DAY_MS } from '@kilowatch/core';
import type { ConsumptionInterval, ConsumptionRow } from '../../api/analytics/get-consumption.ts';
import { dayjs, formatInstant, intlLocale } from '../../lib/time.ts';

/** The longest range a table shows per interval: a year of days, ten years of months. */
export const TABLE_MAX_DAYS: Record<ConsumptionInterval, number> = { '1d': 366, '1mo': 3660 };

/**
 * Whether a range would make a table too long to read (thousands of rows, most of them empty): the screen
 * says "Data range is too long." instead of asking for it. An hour of slack covers a DST change.
 */
export function tableRangeTooLong(
  range: { from: number; to: number },
  interval: ConsumptionInterval,
): boolean {
  return range.to - range.from > TABLE_MAX_DAYS[interval] * DAY_MS + 3_600_000;
}

export interface EnergyCell {
  import: number | null;
  export: number | null;
  balance: number | null;
}

export interface TableRow {
  bucket: number;
  /** Cells in the order of the table's device ids; null where the API gave no row for that device. */
  cells: (EnergyCell | null)[];
}

export interface ConsumptionTable {
  deviceIds: number[];
  rows: TableRow[];
  totals: EnergyCell[];
}

/** Sum of the non-null values; null when there are none (no data is not zero). */
function add(a: number | null, b: number | null): number | null {
  if (b === null) return a;
  return a === null ? b : a + b;
}

/** Buckets ascending; each device's import, export and balance; totals per device over every bucket. */
export function buildConsumptionTable(
  rows: readonly ConsumptionRow[],
  deviceIds: readonly number[],
): ConsumptionTable {
  const index = new Map(deviceIds.map((id, i) => [id, i]));
  const byBucket = new Map<number, TableRow>();
  const totals: EnergyCell[] = deviceIds.map(() => ({ import: null, export: null, balance: null }));
  for (const r of rows) {
    const col = index.get(r.deviceId);
    if (col === undefined) continue;
    let row = byBucket.get(r.bucket);
    if (!row) {
      row = { bucket: r.bucket, cells: deviceIds.map(() => null) };
      byBucket.set(r.bucket, row);
    }
    row.cells[col] = { import: r.import, export: r.export, balance: r.balance };
    const tot = totals[col]!;
    tot.import = add(tot.import, r.import);
    tot.export = add(tot.export, r.export);
    tot.balance = add(tot.balance, r.balance);
  }
  return {
    deviceIds: [...deviceIds],
    rows: [...byBucket.values()].sort((a, b) => a.bucket - b.bucket),
    totals,
  };
}

/**
 * kWh with three decimals (watt-hour resolution) and the interface language's decimal separator
 * (1.235 in en, 1,235 in pl and tr); a dash for no data.
 */
export function formatKwh(v: number | null | undefined, locale = 'en'): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  // Rounding can leave -0.000 for a tiny negative balance.
  const rounded = Math.round(v * 1000) / 1000 || 0;
  return rounded.toLocaleString(intlLocale(locale), {
    minimumFractionDigits: 3,
    maximumFractionDigits: 3,
    useGrouping: false,
  });
}

/**
 * A bucket start in the user's zone and language: a date for days, a month for months; the time is added
 * when the device's local midnight is not midnight for the user (another zone).
 */
export function bucketLabel(
  bucket: number,
  interval: ConsumptionInterval,
  tz: string,
  locale = 'en',
): string {
  const d = dayjs(bucket).tz(tz);
  const midnight = d.hour() === 0 && d.minute() === 0;
  if (!midnight) return formatInstant(bucket, tz, locale, 'minute');
  if (interval === '1mo') return formatInstant(bucket, tz, locale, d.date() === 1 ? 'month' : 'date');
  return formatInstant(bucket, tz, locale, 'date');
}
