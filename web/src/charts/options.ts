/**
 * Pure builders from API answers to uPlot data and options. Columnar API data goes straight into
 * typed arrays (a column with gaps stays a plain array: uPlot reads `null` as a gap, NaN it cannot).
 */
import { i18n } from '@lingui/core';
import uPlot from 'uplot';
import { formatInstant, formatInZone, intlLocale } from '../lib/time.ts';
import { AXIS_COLORS, type ChartTheme, LIMIT_COLORS, withAlpha } from './palette.ts';

export type Column = Float64Array | (number | null)[];

export interface SeriesSpec {
  /** Parameter name in the API answer (`vave1`, `pave`, ...). */
  param: string;
  label: string;
  unit: string;
  color: string;
  /** Draw the min..max band around the average. */
  band?: boolean;
  /** Multiply values (export drawn below zero). */
  scale?: number;
  /** Draw as bars (energy per bucket) instead of a line. */
  bars?: boolean;
  /** Draw as steps (relay state). */
  stepped?: boolean;
}

export interface SeriesColumns {
  t: readonly number[];
  series: Record<
    string,
    { avg?: readonly (number | null)[]; min?: readonly (number | null)[]; max?: readonly (number | null)[] }
  >;
}

/** A column without gaps becomes a Float64Array; with gaps it stays an array with nulls. */
export function toColumn(values: readonly (number | null)[] | undefined, length: number, scale = 1): Column {
  if (!values) return new Array<number | null>(length).fill(null);
  let gaps = false;
  for (let i = 0; i < values.length; i++) {
    if (values[i] === null || values[i] === undefined) {
      gaps = true;
      break;
    }
  }
  if (!gaps && values.length === length) {
    const out = new Float64Array(length);
    for (let i = 0; i < length; i++) out[i] = (values[i] as number) * scale;
    return out;
  }
  const out = new Array<number | null>(length);
  for (let i = 0; i < length; i++) {
    const x = values[i];
    out[i] = x === null || x === undefined ? null : x * scale;
  }
  return out;
}

/** Column order: time, then per spec its average and, with a band, its min and max. */
export function buildChartData(cols: SeriesColumns, specs: readonly SeriesSpec[]): uPlot.AlignedData {
  const n = cols.t.length;
  const out: Column[] = [Float64Array.from(cols.t)];
  for (const s of specs) {
    const c = cols.series[s.param];
    out.push(toColumn(c?.avg, n, s.scale));
    if (s.band) {
      out.push(toColumn(c?.min, n, s.scale));
      out.push(toColumn(c?.max, n, s.scale));
    }
  }
  return out as unknown as uPlot.AlignedData;
}

/** Indexes of each spec's average, min and max columns in the data built above. */
export function seriesLayout(specs: readonly SeriesSpec[]): { avg: number; min?: number; max?: number }[] {
  let i = 1;
  return specs.map((s) => {
    const slot: { avg: number; min?: number; max?: number } = { avg: i++ };
    if (s.band) {
      slot.min = i++;
      slot.max = i++;
    }
    return slot;
  });
}

/** Voltage limit lines: 230 V ± warning % and ± critical % (docs/spec.md §5, docs/domain.md §Limits). */
export interface LimitLines {
  nominal: number;
  warning?: number;
  critical?: number;
}

export function limitLevels(l: LimitLines): { value: number; color: string; kind: 'warning' | 'critical' }[] {
  const out: { value: number; color: string; kind: 'warning' | 'critical' }[] = [];
  for (const kind of ['warning', 'critical'] as const) {
    const pct = l[kind];
    if (pct === undefined || !Number.isFinite(pct) || pct <= 0) continue;
    const d = (l.nominal * pct) / 100;
    out.push({ value: l.nominal - d, color: LIMIT_COLORS[kind], kind });
    out.push({ value: l.nominal + d, color: LIMIT_COLORS[kind], kind });
  }
  return out;
}

export function formatValue(v: number | null | undefined, unit: string): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const abs = Math.abs(v);
  const digits = abs >= 1000 ? 0 : abs >= 100 ? 1 : abs >= 1 ? 2 : 3;
  // Decimal separator of the interface language ("1,78 kWh" in pl and tr), as percentages already are.
  const text = v.toLocaleString(intlLocale(i18n.locale), {
    maximumFractionDigits: digits,
    useGrouping: false,
  });
  return unit ? `${text} ${unit}` : text;
}

export interface ChartOptionsInput {
  specs: readonly SeriesSpec[];
  tz: string;
  theme: ChartTheme;
  width: number;
  height: number;
  /** Charts with the same key share the cursor (and so their tooltips). */
  syncKey?: string;
  limits?: LimitLines;
  labels?: { min: string; max: string; time?: string };
  /** Bar width for bucketed energy (ms). */
  barMs?: number;
}

function limitsPlugin(levels: ReturnType<typeof limitLevels>): uPlot.Plugin {
  return {
    hooks: {
      drawClear: [
        (u) => {
          const { ctx } = u;
          const { left, width, top, height } = u.bbox;
          ctx.save();
          ctx.beginPath();
          ctx.rect(left, top, width, height);
          ctx.clip();
          for (const l of levels) {
            const y = Math.round(u.valToPos(l.value, 'y', true));
            ctx.strokeStyle = l.color;
            ctx.lineWidth = 1.5 * uPlot.pxRatio;
            ctx.setLineDash(l.kind === 'warning' ? [6 * uPlot.pxRatio, 4 * uPlot.pxRatio] : []);
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
          }
          ctx.restore();
        },
      ],
    },
  };
}

/** The legend lists averages only; min and max stay visible as the band and in the table view. */
function bandLegendPlugin(specs: readonly SeriesSpec[]): uPlot.Plugin {
  const hidden = new Set(seriesLayout(specs).flatMap((s) => [s.min, s.max].filter((i) => i !== undefined)));
  return {
    hooks: {
      init: [
        (u) => {
          u.root.querySelectorAll<HTMLElement>('.u-legend .u-series').forEach((row, i) => {
            if (hidden.has(i)) row.style.display = 'none';
          });
        },
      ],
    },
  };
}

/** The y range grows to keep the limit lines in view, with a little air above and below. */
export function yRange(
  min: number | null,
  max: number | null,
  levels: readonly { value: number }[],
  zeroBased: boolean,
): [number, number] {
  let lo = min ?? 0;
  let hi = max ?? 1;
  for (const l of levels) {
    lo = Math.min(lo, l.value);
    hi = Math.max(hi, l.value);
  }
  if (zeroBased) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  }
  if (lo === hi) {
    const pad = Math.abs(lo) * 0.05 || 1;
    return [lo - pad, hi + pad];
  }
  const pad = (hi - lo) * 0.05;
  return [zeroBased && lo === 0 ? 0 : lo - pad, zeroBased && hi === 0 ? 0 : hi + pad];
}

/**
 * The lowest and highest value of the given columns at times within [from, to] (null: none there). The y
 * range fits the lines, not their min..max bands: a day's or a month's band runs from its quietest
 * minute to its busiest (a kettle's 6 kW under averages near 2 kW), so fitting it would flatten the lines
 * the chart is read by. The band stays drawn as far as the plot reaches.
 */
export function lineExtent(
  data: readonly (ArrayLike<number | null | undefined> | null | undefined)[],
  columns: readonly number[],
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
): { min: number | null; max: number | null } {
  const t = data[0];
  let min: number | null = null;
  let max: number | null = null;
  if (!t) return { min, max };
  for (const c of columns) {
    const col = data[c];
    if (!col) continue;
    for (let i = 0; i < t.length; i++) {
      const x = t[i];
      const v = col[i];
      if (x === null || x === undefined || x < from || x > to) continue;
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      if (min === null || v < min) min = v;
      if (max === null || v > max) max = v;
    }
  }
  return { min, max };
}

/** Gaps up to this many buckets are bridged (a meter reporting hourly into 15-minute buckets). */
export const MAX_BRIDGED_BUCKETS = 4;

/**
 * Keeps only the gaps of more than MAX_BRIDGED_BUCKETS missing buckets. A gap runs from the last
 * value before it to the first after, so n missing buckets span n + 1 steps (plus a pixel of rounding).
 */
export function wideGaps(gaps: readonly [number, number][], stepPx: number): [number, number][] {
  return gaps.filter(([a, b]) => b - a > (MAX_BRIDGED_BUCKETS + 1) * stepPx + 1);
}

const bridgeShortGaps: uPlot.Series.GapsRefiner = (u, _sidx, _i0, _i1, nullGaps) => {
  const xs = u.data[0];
  if (xs.length < 2) return nullGaps;
  const stepPx = Math.abs(u.valToPos(xs[1] as number, 'x', true) - u.valToPos(xs[0] as number, 'x', true));
  return wideGaps(nullGaps as [number, number][], stepPx);
};

export function buildSeriesOptions(input: ChartOptionsInput): uPlot.Series[] {
  const bars = input.barMs !== undefined ? uPlot.paths.bars?.({ size: [0.8, 64], align: 1 }) : undefined;
  const stepped = uPlot.paths.stepped?.({ align: 1 });
  const out: uPlot.Series[] = [
    {
      label: input.labels?.time ?? 'Time',
      value: (_u, v) => (v === null || v === undefined ? '–' : formatInstant(v, input.tz, i18n.locale)),
    },
  ];
  for (const s of input.specs) {
    const fmt = (_u: uPlot, v: number | null) => formatValue(v === null ? null : v / (s.scale ?? 1), s.unit);
    // uPlot merges series over its defaults, so an explicit `undefined` would erase the default paths.
    const series: uPlot.Series = {
      label: s.label,
      stroke: s.color,
      width: s.bars ? 1 : 1.5,
      gaps: bridgeShortGaps,
      value: fmt,
    };
    if (s.bars) {
      series.fill = withAlpha(s.color, 0.75);
      if (bars) series.paths = bars;
    } else if (s.stepped && stepped) series.paths = stepped;
    out.push(series);
    if (s.band) {
      for (const which of ['min', 'max'] as const) {
        out.push({
          label: `${s.label} ${input.labels?.[which] ?? which}`,
          stroke: withAlpha(s.color, 0.45),
          width: 0.5,
          points: { show: false },
          value: fmt,
        });
      }
    }
  }
  return out;
}

export function buildBands(specs: readonly SeriesSpec[]): uPlot.Band[] {
  const layout = seriesLayout(specs);
  const bands: uPlot.Band[] = [];
  specs.forEach((s, i) => {
    const slot = layout[i];
    if (s.band && slot?.min !== undefined && slot.max !== undefined) {
      bands.push({ series: [slot.max, slot.min], fill: withAlpha(s.color, 0.14) });
    }
  });
  return bands;
}

const DAY = 86_400_000;

/**
 * Time-axis tick labels in the user's zone and language, 24-hour clock; dates once ticks are a day or more
 * apart (en 03/10, pl 10.03), months a month or more apart (Mar 2026).
 */
export function timeTickLabels(
  splits: readonly number[],
  incrMs: number,
  tz: string,
  locale: string = i18n.locale,
): string[] {
  // A range that crosses a year names it on every date tick (12/29/2025, 01/05/2026).
  const first = splits[0];
  const last = splits[splits.length - 1];
  const crossesYear =
    first !== undefined &&
    last !== undefined &&
    formatInZone(first, tz, 'YYYY') !== formatInZone(last, tz, 'YYYY');
  const dates = incrMs >= 28 * DAY ? 'shortMonth' : crossesYear ? 'date' : 'dayMonth';
  return splits.map((v) => formatInstant(v, tz, locale, incrMs >= DAY ? dates : 'time'));
}

export function buildAxes(theme: ChartTheme, unit: string, tz: string): uPlot.Axis[] {
  const { stroke, grid } = AXIS_COLORS[theme];
  return [
    {
      stroke,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
      space: 60,
      values: (_u, splits, _axis, _space, incr) => timeTickLabels(splits, incr, tz),
    },
    {
      stroke,
      grid: { stroke: grid, width: 1 },
      ticks: { stroke: grid, width: 1 },
      size: 56,
      values: (_u, splits) => splits.map((v) => formatValue(v, '')),
      ...(unit ? { label: unit, labelSize: 18 } : {}),
    },
  ];
}

/** Room right of the plot when no label reaches that far (uPlot's own default: half a y axis). */
const MIN_RIGHT_PAD = 16;

/**
 * The plot's right padding: half the widest time label and a little air, so the last label, centred on a
 * tick at the right edge ("Dec 2026", "01/2031"), is drawn whole instead of cut at the canvas's edge.
 * uPlot calls it after it has made the labels of each sizing pass, and passes again until it settles.
 */
export function rightPadding(u: uPlot): number {
  const x = u.axes[0] as (uPlot.Axis & { _values?: readonly string[] | null; font?: unknown }) | undefined;
  const labels = x?._values;
  const font = x?.font;
  if (!labels?.length || !u.ctx || !Array.isArray(font)) return MIN_RIGHT_PAD;
  const ctx = u.ctx;
  ctx.save();
  ctx.font = String(font[0]);
  let widest = 0;
  for (const l of labels)
    for (const line of String(l).split('\n')) widest = Math.max(widest, ctx.measureText(line).width);
  ctx.restore();
  return Math.max(MIN_RIGHT_PAD, Math.ceil(widest / uPlot.pxRatio / 2) + 4);
}

export function buildChartOptions(input: ChartOptionsInput): uPlot.Options {
  const levels = input.limits ? limitLevels(input.limits) : [];
  const unit = input.specs[0]?.unit ?? '';
  const zeroBased = input.barMs !== undefined || input.specs.some((s) => s.bars);
  const lines = seriesLayout(input.specs).map((s) => s.avg);
  const opts: uPlot.Options = {
    width: input.width,
    height: input.height,
    ms: 1,
    tzDate: (ts) => uPlot.tzDate(new Date(ts), input.tz),
    padding: [null, rightPadding, null, null],
    series: buildSeriesOptions(input),
    bands: buildBands(input.specs),
    axes: buildAxes(input.theme, unit, input.tz),
    scales: {
      x: { time: true },
      y: {
        range: (u, min, max) => {
          // The averages of the series shown (a legend click hides one), in the window on screen.
          const shown = lines.filter((i) => u.series[i]?.show !== false);
          const x = u.scales.x;
          const fit = lineExtent(u.data, shown, x?.min ?? undefined, x?.max ?? undefined);
          return fit.max === null
            ? yRange(min, max, levels, zeroBased)
            : yRange(fit.min, fit.max, levels, zeroBased);
        },
      },
    },
    cursor: {
      drag: { x: true, y: false, setScale: true },
      ...(input.syncKey ? { sync: { key: input.syncKey } } : {}),
    },
    legend: { show: true, live: true },
    plugins: [...(levels.length ? [limitsPlugin(levels)] : []), bandLegendPlugin(input.specs)],
  };
  return opts;
}
