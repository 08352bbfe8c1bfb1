import { describe, expect, it } from 'vitest';
import { combinedParamDef } from '../params.ts';
import { zonedTimeToUtc } from '../time.ts';
import { billingPeriodAt, billingPeriodsUpTo } from './billing.ts';
import {
  ENERGY_INTERVALS,
  isCalendarInterval,
  isRollupInterval,
  NOMINAL_STEP_MS,
  ROLLUP_STEP_MS,
  SERIES_INTERVALS,
} from './intervals.ts';
import { combinedValue, combinedValues, combinePhases } from './phases.ts';

const WAW = 'Europe/Warsaw';

describe('interval catalogue', () => {
  it('lists series and energy intervals finest first with their steps', () => {
    expect(SERIES_INTERVALS).toEqual(['raw', '15m', '30m', '1h', '1d']);
    expect(ENERGY_INTERVALS).toEqual(['15m', '30m', '1h', '1d', '1mo']);
    expect(ROLLUP_STEP_MS).toEqual({ '15m': 900_000, '30m': 1_800_000, '1h': 3_600_000 });
    const steps = SERIES_INTERVALS.map((i) => NOMINAL_STEP_MS[i]);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    expect(NOMINAL_STEP_MS['1mo']).toBe(30 * 86_400_000);
  });

  it('tells rollup and calendar intervals apart, and nothing else is either', () => {
    expect(['15m', '30m', '1h'].every(isRollupInterval)).toBe(true);
    expect(['1d', '1mo', 'raw', 'toString', ''].some(isRollupInterval)).toBe(false);
    expect(['1d', '1mo'].every(isCalendarInterval)).toBe(true);
    expect(['1h', 'constructor'].some(isCalendarInterval)).toBe(false);
  });
});

describe('combinePhases', () => {
  it('sums powers and averages voltages over the phases a reading has', () => {
    expect(combinedValue('pave', { pave1: 100, pave2: 200, pave3: 300 })).toBe(600);
    expect(combinedValue('vave', { vave1: 230, vave2: 232, vave3: 234 })).toBe(232);
    // A missing phase is left out: the sum of two, the mean of two.
    expect(combinedValue('pave', { pave1: 100, pave3: 300 })).toBe(400);
    expect(combinedValue('vave', { vave1: 230, vave2: null, vave3: 234 })).toBe(232);
  });

  it('has no value without any phase, and none for a stored name', () => {
    expect(combinedValue('pave', { vave1: 230 })).toBeUndefined();
    expect(combinedValue('pave1', { pave1: 100 })).toBeUndefined();
    expect(combinePhases(combinedParamDef('eai')!, { eai1: 1, eai2: 2, eai3: 3 })).toBe(6);
  });

  it('lists every combined parameter a reading has a phase of', () => {
    expect(Object.fromEntries(combinedValues({ pave1: 10, pave2: 20, vave1: 230, tmp: 21 }))).toEqual({
      pave: 30,
      vave: 230,
    });
  });
});

describe('billingPeriodsUpTo', () => {
  it('lists periods newest first, each the one billingPeriodAt gives for its start', () => {
    const now = Date.UTC(2026, 5, 20, 12);
    const list = billingPeriodsUpTo(now, '2025-01-31', 2, WAW, 4);
    expect(list).toHaveLength(4);
    expect(list[0]).toEqual(billingPeriodAt(now, '2025-01-31', 2, WAW));
    for (const p of list) expect(billingPeriodAt(p.start, '2025-01-31', 2, WAW)).toEqual(p);
    for (let i = 1; i < list.length; i++) expect(list[i]!.end).toBe(list[i - 1]!.start);
    // 31 January + 2 months is clamped to 31 March; + 16 months to 31 May 2026.
    expect(list[0]!.start).toBe(zonedTimeToUtc(2026, 5, 31, 0, 0, 0, WAW));
  });

  it('starts at the billing start and gives the first period before it', () => {
    const all = billingPeriodsUpTo(Date.UTC(2026, 0, 10), '2025-03-15', 3, WAW, 100);
    expect(all.at(-1)!.start).toBe(zonedTimeToUtc(2025, 3, 15, 0, 0, 0, WAW));
    expect(all).toHaveLength(4);
    expect(billingPeriodsUpTo(Date.UTC(2024, 0, 1), '2025-03-15', 3, WAW)).toEqual([
      { start: zonedTimeToUtc(2025, 3, 15, 0, 0, 0, WAW), end: zonedTimeToUtc(2025, 6, 15, 0, 0, 0, WAW) },
    ]);
  });
});
