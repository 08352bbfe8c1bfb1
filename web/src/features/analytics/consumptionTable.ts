/** The consumption table (docs/api.md `/analytics/consumption`): rows per calendar period, one column group per device. */

import { DAY_MS } from '@kilowatch/core';
import type { ConsumptionInterval, ConsumptionRow } from '../../api/analytics/get-consumption.ts';
import { dayjs, formatDay, formatInstant, intlLocale } from '../../lib/time.ts';

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

/** A calendar period, zone-free: `YYYY-MM-DD` for a day, `YYYY-MM` for a month. */
export type Period = string;

export interface TableRow {
  period: Period;
  /** Cells in the order of the table's device ids; null where the API gave no row for that device. */
  cells: (EnergyCell | null)[];
}

export interface ConsumptionTable {
  deviceIds: number[];
  /** Each device's time zone (the one its periods are counted in), in the order of `deviceIds`; null without rows. */
  zones: (string | null)[];
  rows: TableRow[];
  totals: EnergyCell[];
}

/** Sum of the non-null values; null when there are none (no data is not zero). */
function add(a: number | null, b: number | null): number | null {
  if (b === null) return a;
  return a === null ? b : a + b;
}

/** The calendar period a bucket starts, in the zone of the device it belongs to. */
export function periodOf(bucket: number, tz: string, interval: ConsumptionInterval): Period {
  return dayjs(bucket)
    .tz(tz)
    .format(interval === '1mo' ? 'YYYY-MM' : 'YYYY-MM-DD');
}

/**
 * One row per calendar period, ascending, each device's energy in its own zone's period (a London
 * meter's 2 November beside a Warsaw meter's 2 November, not an hour apart); only the periods of the
 * chosen days (`YYYY-MM-DD`, both inclusive): a device in another zone than the user's answers a
 * period more at one end. Totals per device over the rows shown.
 */
export function buildConsumptionTable(
  rows: readonly ConsumptionRow[],
  deviceIds: readonly number[],
  interval: ConsumptionInterval,
  days?: { from: string; to: string },
): ConsumptionTable {
  const index = new Map(deviceIds.map((id, i) => [id, i]));
  const byPeriod = new Map<Period, TableRow>();
  const zones: (string | null)[] = deviceIds.map(() => null);
  const totals: EnergyCell[] = deviceIds.map(() => ({ import: null, export: null, balance: null }));
  const size = interval === '1mo' ? 7 : 10;
  const first = days?.from.slice(0, size);
  const last = days?.to.slice(0, size);
  for (const r of rows) {
    const col = index.get(r.deviceId);
    if (col === undefined) continue;
    zones[col] ??= r.tz;
    const period = periodOf(r.bucket, r.tz, interval);
    if ((first !== undefined && period < first) || (last !== undefined && period > last)) continue;
    let row = byPeriod.get(period);
    if (!row) {
      row = { period, cells: deviceIds.map(() => null) };
      byPeriod.set(period, row);
    }
    row.cells[col] = { import: r.import, export: r.export, balance: r.balance };
    const tot = totals[col]!;
    tot.import = add(tot.import, r.import);
    tot.export = add(tot.export, r.export);
    tot.balance = add(tot.balance, r.balance);
  }
  return {
    deviceIds: [...deviceIds],
    zones,
    // ISO dates and months sort as text.
    rows: [...byPeriod.values()].sort((a, b) => (a.period < b.period ? -1 : a.period > b.period ? 1 : 0)),
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

/** A period as the interface language writes it: a date for a day, month and year for a month. */
export function periodLabel(period: Period, locale = 'en'): string {
  const m = /^(\d{4})-(\d{2})$/.exec(period);
  if (!m) return formatDay(period, locale, 'date');
  return formatInstant(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1), 'UTC', locale, 'month');
}
