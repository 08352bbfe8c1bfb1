/**
 * Pure helpers of the heatmap view: a continuous colour scale readable on both themes, its legend,
 * cell labels in the user's time zone and the chart's layout (row height, thinned axis ticks).
 */
import { COUNTER_NAMES, combinedParamDef, GAUGE_NAMES } from '@kilowatch/core';
import type { HeatmapKind } from '../../api/analytics/get-heatmap.ts';
import type { ChartTheme } from '../../charts/palette.ts';
import { dayjs, formatDay, formatInstant } from '../../lib/time.ts';

/**
 * The colour domain: from the smallest value to the 99th percentile when a few outliers (a meter's first
 * hour after a gap, a counter reset) lie far above the rest, so they do not wash out every other cell;
 * `clipped` says the top colour then means "this much or more".
 */
export function colorDomain(
  rows: readonly { id?: string; data: readonly { x?: string | number; y: number | null }[] }[],
  quantile = 0.99,
  /** A cell still filling (today so far): left out of the scale, its low value is not a low day. */
  partial: PartialCell | null = null,
): (Domain & { clipped: boolean }) | null {
  const counted = partial ? withoutCell(rows, partial) : rows;
  const full = valueDomain(counted);
  if (!full) return null;
  const values: number[] = [];
  for (const r of counted) for (const c of r.data) if (c.y !== null && Number.isFinite(c.y)) values.push(c.y);
  if (values.length < 10) return { ...full, clipped: false };
  values.sort((a, b) => a - b);
  const top = values[Math.floor(quantile * (values.length - 1))]!;
  // Clip only when the outliers stretch the scale noticeably (beyond 1.5 × the quantile's span).
  if (top <= full.min || full.max - full.min <= 1.5 * (top - full.min)) return { ...full, clipped: false };
  return { min: full.min, max: top, clipped: true };
}

/** A heatmap cell by its row id and x, as the API's rows name it. */
export interface PartialCell {
  row: string;
  x: string | number;
}

function withoutCell(
  rows: readonly { id?: string; data: readonly { x?: string | number; y: number | null }[] }[],
  cell: PartialCell,
): { data: readonly { y: number | null }[] }[] {
  return rows.map((r) =>
    r.id === cell.row ? { data: r.data.map((c) => (c.x === cell.x ? { y: null } : c)) } : r,
  );
}

/**
 * The cell still filling at `now` in the device location's zone: the current hour of a daily heatmap,
 * today's day of a monthly or yearly one. A weekly heatmap averages whole weeks and has none. Null when
 * that cell holds no value (a range ending before today, nothing measured yet today): it then shows as
 * "no data", not as a low value.
 */
export function partialCell(
  kind: HeatmapKind,
  rows: readonly { id: string; data: readonly { x: string | number; y?: number | null }[] }[],
  deviceTz: string,
  now: number,
): PartialCell | null {
  const local = dayjs(now).tz(deviceTz);
  const day = local.format('YYYY-MM-DD');
  let cell: PartialCell | null = null;
  if (kind === 'daily') cell = { row: day, x: local.hour() };
  else if (kind === 'monthly') cell = { row: day.slice(0, 7), x: local.date() };
  else if (kind === 'yearly') {
    const [y, m, d] = day.split('-').map(Number) as [number, number, number];
    const wd = (new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7;
    cell = { row: WEEKDAYS[wd]!, x: new Date(Date.UTC(y, m - 1, d - wd)).toISOString().slice(0, 10) };
  }
  if (!cell) return null;
  const found = cell;
  const held = rows.some(
    (r) => r.id === found.row && r.data.some((c) => c.x === found.x && c.y !== null && c.y !== undefined),
  );
  return held ? cell : null;
}

/** Low to high. Light: pale yellow to deep red; dark: muted blue to bright yellow (high reads brightest). */
export const HEAT_PALETTES: Record<ChartTheme, readonly string[]> = {
  light: ['#ffffcc', '#fed976', '#fd8d3c', '#e31a1c', '#800026'],
  dark: ['#253494', '#6a3d9a', '#c2255c', '#f76707', '#ffe066'],
};

/** Cells without data: a neutral grey, unlike any colour of the scale. */
export const NO_DATA_COLORS: Record<ChartTheme, string> = { light: '#ced4da', dark: '#495057' };

export interface Domain {
  min: number;
  max: number;
}

/** The smallest and largest non-null value of the rows, or null when every cell is empty. */
export function valueDomain(rows: readonly { data: readonly { y: number | null }[] }[]): Domain | null {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const r of rows) {
    for (const c of r.data) {
      const y = c.y;
      if (y === null || !Number.isFinite(y)) continue;
      if (y < min) min = y;
      if (y > max) max = y;
    }
  }
  return min === Number.POSITIVE_INFINITY ? null : { min, max };
}

function hexToRgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

function rgbToHex(rgb: readonly number[]): string {
  return `#${rgb.map((c) => Math.round(c).toString(16).padStart(2, '0')).join('')}`;
}

/** Position of a value in the domain, 0..1 (a one-value domain sits in the middle). */
export function position(value: number, d: Domain): number {
  if (d.max === d.min) return 0.5;
  return Math.min(1, Math.max(0, (value - d.min) / (d.max - d.min)));
}

/** The colour of a value: linear between the palette's stops. */
export function colorAt(p: number, palette: readonly string[]): string {
  const last = palette.length - 1;
  const at = Math.min(1, Math.max(0, p)) * last;
  const i = Math.min(last - 1, Math.floor(at));
  const a = hexToRgb(palette[i] ?? '#000000');
  const b = hexToRgb(palette[i + 1] ?? palette[i] ?? '#000000');
  const f = at - i;
  return rgbToHex(a.map((c, k) => c + (b[k]! - c) * f));
}

export function colorScale(d: Domain | null, theme: ChartTheme): (value: number | null) => string {
  const palette = HEAT_PALETTES[theme];
  const empty = NO_DATA_COLORS[theme];
  return (value) =>
    value === null || !Number.isFinite(value) || !d ? empty : colorAt(position(value, d), palette);
}

/** CSS gradient of the legend bar, same stops as the cells. */
export function legendGradient(theme: ChartTheme): string {
  const p = HEAT_PALETTES[theme];
  return `linear-gradient(to right, ${p.map((c, i) => `${c} ${Math.round((i / (p.length - 1)) * 100)}%`).join(', ')})`;
}

/** Evenly spaced legend values from min to max (one value for a one-value domain). */
export function legendTicks(d: Domain, count = 5): number[] {
  if (d.max === d.min || count < 2) return [d.min];
  return Array.from({ length: count }, (_, i) => d.min + ((d.max - d.min) * i) / (count - 1));
}

/** Energy counters first (all phases summed, then per phase), then gauges (docs/spec.md §3 parameters). */
export const HEATMAP_PARAMS: readonly string[] = (() => {
  const combinedCounters = ['eai', 'eae', 'eri', 'ere'].filter((p) => combinedParamDef(p));
  const combinedGauges = ['pave', 'vave', 'iave'].filter((p) => combinedParamDef(p));
  return [...new Set([...combinedCounters, ...COUNTER_NAMES, ...combinedGauges, ...GAUGE_NAMES])];
})();

/**
 * The heatmap parameters a device reports: its own counters and gauges, and the phases-combined ones
 * (`eai` for `eai1..3`) when it reports a phase of them. Until its newest reading is known, all of them.
 */
export function heatmapParamsFor(own: readonly string[]): string[] {
  if (own.length === 0) return [...HEATMAP_PARAMS];
  return HEATMAP_PARAMS.filter(
    (p) => own.includes(p) || (combinedParamDef(p)?.of.some((o) => own.includes(o)) ?? false),
  );
}

/** What a device's heatmap opens on: a PV installation's production (export), any other's import. */
export function defaultHeatmapParam(available: readonly string[], solar: boolean): string {
  const wanted = solar
    ? ['eae', 'energy3phases_export', 'power3phases', 'pave']
    : ['eai', 'energy3phases_import', 'power3phases', 'pave'];
  return wanted.find((p) => available.includes(p)) ?? available[0] ?? 'eai';
}

const WEEKDAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

/** A weekday row id (`Mon`) in the reader's language; 2024-01-01 was a Monday. */
export function weekdayName(id: string, locale: string, style: 'short' | 'long' = 'short'): string {
  const i = WEEKDAYS.indexOf(id as (typeof WEEKDAYS)[number]);
  if (i < 0) return id;
  return new Intl.DateTimeFormat(locale, { weekday: style, timeZone: 'UTC' }).format(
    Date.UTC(2024, 0, 1 + i),
  );
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * What a cell covers, for its tooltip. Rows are laid out in the device location's zone (docs/domain.md §Time);
 * cells that are real instants (an hour of a day) are shown in the user's zone.
 */
export function cellLabel(
  kind: HeatmapKind,
  rowId: string,
  x: string | number,
  deviceTz: string,
  userTz: string,
  locale: string,
): string {
  switch (kind) {
    case 'daily': {
      const start = dayjs.tz(`${rowId} ${pad(Number(x))}:00`, deviceTz);
      const from = start.valueOf();
      const to = start.add(1, 'hour').valueOf();
      return `${formatInstant(from, userTz, locale, 'minute')}–${formatInstant(to, userTz, locale, 'time')}`;
    }
    case 'weekly': {
      const h = Number(x);
      const zone = deviceTz === userTz ? '' : ` (${deviceTz})`;
      return `${weekdayName(rowId, locale, 'long')} ${pad(h)}:00–${pad((h + 1) % 24)}:00${zone}`;
    }
    case 'monthly':
      return formatDay(`${rowId}-${pad(Number(x))}`, locale);
    case 'yearly': {
      const i = WEEKDAYS.indexOf(rowId as (typeof WEEKDAYS)[number]);
      const day = dayjs.utc(String(x)).add(Math.max(0, i), 'day');
      return `${formatDay(day.format('YYYY-MM-DD'), locale)} (${weekdayName(rowId, locale, 'long')})`;
    }
  }
}

/** Height of one row in px: large for a week of rows, thin for a year of days; the chart stays < ~1,100 px. */
export function rowHeight(rows: number): number {
  if (rows <= 0) return 24;
  return Math.max(3, Math.min(28, Math.floor(1_000 / rows)));
}

/** At most `max` evenly spaced values (the first always kept), for axis ticks that do not overlap. */
/**
 * At most `max` ticks, and no closer than a label's width: `width` is the axis length in px and `labelPx`
 * the widest label's, so a phone's yearly heatmap names fewer weeks instead of running them together.
 */
export function fitTicks<T>(values: readonly T[], max: number, width: number, labelPx: number): T[] {
  if (width <= 0 || values.length === 0) return thinTicks(values, max);
  const perValue = width / values.length;
  const fit = Math.max(1, Math.floor(width / Math.max(1, labelPx)));
  const step = Math.max(Math.ceil(values.length / Math.max(1, max)), Math.ceil(labelPx / perValue), 1);
  if (values.length <= Math.min(max, fit)) return [...values];
  return values.filter((_, i) => i % step === 0);
}

export function thinTicks<T>(values: readonly T[], max: number): T[] {
  if (values.length <= max || max < 1) return [...values];
  const step = Math.ceil(values.length / max);
  return values.filter((_, i) => i % step === 0);
}
