/**
 * Heatmap rows in the shape @nivo/heatmap takes (`[{ id, data: [{ x, y }] }]`), built from fine buckets
 * (hours, or quarters for :30/:45 zones) in the device location's zone. DST-correct: the spring day's
 * missing hour is `null`, the autumn day's repeated hour holds both hours (summed for energy, averaged for
 * gauges) — never a negative or doubled day.
 */
import { localDateString, localParts } from '../time.ts';

export type HeatmapKind = 'daily' | 'weekly' | 'monthly' | 'yearly';
/** Energy cells add up (kWh in a cell); gauge cells average (mean voltage in a cell). */
export type CellMode = 'sum' | 'mean';

export interface HeatmapCell {
  x: string | number;
  y: number | null;
}
export interface HeatmapRow {
  id: string;
  data: HeatmapCell[];
}

const WEEKDAY_IDS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

class Acc {
  sum = 0;
  n = 0;
  add(v: number) {
    this.sum += v;
    this.n++;
  }
  value(mode: CellMode): number | null {
    if (this.n === 0) return null;
    return mode === 'sum' ? this.sum : this.sum / this.n;
  }
}

type Grid = Map<string, Map<string | number, Acc>>;

function cell(grid: Grid, row: string, x: string | number): Acc {
  let r = grid.get(row);
  if (!r) {
    r = new Map();
    grid.set(row, r);
  }
  let a = r.get(x);
  if (!a) {
    a = new Acc();
    r.set(x, a);
  }
  return a;
}

const HOURS = Array.from({ length: 24 }, (_, h) => h);

/**
 * Per-day totals first (for `monthly` and `yearly` a cell is a day, so a sum of its fine buckets, or for
 * gauges their mean), then arranged by kind:
 * - daily: one row per local date, x = local hour 0..23;
 * - weekly: one row per weekday (Monday first), x = hour; each cell averages that weekday-hour over the range;
 * - monthly: one row per month (`YYYY-MM`), x = day of month 1..31;
 * - yearly: one row per weekday (Monday first), x = the Monday (`YYYY-MM-DD`) of each week: a calendar of days.
 */
export function heatmapRows(
  kind: HeatmapKind,
  t: readonly number[],
  values: readonly (number | null)[],
  tz: string,
  mode: CellMode,
): HeatmapRow[] {
  if (kind === 'daily' || kind === 'weekly') return hourlyRows(kind, t, values, tz, mode);
  return dailyRows(kind, t, values, tz, mode);
}

function hourlyRows(
  kind: 'daily' | 'weekly',
  t: readonly number[],
  values: readonly (number | null)[],
  tz: string,
  mode: CellMode,
): HeatmapRow[] {
  // Fine buckets → (day, local hour) totals; the repeated autumn hour falls into the same cell twice.
  const perDayHour: Grid = new Map();
  const days: string[] = [];
  for (let i = 0; i < t.length; i++) {
    const day = localDateString(t[i]!, tz);
    if (days[days.length - 1] !== day) days.push(day);
    const v = values[i];
    const c = cell(perDayHour, day, localParts(t[i]!, tz).hour);
    if (v !== null && v !== undefined) c.add(v);
  }
  if (kind === 'daily') {
    return days.map((day) => ({
      id: day,
      data: HOURS.map((h) => ({ x: h, y: perDayHour.get(day)?.get(h)?.value(mode) ?? null })),
    }));
  }
  // Weekly: each (weekday, hour) averages the day-hour cells of that weekday.
  const weekly: Grid = new Map();
  for (const day of days) {
    const [y, m, d] = day.split('-').map(Number) as [number, number, number];
    const weekday = WEEKDAY_IDS[(new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7]!;
    for (const h of HOURS) {
      const v = perDayHour.get(day)?.get(h)?.value(mode);
      if (v !== null && v !== undefined) cell(weekly, weekday, h).add(v);
    }
  }
  return WEEKDAY_IDS.map((id) => ({
    id,
    data: HOURS.map((h) => ({ x: h, y: weekly.get(id)?.get(h)?.value('mean') ?? null })),
  }));
}

function dailyRows(
  kind: 'monthly' | 'yearly',
  t: readonly number[],
  values: readonly (number | null)[],
  tz: string,
  mode: CellMode,
): HeatmapRow[] {
  const perDay = new Map<string, Acc>();
  for (let i = 0; i < t.length; i++) {
    const day = localDateString(t[i]!, tz);
    let a = perDay.get(day);
    if (!a) {
      a = new Acc();
      perDay.set(day, a);
    }
    const v = values[i];
    if (v !== null && v !== undefined) a.add(v);
  }
  const days = [...perDay.keys()];
  if (kind === 'monthly') {
    const months = [...new Set(days.map((d) => d.slice(0, 7)))];
    return months.map((month) => {
      const [y, m] = month.split('-').map(Number) as [number, number];
      const length = new Date(Date.UTC(y, m, 0)).getUTCDate();
      return {
        id: month,
        data: Array.from({ length: 31 }, (_, i) => {
          const day = i + 1;
          const key = `${month}-${String(day).padStart(2, '0')}`;
          return { x: day, y: day > length ? null : (perDay.get(key)?.value(mode) ?? null) };
        }),
      };
    });
  }
  // Yearly calendar: weeks as columns (their Monday), weekdays as rows.
  const weeks: string[] = [];
  const byWeekday = new Map<string, Map<string, number | null>>();
  for (const day of days) {
    const [y, m, d] = day.split('-').map(Number) as [number, number, number];
    const date = new Date(Date.UTC(y, m - 1, d));
    const wd = (date.getUTCDay() + 6) % 7;
    const monday = new Date(Date.UTC(y, m - 1, d - wd)).toISOString().slice(0, 10);
    if (weeks[weeks.length - 1] !== monday) weeks.push(monday);
    const id = WEEKDAY_IDS[wd]!;
    let row = byWeekday.get(id);
    if (!row) {
      row = new Map();
      byWeekday.set(id, row);
    }
    row.set(monday, perDay.get(day)!.value(mode));
  }
  return WEEKDAY_IDS.map((id) => ({
    id,
    data: weeks.map((w) => ({ x: w, y: byWeekday.get(id)?.get(w) ?? null })),
  }));
}
