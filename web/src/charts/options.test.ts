import { i18n } from '@lingui/core';
import { describe, expect, it } from 'vitest';
import {
  buildBands,
  buildChartData,
  buildChartOptions,
  formatValue,
  limitLevels,
  lineExtent,
  type SeriesSpec,
  seriesLayout,
  timeTickLabels,
  toColumn,
  wideGaps,
  yRange,
} from './options.ts';

const V1: SeriesSpec = { param: 'vave1', label: 'L1', unit: 'V', color: '#f76707', band: true };
const V2: SeriesSpec = { param: 'vave2', label: 'L2', unit: 'V', color: '#1c7ed6' };

describe('toColumn', () => {
  it.each([
    { values: [1, 2, 3], len: 3, scale: 1, typed: true, out: [1, 2, 3] },
    { values: [1, null, 3], len: 3, scale: 1, typed: false, out: [1, null, 3] },
    { values: [1, 2], len: 3, scale: 1, typed: false, out: [1, 2, null] },
    { values: [2, 4], len: 2, scale: -1, typed: true, out: [-2, -4] },
    { values: undefined, len: 2, scale: 1, typed: false, out: [null, null] },
  ])('$values (len $len, ×$scale)', ({ values, len, scale, typed, out }) => {
    const col = toColumn(values, len, scale);
    expect(col instanceof Float64Array).toBe(typed);
    expect(Array.from(col)).toEqual(out);
  });
});

describe('buildChartData and seriesLayout', () => {
  const cols = {
    t: [1000, 2000],
    series: { vave1: { avg: [230, 231], min: [229, 228], max: [232, 233] }, vave2: { avg: [null, 229] } },
  };
  it.each([
    {
      specs: [V1],
      columns: [
        [1000, 2000],
        [230, 231],
        [229, 228],
        [232, 233],
      ],
      layout: [{ avg: 1, min: 2, max: 3 }],
    },
    {
      specs: [V2],
      columns: [
        [1000, 2000],
        [null, 229],
      ],
      layout: [{ avg: 1 }],
    },
    {
      specs: [V1, V2],
      columns: [
        [1000, 2000],
        [230, 231],
        [229, 228],
        [232, 233],
        [null, 229],
      ],
      layout: [{ avg: 1, min: 2, max: 3 }, { avg: 4 }],
    },
  ])('columns for $specs.length specs', ({ specs, columns, layout }) => {
    expect(buildChartData(cols, specs).map((c) => Array.from(c as ArrayLike<number | null>))).toEqual(
      columns,
    );
    expect(seriesLayout(specs)).toEqual(layout);
  });

  it('keeps time as a typed array', () => {
    expect(buildChartData(cols, [V2])[0]).toBeInstanceOf(Float64Array);
  });
});

describe('limitLevels', () => {
  it.each([
    { l: { nominal: 230, warning: 10, critical: 15 }, values: [207, 253, 195.5, 264.5] },
    { l: { nominal: 230, warning: 10 }, values: [207, 253] },
    { l: { nominal: 230, critical: 0 }, values: [] },
    { l: { nominal: 230 }, values: [] },
  ])('$l', ({ l, values }) => {
    expect(limitLevels(l).map((x) => x.value)).toEqual(values);
  });
});

describe('yRange', () => {
  it.each([
    { min: 220, max: 240, levels: [], zero: false, out: [219, 241] },
    { min: 225, max: 235, levels: [{ value: 207 }, { value: 253 }], zero: false, out: [204.7, 255.3] },
    { min: 1, max: 5, levels: [], zero: true, out: [0, 5.25] },
    { min: -2, max: 2, levels: [], zero: true, out: [-2.2, 2.2] },
    { min: 5, max: 5, levels: [], zero: false, out: [4.75, 5.25] },
    { min: null, max: null, levels: [], zero: false, out: [-0.05, 1.05] },
  ])('[$min, $max] zero=$zero', ({ min, max, levels, zero, out }) => {
    const [lo, hi] = yRange(min, max, levels, zero);
    expect(lo).toBeCloseTo(out[0] as number, 6);
    expect(hi).toBeCloseTo(out[1] as number, 6);
  });
});

describe('lineExtent', () => {
  const t = [0, 10, 20, 30];
  const avg = [2000, 2100, null, 1900];
  const bandMax = [5800, 6000, null, 5500];
  it('fits the lines named, not the band columns beside them', () => {
    expect(lineExtent([t, avg, bandMax], [1])).toEqual({ min: 1900, max: 2100 });
    expect(lineExtent([t, avg, bandMax], [1, 2])).toEqual({ min: 1900, max: 6000 });
  });
  it('looks only inside the window on screen', () => {
    expect(lineExtent([t, avg], [1], 15, 30)).toEqual({ min: 1900, max: 1900 });
  });
  it('has nothing to fit without values', () => {
    expect(lineExtent([t, [null, null, null, null]], [1])).toEqual({ min: null, max: null });
    expect(lineExtent([t, avg], [])).toEqual({ min: null, max: null });
  });
});

describe('formatValue', () => {
  it.each([
    [231.456, 'V', '231.5 V'],
    [0.9731, '', '0.973'],
    [12345.6, 'W', '12346 W'],
    [5.555, 'A', '5.56 A'],
    [null, 'V', '–'],
    [Number.NaN, 'V', '–'],
  ] as const)('%s %s → %s', (v, unit, out) => {
    expect(formatValue(v, unit)).toBe(out);
  });
});

describe('buildChartOptions', () => {
  const base = { tz: 'Europe/Warsaw', theme: 'light' as const, width: 600, height: 240 };
  it.each([
    { specs: [V1], series: ['Time', 'L1', 'L1 min', 'L1 max'], bands: 1 },
    { specs: [V2], series: ['Time', 'L2'], bands: 0 },
    { specs: [V1, V2], series: ['Time', 'L1', 'L1 min', 'L1 max', 'L2'], bands: 1 },
  ])('series $series', ({ specs, series, bands }) => {
    const o = buildChartOptions({ ...base, specs });
    expect(o.series.map((s) => s.label)).toEqual(series);
    expect(o.bands?.length).toBe(bands);
    expect(o.ms).toBe(1);
  });

  it('band fills between max and min of the same spec', () => {
    expect(buildBands([V2, V1]).map((b) => b.series)).toEqual([[4, 3]]);
  });

  it('legend shows the time in the user zone and values with units', () => {
    const o = buildChartOptions({ ...base, specs: [V2] });
    const fmtX = o.series[0]?.value as (u: unknown, v: number) => string;
    const fmtY = o.series[1]?.value as (u: unknown, v: number) => string;
    expect(fmtX(null, Date.UTC(2026, 0, 15, 12, 0))).toBe('01/15/2026, 13:00');
    expect(fmtX(null, Date.UTC(2026, 6, 15, 12, 0))).toBe('07/15/2026, 14:00');
    expect(fmtY(null, 229.94)).toBe('229.9 V');
  });

  it('legend writes the time in the interface language, across the autumn change', () => {
    const o = buildChartOptions({ ...base, specs: [V2] });
    const fmtX = o.series[0]?.value as (u: unknown, v: number) => string;
    const fmtY = o.series[1]?.value as (u: unknown, v: number) => string;
    const before = i18n.locale;
    try {
      i18n.loadAndActivate({ locale: 'pl', messages: {} });
      // 25 October 2026 in Warsaw: 02:30 CEST, then 02:30 CET an hour later, then 03:30 CET.
      expect(fmtX(null, Date.UTC(2026, 9, 25, 0, 30))).toBe('25.10.2026, 02:30');
      expect(fmtX(null, Date.UTC(2026, 9, 25, 1, 30))).toBe('25.10.2026, 02:30');
      expect(fmtX(null, Date.UTC(2026, 9, 25, 2, 30))).toBe('25.10.2026, 03:30');
      expect(fmtY(null, 229.94)).toBe('229,9 V');
    } finally {
      i18n.loadAndActivate({ locale: before || 'en', messages: {} });
    }
  });

  it('draws limit lines only when limits are given', () => {
    expect(buildChartOptions({ ...base, specs: [V1] }).plugins).toHaveLength(1);
    expect(
      buildChartOptions({ ...base, specs: [V1], limits: { nominal: 230, warning: 5 } }).plugins,
    ).toHaveLength(2);
  });

  it('dark theme uses light axis text', () => {
    const light = buildChartOptions({ ...base, specs: [V2] }).axes?.[0]?.stroke;
    const dark = buildChartOptions({ ...base, theme: 'dark', specs: [V2] }).axes?.[0]?.stroke;
    expect(light).not.toBe(dark);
  });

  it('a scaled series shows its unscaled value', () => {
    const o = buildChartOptions({ ...base, specs: [{ ...V2, param: 'eae', unit: 'kWh', scale: -1 }] });
    expect((o.series[1]!.value as (u: unknown, v: number) => string)(null, -2.5)).toBe('2.5 kWh');
  });
});

describe('timeTickLabels', () => {
  const noonUtc = Date.UTC(2026, 6, 1, 12, 0);
  it.each([
    { tz: 'Europe/Warsaw', incr: 3_600_000, out: ['14:00', '15:00'] },
    { tz: 'Europe/Istanbul', incr: 3_600_000, out: ['15:00', '16:00'] },
    { tz: 'Europe/Warsaw', incr: 86_400_000, out: ['07/01', '07/01'] },
    { tz: 'America/New_York', incr: 86_400_000, out: ['07/01', '07/01'] },
  ])('$tz every $incr ms', ({ tz, incr, out }) => {
    expect(timeTickLabels([noonUtc, noonUtc + 3_600_000], incr, tz, 'en')).toEqual(out);
  });

  it('writes dates as the interface language does, on the local day across the spring change', () => {
    // 28 March 2026 23:30 UTC is 00:30 CET on the 29th in Warsaw; a day later it is 01:30 CEST on the 30th.
    const ticks = [Date.UTC(2026, 2, 28, 23, 30), Date.UTC(2026, 2, 29, 23, 30)];
    expect(timeTickLabels(ticks, 86_400_000, 'Europe/Warsaw', 'pl')).toEqual(['29.03', '30.03']);
    expect(timeTickLabels(ticks, 86_400_000, 'Europe/Warsaw', 'en')).toEqual(['03/29', '03/30']);
    expect(timeTickLabels(ticks, 3_600_000, 'Europe/Warsaw', 'pl')).toEqual(['00:30', '01:30']);
  });

  it('names the year on date ticks when the range crosses one', () => {
    const ticks = [Date.UTC(2025, 11, 29, 12), Date.UTC(2026, 0, 5, 12)];
    expect(timeTickLabels(ticks, 7 * 86_400_000, 'Europe/Warsaw', 'en')).toEqual([
      '12/29/2025',
      '01/05/2026',
    ]);
    expect(timeTickLabels(ticks, 7 * 86_400_000, 'Europe/Warsaw', 'pl')).toEqual([
      '29.12.2025',
      '05.01.2026',
    ]);
  });

  it('labels monthly ticks with year and month', () => {
    const ticks = [Date.UTC(2025, 10, 1, 12), Date.UTC(2026, 0, 1, 12)];
    expect(timeTickLabels(ticks, 31 * 86_400_000, 'UTC', 'en')).toEqual(['Nov 2025', 'Jan 2026']);
    expect(timeTickLabels(ticks, 31 * 86_400_000, 'UTC', 'pl')).toEqual(['lis 2025', 'sty 2026']);
  });
});

describe('wideGaps', () => {
  it.each([
    { gaps: [[10, 40]], step: 10, out: [] },
    { gaps: [[10, 61]], step: 10, out: [] },
    { gaps: [[10, 62]], step: 10, out: [[10, 62]] },
    {
      gaps: [
        [0, 5],
        [100, 300],
      ],
      step: 10,
      out: [[100, 300]],
    },
  ] as { gaps: [number, number][]; step: number; out: [number, number][] }[])(
    '$gaps at step $step',
    ({ gaps, step, out }) => {
      expect(wideGaps(gaps, step)).toEqual(out);
    },
  );
});
