/** Pure shaping of the tariff figures for the stats screen: the query range, the bars, the ranking. */
import { addLocalDays, addLocalMonths, startOfLocalMonth, type TariffGroup } from '@kilowatch/core';
import { formatInZone } from '../../lib/time.ts';
import { parseLocalDate } from '../../ranges/ranges.ts';
import type { FieldError } from '../../shared/forms/fields.ts';
import { isDateString } from './tariffForm.ts';

export interface DateRangeInput {
  from: string;
  to: string;
}

/** The default range: from the start of the month two months back to today (three calendar months). */
export function defaultStatsRange(now: number, tz: string): DateRangeInput {
  return {
    from: formatInZone(addLocalMonths(startOfLocalMonth(now, tz), -2, tz), tz, 'YYYY-MM-DD'),
    to: formatInZone(now, tz, 'YYYY-MM-DD'),
  };
}

/** Both days present and in order; `to` is included. */
export function rangeError(r: DateRangeInput): FieldError | undefined {
  if (!r.from || !r.to || !isDateString(r.from) || !isDateString(r.to)) return { id: 'val.dateRange' };
  if (r.to < r.from) return { id: 'places.val.rangeOrder' };
  return undefined;
}

/** ISO instants for the API: local midnight of `from` to the local midnight after `to`. */
export function rangeQuery(r: DateRangeInput, tz: string): { from: string; to: string } | null {
  if (rangeError(r)) return null;
  const from = parseLocalDate(r.from, tz);
  const toDay = parseLocalDate(r.to, tz);
  if (from === null || toDay === null) return null;
  return { from: new Date(from).toISOString(), to: new Date(addLocalDays(toDay, 1, tz)).toISOString() };
}

export interface ZoneAmount {
  zone: number;
  energy: number;
  cost: number;
}

export interface MonthFigures {
  month: string;
  zones: ZoneAmount[];
  energy: number;
  fixed: number;
  cost: number;
}

export interface BarSegment {
  /** A zone number, or `fixed` for the monthly fixed price. */
  key: number | 'fixed';
  value: number;
  /** Share of the longest bar, 0–100. */
  percent: number;
}

/** Stacked bars of cost per month: zone costs, then the fixed price, scaled to the largest month. */
export function costBars(
  months: readonly MonthFigures[],
): { month: string; total: number; segments: BarSegment[] }[] {
  const max = Math.max(0, ...months.map((m) => m.cost));
  const pct = (x: number) => (max > 0 ? (Math.max(0, x) / max) * 100 : 0);
  return months.map((m) => ({
    month: m.month,
    total: m.cost,
    segments: [
      ...[...m.zones]
        .sort((a, b) => a.zone - b.zone)
        .filter((z) => z.cost > 0)
        .map((z) => ({ key: z.zone, value: z.cost, percent: pct(z.cost) })),
      ...(m.fixed > 0 ? [{ key: 'fixed' as const, value: m.fixed, percent: pct(m.fixed) }] : []),
    ],
  }));
}

export interface GroupCost {
  group: TariffGroup;
  cost: number;
}

/** Cheapest first (ties by group name), each with its extra cost over the cheapest. */
export function rankGroups<T extends GroupCost>(
  groups: readonly T[],
): (T & { extra: number; rank: number })[] {
  const sorted = [...groups].sort((a, b) => a.cost - b.cost || a.group.localeCompare(b.group));
  const cheapest = sorted[0]?.cost ?? 0;
  return sorted.map((g, i) => ({ ...g, extra: g.cost - cheapest, rank: i + 1 }));
}
