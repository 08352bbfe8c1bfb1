import { describe, expect, it } from 'vitest';
import {
  cellLabel,
  colorAt,
  colorDomain,
  colorScale,
  fitTicks,
  HEAT_PALETTES,
  HEATMAP_PARAMS,
  legendGradient,
  legendTicks,
  NO_DATA_COLORS,
  partialCell,
  position,
  rowHeight,
  thinTicks,
  valueDomain,
} from './heatmapScale.ts';

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const n = Number.parseInt(hex.slice(1), 16);
  const [r, g, b] = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

describe('valueDomain', () => {
  it.each([
    { rows: [], domain: null },
    { rows: [{ data: [{ y: null }, { y: null }] }], domain: null },
    {
      rows: [{ data: [{ y: 2 }, { y: null }] }, { data: [{ y: -1 }, { y: 5 }] }],
      domain: { min: -1, max: 5 },
    },
    { rows: [{ data: [{ y: 3 }] }], domain: { min: 3, max: 3 } },
  ])('$rows.length rows → $domain', ({ rows, domain }) => {
    expect(valueDomain(rows)).toEqual(domain);
  });
});

describe('colour scale', () => {
  it.each([
    { value: 0, d: { min: 0, max: 10 }, p: 0 },
    { value: 10, d: { min: 0, max: 10 }, p: 1 },
    { value: 5, d: { min: 0, max: 10 }, p: 0.5 },
    { value: -5, d: { min: 0, max: 10 }, p: 0 },
    { value: 15, d: { min: 0, max: 10 }, p: 1 },
    { value: 7, d: { min: 7, max: 7 }, p: 0.5 },
    { value: -2, d: { min: -4, max: 0 }, p: 0.5 },
  ])('position($value in $d.min..$d.max) = $p', ({ value, d, p }) => {
    expect(position(value, d)).toBeCloseTo(p, 10);
  });

  it.each([
    { p: 0, color: '#000000' },
    { p: 1, color: '#ffffff' },
    { p: 0.5, color: '#808080' },
    { p: 0.25, color: '#404040' },
  ])('colorAt($p) on black→white = $color', ({ p, color }) => {
    expect(colorAt(p, ['#000000', '#ffffff'])).toBe(color);
  });

  it('ends on the first and last stops of each theme and passes through the middle stop', () => {
    for (const theme of ['light', 'dark'] as const) {
      const palette = HEAT_PALETTES[theme];
      const scale = colorScale({ min: 0, max: 100 }, theme);
      expect(scale(0)).toBe(palette[0]);
      expect(scale(100)).toBe(palette[palette.length - 1]);
      expect(scale(50)).toBe(palette[(palette.length - 1) / 2]);
    }
  });

  it('draws null cells in the no-data colour, which no value of the scale takes', () => {
    for (const theme of ['light', 'dark'] as const) {
      const scale = colorScale({ min: 0, max: 1 }, theme);
      expect(scale(null)).toBe(NO_DATA_COLORS[theme]);
      const taken = new Set(Array.from({ length: 101 }, (_, i) => scale(i / 100)));
      expect(taken.has(NO_DATA_COLORS[theme])).toBe(false);
    }
    expect(colorScale(null, 'light')(3)).toBe(NO_DATA_COLORS.light);
  });

  it('orders the light palette dark-high (on white) and the dark palette bright-high (on black)', () => {
    const light = HEAT_PALETTES.light.map(luminance);
    const dark = HEAT_PALETTES.dark.map(luminance);
    for (let i = 1; i < light.length; i++) expect(light[i]).toBeLessThan(light[i - 1]!);
    expect(dark[dark.length - 1]).toBeGreaterThan(dark[0]!);
    // The extreme ends stand apart from each other by a 3:1 contrast at least.
    const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    expect(contrast(light[0]!, light[light.length - 1]!)).toBeGreaterThan(3);
    expect(contrast(dark[0]!, dark[dark.length - 1]!)).toBeGreaterThan(3);
  });

  it('builds the legend gradient from the same stops', () => {
    expect(legendGradient('light')).toBe(
      'linear-gradient(to right, #ffffcc 0%, #fed976 25%, #fd8d3c 50%, #e31a1c 75%, #800026 100%)',
    );
  });
});

describe('legendTicks', () => {
  it.each([
    { d: { min: 0, max: 4 }, count: 5, ticks: [0, 1, 2, 3, 4] },
    { d: { min: -1, max: 1 }, count: 3, ticks: [-1, 0, 1] },
    { d: { min: 2, max: 2 }, count: 5, ticks: [2] },
  ])('$d.min..$d.max in $count → $ticks', ({ d, count, ticks }) => {
    expect(legendTicks(d, count)).toEqual(ticks);
  });
});

describe('cellLabel', () => {
  it.each([
    // An hour of a Warsaw day, read in Warsaw and in New York (6 h behind in January).
    { kind: 'daily', row: '2026-01-15', x: 14, userTz: 'Europe/Warsaw', label: '01/15/2026, 14:00–15:00' },
    { kind: 'daily', row: '2026-01-15', x: 14, userTz: 'America/New_York', label: '01/15/2026, 08:00–09:00' },
    { kind: 'daily', row: '2026-01-15', x: 0, userTz: 'UTC', label: '01/14/2026, 23:00–00:00' },
    // Summer time: Warsaw is UTC+2.
    { kind: 'daily', row: '2026-07-01', x: 12, userTz: 'UTC', label: '07/01/2026, 10:00–11:00' },
    { kind: 'weekly', row: 'Tue', x: 23, userTz: 'Europe/Warsaw', label: 'Tuesday 23:00–00:00' },
    { kind: 'weekly', row: 'Mon', x: 7, userTz: 'UTC', label: 'Monday 07:00–08:00 (Europe/Warsaw)' },
    { kind: 'monthly', row: '2026-02', x: 3, userTz: 'UTC', label: '02/03/2026' },
    { kind: 'yearly', row: 'Wed', x: '2026-03-02', userTz: 'UTC', label: '03/04/2026 (Wednesday)' },
  ] as const)('$kind $row $x in $userTz → $label', ({ kind, row, x, userTz, label }) => {
    expect(cellLabel(kind, row, x, 'Europe/Warsaw', userTz, 'en')).toBe(label);
  });

  it('writes days and hours in the reader’s language, across the spring change', () => {
    // 29 March 2026 in Warsaw: 01:00 CET is followed by 03:00 CEST.
    expect(cellLabel('daily', '2026-03-29', 1, 'Europe/Warsaw', 'Europe/Warsaw', 'pl')).toBe(
      '29.03.2026, 01:00–03:00',
    );
    expect(cellLabel('daily', '2026-03-29', 3, 'Europe/Warsaw', 'Europe/Warsaw', 'en')).toBe(
      '03/29/2026, 03:00–04:00',
    );
    expect(cellLabel('monthly', '2026-03', 29, 'Europe/Warsaw', 'UTC', 'pl')).toBe('29.03.2026');
    expect(cellLabel('yearly', 'Wed', '2026-03-02', 'Europe/Warsaw', 'UTC', 'pl')).toBe('04.03.2026 (środa)');
  });

  it('names weekdays in the reader’s language', () => {
    expect(cellLabel('weekly', 'Mon', 1, 'Europe/Warsaw', 'Europe/Warsaw', 'pl')).toBe(
      'poniedziałek 01:00–02:00',
    );
  });
});

describe('layout', () => {
  it.each([
    { rows: 0, h: 24 },
    { rows: 7, h: 28 },
    { rows: 40, h: 25 },
    { rows: 365, h: 3 },
    { rows: 3650, h: 3 },
  ])('rowHeight($rows) = $h', ({ rows, h }) => {
    expect(rowHeight(rows)).toBe(h);
  });

  it.each([
    { n: 5, max: 10, kept: [0, 1, 2, 3, 4] },
    { n: 24, max: 12, kept: [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22] },
    { n: 10, max: 3, kept: [0, 4, 8] },
  ])('thinTicks of $n values to at most $max', ({ n, max, kept }) => {
    const out = thinTicks(
      Array.from({ length: n }, (_, i) => i),
      max,
    );
    expect(out).toEqual(kept);
    expect(out.length).toBeLessThanOrEqual(max);
  });

  it('fits the ticks to the width: a phone names fewer weeks of a year, each a label apart', () => {
    const weeks = Array.from({ length: 53 }, (_, i) => i);
    // Wide: the eight asked for, seven weeks apart.
    expect(fitTicks(weeks, 8, 1100, 43)).toEqual([0, 7, 14, 21, 28, 35, 42, 49]);
    // 250 px for 53 weeks (4.7 px each): a 43 px label needs 10 weeks between two ticks.
    const phone = fitTicks(weeks, 8, 250, 43);
    expect(phone).toEqual([0, 10, 20, 30, 40, 50]);
    for (let i = 1; i < phone.length; i++)
      expect(((phone[i]! - phone[i - 1]!) * 250) / 53).toBeGreaterThanOrEqual(43);
    // Unmeasured (width 0): as thinTicks; few values that fit: all of them.
    expect(fitTicks(weeks, 8, 0, 43)).toEqual(thinTicks(weeks, 8));
    expect(fitTicks([1, 2, 3], 12, 300, 20)).toEqual([1, 2, 3]);
  });

  it('offers energy parameters first, each once', () => {
    expect(HEATMAP_PARAMS.slice(0, 4)).toEqual(['eai', 'eae', 'eri', 'ere']);
    expect(new Set(HEATMAP_PARAMS).size).toBe(HEATMAP_PARAMS.length);
    expect(HEATMAP_PARAMS).toContain('vave1');
  });
});

describe('colorDomain', () => {
  const rowsOf = (values: (number | null)[]) => [{ data: values.map((y) => ({ y })) }];

  it.each([
    { name: 'no values', values: [], domain: null },
    { name: 'few values: the full range', values: [1, 2, 900], domain: { min: 1, max: 900, clipped: false } },
    {
      name: 'many values without outliers: the full range',
      values: Array.from({ length: 200 }, (_, i) => i / 10),
      domain: { min: 0, max: 19.9, clipped: false },
    },
  ])('$name', ({ values, domain }) => {
    expect(colorDomain(rowsOf(values))).toEqual(domain);
  });

  it('stops at the 99th percentile when one outlier stretches the scale', () => {
    const values = [...Array.from({ length: 199 }, (_, i) => 1 + (i % 10) / 10), 7640];
    const d = colorDomain(rowsOf(values))!;
    expect(d.clipped).toBe(true);
    expect(d.min).toBe(1);
    expect(d.max).toBeCloseTo(1.9, 10);
    // The outlier takes the top colour, like the largest ordinary value.
    const scale = colorScale(d, 'light');
    expect(scale(7640)).toBe(scale(1.9));
  });

  it('clips a short run too (two days of hours with the first hour far above)', () => {
    const values = [7782, ...Array.from({ length: 47 }, (_, i) => 0.3 + (i % 5) / 10)];
    const d = colorDomain(rowsOf(values))!;
    expect(d).toEqual({ min: 0.3, max: 0.7, clipped: true });
  });

  it('ignores null cells', () => {
    const values = [...Array.from({ length: 150 }, () => null), ...Array.from({ length: 120 }, (_, i) => i)];
    expect(colorDomain(rowsOf(values))).toEqual({ min: 0, max: 119, clipped: false });
  });
});

describe('the cell still filling (today so far)', () => {
  const TZ = 'Europe/Warsaw';
  // 2026-03-10 10:30 in Warsaw (UTC+1), a Tuesday.
  const now = Date.UTC(2026, 2, 10, 9, 30);
  const month = [
    {
      id: '2026-03',
      data: Array.from({ length: 31 }, (_, i) => ({ x: i + 1, y: i < 9 ? 24 + i : i === 9 ? 10 : null })),
    },
  ];

  it('is today’s day of a monthly or yearly heatmap and the current hour of a daily one', () => {
    expect(partialCell('monthly', month, TZ, now)).toEqual({ row: '2026-03', x: 10 });
    const week = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((id) => ({
      id,
      data: [
        { x: '2026-03-02', y: 30 },
        { x: '2026-03-09', y: id === 'Tue' ? 12 : null },
      ],
    }));
    expect(partialCell('yearly', week, TZ, now)).toEqual({ row: 'Tue', x: '2026-03-09' });
    const days = [
      { id: '2026-03-10', data: Array.from({ length: 24 }, (_, h) => ({ x: h, y: h <= 10 ? 1 : null })) },
    ];
    expect(partialCell('daily', days, TZ, now)).toEqual({ row: '2026-03-10', x: 10 });
    // Local time decides: 23:30 UTC on the 10th is already the 11th in Warsaw.
    const eleventh = month.map((r) => ({
      ...r,
      data: r.data.map((c) => (c.x === 11 ? { x: 11, y: 1 } : c)),
    }));
    expect(partialCell('monthly', eleventh, TZ, Date.UTC(2026, 2, 10, 23, 30))).toEqual({
      row: '2026-03',
      x: 11,
    });
  });

  it('is none for a weekly heatmap, a range that ends before today, or a today without a value yet', () => {
    expect(partialCell('weekly', [{ id: 'Tue', data: [{ x: 10, y: 1 }] }], TZ, now)).toBeNull();
    expect(partialCell('monthly', [{ id: '2026-02', data: [{ x: 10, y: 1 }] }], TZ, now)).toBeNull();
    // A range of 1–9 March still has the month's 31 cells; the 10th holds nothing.
    const toNinth = month.map((r) => ({
      ...r,
      data: r.data.map((c) => (c.x === 10 ? { x: 10, y: null } : c)),
    }));
    expect(partialCell('monthly', toNinth, TZ, now)).toBeNull();
  });

  it('is left out of the colour scale, so a half-day does not set its low end', () => {
    expect(colorDomain(month)).toEqual({ min: 10, max: 32, clipped: false });
    expect(colorDomain(month, 0.99, { row: '2026-03', x: 10 })).toEqual({ min: 24, max: 32, clipped: false });
  });
});
