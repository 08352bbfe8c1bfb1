import { describe, expect, it } from 'vitest';
import type { ConsumptionRow } from '../../api/analytics/get-consumption.ts';
import { parseLocalDate } from '../../ranges/ranges.ts';
import {
  buildConsumptionTable,
  formatKwh,
  periodLabel,
  periodOf,
  tableRangeTooLong,
} from './consumptionTable.ts';

const TZ = 'Europe/Warsaw';
const D1 = Date.UTC(2026, 0, 9, 23); // 2026-01-10 00:00 in Warsaw
const D2 = Date.UTC(2026, 0, 10, 23);

function row(
  deviceId: number,
  bucket: number,
  imp: number | null,
  exp: number | null,
  tz = TZ,
): ConsumptionRow {
  return {
    deviceId,
    bucket,
    tz,
    import: imp,
    export: exp,
    balance: imp === null || exp === null ? null : imp - exp,
  };
}

describe('buildConsumptionTable', () => {
  it('pivots rows per bucket (ascending) with one cell per device, in the chosen order', () => {
    const t = buildConsumptionTable(
      [row(2, D2, 4, 1), row(1, D1, 1.5, 0), row(2, D1, 2, 0.5), row(1, D2, 3, 0)],
      [2, 1],
      '1d',
    );
    expect(t.deviceIds).toEqual([2, 1]);
    expect(t.rows.map((r) => r.period)).toEqual(['2026-01-10', '2026-01-11']);
    expect(t.zones).toEqual([TZ, TZ]);
    expect(t.rows[0]!.cells).toEqual([
      { import: 2, export: 0.5, balance: 1.5 },
      { import: 1.5, export: 0, balance: 1.5 },
    ]);
  });

  it.each([
    {
      name: 'sums every bucket per device',
      rows: [row(1, D1, 1.25, 0.25), row(1, D2, 2.5, 0.5)],
      totals: [{ import: 3.75, export: 0.75, balance: 3 }],
    },
    {
      name: 'skips buckets without data (no data is not zero)',
      rows: [row(1, D1, null, null), row(1, D2, 2, 1)],
      totals: [{ import: 2, export: 1, balance: 1 }],
    },
    {
      name: 'keeps null when a device has no data at all',
      rows: [row(1, D1, null, null)],
      totals: [{ import: null, export: null, balance: null }],
    },
    {
      name: 'negative balances reduce the total',
      rows: [row(1, D1, 1, 3), row(1, D2, 2, 0)],
      totals: [{ import: 3, export: 3, balance: 0 }],
    },
  ])('totals: $name', ({ rows, totals }) => {
    expect(buildConsumptionTable(rows, [1], '1d').totals).toEqual(totals);
  });

  it('leaves a device without a row for a bucket empty, and ignores devices not asked for', () => {
    const t = buildConsumptionTable([row(1, D1, 1, 0), row(3, D1, 9, 9), row(2, D2, 2, 0)], [1, 2], '1d');
    expect(t.rows[0]!.cells[1]).toBeNull();
    expect(t.rows[1]!.cells[0]).toBeNull();
    expect(t.totals).toEqual([
      { import: 1, export: 0, balance: 1 },
      { import: 2, export: 0, balance: 2 },
    ]);
  });

  it('is empty for no rows', () => {
    const t = buildConsumptionTable([], [1, 2], '1d');
    expect(t.rows).toEqual([]);
    expect(t.totals).toHaveLength(2);
    expect(t.zones).toEqual([null, null]);
  });

  // Days chosen in Warsaw (2–3 November 2026): the API answers each device's local days touching that
  // range, so a London meter also has 1 November (its day from 23:00 Warsaw time).
  const WAW_2NOV = Date.UTC(2026, 10, 1, 23);
  const WAW_3NOV = Date.UTC(2026, 10, 2, 23);
  const LON_1NOV = Date.UTC(2026, 10, 1, 0);
  const LON_2NOV = Date.UTC(2026, 10, 2, 0);
  const LON_3NOV = Date.UTC(2026, 10, 3, 0);
  const twoZones = [
    row(1, WAW_2NOV, 1, 0),
    row(1, WAW_3NOV, 2, 0),
    row(2, LON_1NOV, 9, 0, 'Europe/London'),
    row(2, LON_2NOV, 3, 0, 'Europe/London'),
    row(2, LON_3NOV, 4, 0, 'Europe/London'),
  ];

  it('puts each device in its own zone on the same calendar day: one row per day', () => {
    const t = buildConsumptionTable(twoZones, [1, 2], '1d', { from: '2026-11-02', to: '2026-11-03' });
    expect(t.rows.map((r) => r.period)).toEqual(['2026-11-02', '2026-11-03']);
    expect(t.rows.map((r) => r.cells.map((c) => c?.import))).toEqual([
      [1, 3],
      [2, 4],
    ]);
    expect(t.zones).toEqual([TZ, 'Europe/London']);
    // London's 1 November lies before the chosen days: neither a row nor in the total.
    expect(t.totals.map((c) => c.import)).toEqual([3, 7]);
  });

  it('without chosen days, keeps every period answered', () => {
    const t = buildConsumptionTable(twoZones, [1, 2], '1d');
    expect(t.rows.map((r) => r.period)).toEqual(['2026-11-01', '2026-11-02', '2026-11-03']);
    expect(t.rows[0]!.cells).toEqual([null, { import: 9, export: 0, balance: 9 }]);
  });

  it('by month, each device in its own zone: one row per month, months of the chosen days only', () => {
    const rows = [
      row(1, Date.UTC(2019, 11, 31, 23), 5, 0), // January 2020 in Warsaw
      row(2, Date.UTC(2020, 0, 1), 6, 0, 'Europe/London'), // January 2020 in London
      row(2, Date.UTC(2019, 11, 1), 7, 0, 'Europe/London'), // December 2019 in London
      row(1, Date.UTC(2020, 0, 31, 23), 8, 0), // February 2020 in Warsaw
    ];
    const t = buildConsumptionTable(rows, [1, 2], '1mo', { from: '2020-01-01', to: '2020-02-29' });
    expect(t.rows.map((r) => r.period)).toEqual(['2020-01', '2020-02']);
    expect(t.rows[0]!.cells.map((c) => c?.import)).toEqual([5, 6]);
    expect(t.rows[1]!.cells.map((c) => c?.import)).toEqual([8, undefined]);
  });
});

describe('formatKwh', () => {
  it.each([
    { v: 1.23456, text: '1.235' },
    { v: 0, text: '0.000' },
    { v: -0.0001, text: '0.000' },
    { v: -2.5, text: '-2.500' },
    { v: 12345.6, text: '12345.600' },
    { v: null, text: '–' },
    { v: undefined, text: '–' },
    { v: Number.NaN, text: '–' },
  ])('$v → $text', ({ v, text }) => {
    expect(formatKwh(v)).toBe(text);
  });

  it('writes the decimal separator of the interface language', () => {
    expect(formatKwh(1.23456, 'pl')).toBe('1,235');
    expect(formatKwh(-2.5, 'tr')).toBe('-2,500');
    expect(formatKwh(-0.0001, 'pl')).toBe('0,000');
    expect(formatKwh(12345.6, 'tr')).toBe('12345,600');
  });
});

describe('periodOf', () => {
  it.each([
    { bucket: D1, tz: TZ, interval: '1d', period: '2026-01-10' },
    { bucket: D1, tz: 'Europe/London', interval: '1d', period: '2026-01-09' },
    // Warsaw days on both sides of the spring change (29 March 2026): midnight is 23:00 or 22:00 UTC.
    { bucket: Date.UTC(2026, 2, 28, 23), tz: TZ, interval: '1d', period: '2026-03-29' },
    { bucket: Date.UTC(2026, 2, 29, 22), tz: TZ, interval: '1d', period: '2026-03-30' },
    { bucket: Date.UTC(2026, 2, 31, 22), tz: TZ, interval: '1mo', period: '2026-04' },
    { bucket: Date.UTC(2026, 3, 1), tz: 'UTC', interval: '1mo', period: '2026-04' },
  ] as const)('$bucket in $tz ($interval) → $period', ({ bucket, tz, interval, period }) => {
    expect(periodOf(bucket, tz, interval)).toBe(period);
  });
});

describe('periodLabel', () => {
  it.each([
    { period: '2026-01-10', locale: 'en', label: '01/10/2026' },
    { period: '2026-01-10', locale: 'pl', label: '10.01.2026' },
    { period: '2026-03', locale: 'en', label: 'March 2026' },
    { period: '2026-03', locale: 'pl', label: 'marzec 2026' },
    { period: '2026-04', locale: 'pl', label: 'kwiecień 2026' },
  ])('$period in $locale → $label', ({ period, locale, label }) => {
    expect(periodLabel(period, locale)).toBe(label);
  });
});

describe('tableRangeTooLong', () => {
  const day = (d: string) => parseLocalDate(d, 'Europe/Warsaw')!;
  it('refuses a table of days from 2020, takes a year of days and the same range by month', () => {
    const since2020 = { from: day('2020-01-01'), to: day('2026-11-27') };
    expect(tableRangeTooLong(since2020, '1d')).toBe(true);
    expect(tableRangeTooLong(since2020, '1mo')).toBe(false);
    expect(tableRangeTooLong({ from: day('2025-11-27'), to: day('2026-11-27') }, '1d')).toBe(false);
    // A leap year of days, across both DST changes.
    expect(tableRangeTooLong({ from: day('2028-01-01'), to: day('2029-01-01') }, '1d')).toBe(false);
    expect(tableRangeTooLong({ from: day('2028-01-01'), to: day('2029-01-03') }, '1d')).toBe(true);
  });
});
