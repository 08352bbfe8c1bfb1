import { describe, expect, it } from 'vitest';
import type { ConsumptionRow } from '../../api/analytics/get-consumption.ts';
import { parseLocalDate } from '../../ranges/ranges.ts';
import { bucketLabel, buildConsumptionTable, formatKwh, tableRangeTooLong } from './consumptionTable.ts';

const TZ = 'Europe/Warsaw';
const D1 = Date.UTC(2026, 0, 9, 23); // 2026-01-10 00:00 in Warsaw
const D2 = Date.UTC(2026, 0, 10, 23);

function row(deviceId: number, bucket: number, imp: number | null, exp: number | null): ConsumptionRow {
  return {
    deviceId,
    bucket,
    tz: TZ,
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
    );
    expect(t.deviceIds).toEqual([2, 1]);
    expect(t.rows.map((r) => r.bucket)).toEqual([D1, D2]);
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
    expect(buildConsumptionTable(rows, [1]).totals).toEqual(totals);
  });

  it('leaves a device without a row for a bucket empty, and ignores devices not asked for', () => {
    const t = buildConsumptionTable([row(1, D1, 1, 0), row(3, D1, 9, 9), row(2, D2, 2, 0)], [1, 2]);
    expect(t.rows[0]!.cells[1]).toBeNull();
    expect(t.rows[1]!.cells[0]).toBeNull();
    expect(t.totals).toEqual([
      { import: 1, export: 0, balance: 1 },
      { import: 2, export: 0, balance: 2 },
    ]);
  });

  it('is empty for no rows', () => {
    const t = buildConsumptionTable([], [1, 2]);
    expect(t.rows).toEqual([]);
    expect(t.totals).toHaveLength(2);
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

describe('bucketLabel', () => {
  it.each([
    { bucket: D1, interval: '1d', tz: TZ, locale: 'en', label: '01/10/2026' },
    { bucket: D1, interval: '1d', tz: TZ, locale: 'pl', label: '10.01.2026' },
    { bucket: D1, interval: '1d', tz: 'Europe/London', locale: 'en', label: '01/09/2026, 23:00' },
    // Warsaw days on both sides of the spring change (29 March 2026): midnight is 23:00 or 22:00 UTC.
    { bucket: Date.UTC(2026, 2, 28, 23), interval: '1d', tz: TZ, locale: 'pl', label: '29.03.2026' },
    { bucket: Date.UTC(2026, 2, 29, 22), interval: '1d', tz: TZ, locale: 'pl', label: '30.03.2026' },
    { bucket: Date.UTC(2026, 1, 28, 23), interval: '1mo', tz: TZ, locale: 'en', label: 'March 2026' },
    { bucket: Date.UTC(2026, 1, 28, 23), interval: '1mo', tz: TZ, locale: 'pl', label: 'marzec 2026' },
    { bucket: Date.UTC(2026, 2, 31, 22), interval: '1mo', tz: TZ, locale: 'pl', label: 'kwiecień 2026' },
    {
      bucket: Date.UTC(2026, 2, 31, 22),
      interval: '1mo',
      tz: 'UTC',
      locale: 'en',
      label: '03/31/2026, 22:00',
    },
  ] as const)('$bucket ($interval) in $tz, $locale → $label', ({ bucket, interval, tz, locale, label }) => {
    expect(bucketLabel(bucket, interval, tz, locale)).toBe(label);
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
