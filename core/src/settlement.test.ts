import { describe, expect, it } from 'vitest';
import type { Period } from './buckets/billing.ts';
import {
  addLocalMonthsKeepingTime,
  DEFAULT_SETTLEMENT_RULES,
  netMeteringRatio,
  type SettlementInput,
  settle,
  settlementPrices,
} from './settlement.ts';
import { HOUR_MS, zonedTimeToUtc } from './time.ts';

const TZ = 'Europe/Warsaw';
const rules = DEFAULT_SETTLEMENT_RULES;
const at = (y: number, m: number, d: number, h = 0) => zonedTimeToUtc(y, m, d, h, 0, 0, TZ);

/** Monthly billing periods from `y-m` for `n` months. */
function months(y: number, m: number, n: number): Period[] {
  return Array.from({ length: n }, (_, k) => ({ start: at(y, m + k, 1), end: at(y, m + k + 1, 1) }));
}

/** One step per entry: [hour start, billed import, billed export]. */
function steps(rows: readonly [number, number, number][]) {
  return {
    steps: rows.map((r) => r[0]),
    billedImport: rows.map((r) => r[1]),
    billedExport: rows.map((r) => r[2]),
  };
}

function netMetering(periods: Period[], rows: [number, number, number][], installedKw = 6): SettlementInput {
  const last = periods.at(-1)!;
  return {
    scheme: 'net-metering',
    installedKw,
    rules,
    tz: TZ,
    periods,
    nextEnd: at(new Date(last.end).getUTCFullYear(), new Date(last.end).getUTCMonth() + 2, 1),
    ...steps(rows),
  };
}

describe('net-metering', () => {
  it('banks 0.8 of the export up to 10 kW and 0.7 above', () => {
    expect(netMeteringRatio(10, rules)).toBe(0.8);
    expect(netMeteringRatio(10.5, rules)).toBe(0.7);
    const periods = months(2025, 6, 1);
    const rows: [number, number, number][] = [
      [at(2025, 6, 10, 12), 0, 10],
      [at(2025, 6, 10, 20), 3, 0],
    ];
    const small = settle(netMetering(periods, rows, 6)).periods[0]!;
    expect(small).toMatchObject({ credited: 8, drawable: 3, used: 3, payable: 0, left: 5, expired: 0 });
    const large = settle(netMetering(periods, rows, 12)).periods[0]!;
    expect(large.credited).toBeCloseTo(7, 10);
    expect(large.left).toBeCloseTo(4, 10);
  });

  it('draws a later period against the oldest credit first and pays what no credit covers', () => {
    // June: 10 kWh exported (8 banked), nothing imported. July: 5 kWh exported (4 banked), 15 imported.
    const periods = months(2025, 6, 2);
    const r = settle(
      netMetering(periods, [
        [at(2025, 6, 15, 12), 0, 10],
        [at(2025, 7, 15, 12), 0, 5],
        [at(2025, 7, 20, 20), 15, 0],
      ]),
    ).periods;
    expect(r[0]).toMatchObject({ credited: 8, used: 0, left: 8 });
    expect(r[1]).toMatchObject({ credited: 4, drawable: 15, used: 12, payable: 3, left: 0 });
  });

  it('lets a credit lapse twelve months after its hour, and says so a period ahead', () => {
    // 10 kWh exported in the hour 12:00 on 15 June 2025 (8 banked); no import for a year.
    const periods = months(2025, 6, 13);
    const r = settle(netMetering(periods, [[at(2025, 6, 15, 12), 0, 10]])).periods;
    // It lapses at 12:00 on 15 June 2026: in the period June 2026, named as expiring in May 2026.
    expect(r[10]).toMatchObject({ start: at(2026, 4, 1), left: 8, expiring: 0 });
    expect(r[11]).toMatchObject({ start: at(2026, 5, 1), left: 8, expiring: 8 });
    expect(r[12]).toMatchObject({ start: at(2026, 6, 1), left: 0, expired: 8, expiring: 0 });
  });

  it('settles billing periods across the spring and autumn clock changes by their hours', () => {
    // A two-month period with a 23-hour day (30 March 2025) and a 25-hour one (26 October 2025).
    const periods: Period[] = [
      { start: at(2025, 3, 1), end: at(2025, 5, 1) },
      { start: at(2025, 10, 1), end: at(2025, 12, 1) },
    ];
    const rows: [number, number, number][] = [];
    for (let t = at(2025, 3, 30); t < at(2025, 3, 31); t += HOUR_MS) rows.push([t, 0, 1]);
    for (let t = at(2025, 10, 26); t < at(2025, 10, 27); t += HOUR_MS) rows.push([t, 1, 0]);
    const r = settle(netMetering(periods, rows)).periods;
    expect(r[0]!.credited).toBeCloseTo(23 * 0.8, 10);
    expect(r[1]).toMatchObject({ drawable: 25 });
    expect(r[1]!.used).toBeCloseTo(23 * 0.8, 10);
    expect(r[1]!.payable).toBeCloseTo(25 - 23 * 0.8, 10);
  });
});

describe('net-billing', () => {
  const base = (rows: [number, number, number][], prices: (number | null)[], costs: (number | null)[]) => {
    const periods = months(2025, 6, 2);
    return {
      scheme: 'net-billing' as const,
      installedKw: null,
      rules,
      tz: TZ,
      periods,
      nextEnd: at(2025, 9, 1),
      ...steps(rows),
      prices,
      importCost: costs,
    };
  };

  it("credits each hour's export at its price and offsets only the import's energy cost", () => {
    const r = settle(
      base(
        [
          [at(2025, 6, 10, 12), 0, 10], // 10 kWh at 0.30 → 3.00 credited
          [at(2025, 6, 10, 13), 0, 4], // 4 kWh at 0.05 → 0.20
          [at(2025, 7, 2, 20), 8, 0], // 8 kWh costing 5.60 of energy
        ],
        [0.3, 0.05, 0.6],
        [null, null, 5.6],
      ),
    );
    expect(r.periods[0]!.credited).toBeCloseTo(3.2, 10);
    expect(r.periods[1]).toMatchObject({ credited: 0, drawable: 5.6 });
    expect(r.periods[1]!.used).toBeCloseTo(3.2, 10);
    expect(r.periods[1]!.payable).toBeCloseTo(2.4, 10);
    expect(r.unpriced).toEqual([]);
  });

  it('names an exporting hour without a price instead of valuing it at zero, and credits nothing for a negative price', () => {
    const r = settle(
      base(
        [
          [at(2025, 6, 10, 12), 0, 10],
          [at(2025, 6, 10, 13), 0, 5],
          [at(2025, 6, 11, 12), 2, 0],
        ],
        [null, -0.1, 0.5],
        [null, null, null],
      ),
    );
    expect(r.unpriced).toEqual([at(2025, 6, 10, 12)]);
    expect(r.uncosted).toEqual([at(2025, 6, 11, 12)]);
    expect(r.periods[0]).toMatchObject({ credited: 0, drawable: 0, left: 0 });
  });

  it('values hours before the hourly date at their month’s mean price (RCEm), after it at their own (RCE)', () => {
    const june = at(2024, 6, 1);
    const july = at(2024, 7, 1);
    const prices = [
      { start: june, price: 0.4 },
      { start: june + 10 * 24 * HOUR_MS, price: 0.2 },
      { start: july + 12 * HOUR_MS, price: 0.5 },
      // Quarter-hour prices in one hour: their mean.
      { start: july + 13 * HOUR_MS, price: 0.1 },
      { start: july + 13 * HOUR_MS + 15 * 60_000, price: 0.3 },
    ];
    const hours = [
      june + 5 * 24 * HOUR_MS + 12 * HOUR_MS,
      july + 12 * HOUR_MS,
      july + 13 * HOUR_MS,
      july + 20 * HOUR_MS,
    ];
    const p = settlementPrices(hours, prices, at(2024, 7, 1), TZ);
    expect(p[0]).toBeCloseTo(0.3, 10);
    expect(p[1]).toBe(0.5);
    expect(p[2]).toBeCloseTo(0.2, 10);
    expect(p[3]).toBeNull();
  });
});

describe('credit lapse dates', () => {
  it('keeps the wall time and clamps the day to the month', () => {
    expect(addLocalMonthsKeepingTime(at(2025, 3, 31, 12), 1, TZ)).toBe(at(2025, 4, 30, 12));
    expect(addLocalMonthsKeepingTime(at(2024, 2, 29, 2), 12, TZ)).toBe(at(2025, 2, 28, 2));
    // Winter hour to summer hour: the same wall clock, one hour less in between.
    expect(addLocalMonthsKeepingTime(at(2025, 1, 15, 12), 6, TZ)).toBe(at(2025, 7, 15, 12));
  });
});
