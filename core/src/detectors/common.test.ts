import { describe, expect, it } from 'vitest';
import {
  advanceRun,
  initialDetectorState,
  localInstant,
  MAD_SCALE,
  median,
  medianInterval,
  percentile,
  scaledMad,
} from './common.ts';
import { detectMeterOffline } from './offline.ts';

describe('robust statistics', () => {
  it('median of odd and even counts, NaN when empty', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('percentile interpolates between ranks (PERCENTILE.INC)', () => {
    const v = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110];
    expect(percentile(v, 10)).toBe(20);
    expect(percentile(v, 0)).toBe(10);
    expect(percentile(v, 100)).toBe(110);
    // rank 0.1 × 3 = 0.3: 100 + 0.3 × (200 − 100)
    expect(percentile([400, 100, 300, 200], 10)).toBeCloseTo(130, 9);
  });

  it('MAD is the median absolute deviation scaled by 1.4826', () => {
    // median 10; deviations 0, 0.5, 0.5, 1, 0, 1 → median 0.5
    expect(scaledMad([10, 10.5, 9.5, 11, 10, 9])).toBeCloseTo(0.5 * MAD_SCALE, 12);
    expect(scaledMad([5, 5, 5])).toBe(0);
  });

  it('median interval ignores repeated stamps', () => {
    expect(medianInterval([0, 10, 10, 30, 40])).toBe(10);
    expect(medianInterval([5])).toBeNaN();
  });

  it('local instants follow the zone on DST days and roll over month ends', () => {
    expect(new Date(localInstant(2026, 3, 29, 5 * 60, 'Europe/Warsaw')).toISOString()).toBe(
      '2026-03-29T03:00:00.000Z',
    );
    expect(new Date(localInstant(2026, 11, 0, 23 * 60, 'Europe/Warsaw')).toISOString()).toBe(
      '2026-10-31T22:00:00.000Z',
    );
  });
});

describe('runs', () => {
  const options = { minDurationMs: 60_000, maxGapMs: 20_000 };

  it('reaches its duration once, from its first sample', () => {
    let e = advanceRun(undefined, undefined, 0, true, 1, options);
    expect(e.reached).toBe(false);
    e = advanceRun(e.episode, 0, 15_000, true, 3, options);
    e = advanceRun(e.episode, 15_000, 30_000, true, 2, options);
    e = advanceRun(e.episode, 30_000, 45_000, true, 2, options);
    e = advanceRun(e.episode, 45_000, 60_000, true, 2, options);
    expect(e.reached).toBe(true);
    expect(e.episode).toEqual({ since: 0, last: 60_000, reported: true, peak: 3 });
    e = advanceRun(e.episode, 60_000, 75_000, true, 2, options);
    expect(e.reached).toBe(false);
  });

  it('a spacing above the gap starts again; a sample that does not hold ends it', () => {
    const a = advanceRun(
      { since: 0, last: 10_000, reported: false, peak: 1 },
      10_000,
      40_000,
      true,
      1,
      options,
    );
    expect(a.episode?.since).toBe(40_000);
    expect(advanceRun(a.episode, 40_000, 50_000, false, 0, options).episode).toBeUndefined();
  });
});

describe('state', () => {
  it('is plain JSON and never mutated in place', () => {
    const state = initialDetectorState();
    const frozen = JSON.stringify(state);
    const t = [0, 60_000, 120_000];
    const r = detectMeterOffline(t, { deviceKey: 'a1b2c3d4e5f6' }, 120_000 + 10 * 60_000, state);
    expect(r.findings).toHaveLength(1);
    expect(JSON.stringify(state)).toBe(frozen);
    const round = JSON.parse(JSON.stringify(r.state));
    expect(round).toEqual(r.state);
    expect(
      detectMeterOffline(t, { deviceKey: 'a1b2c3d4e5f6' }, 120_000 + 11 * 60_000, round).findings,
    ).toEqual([]);
  });
});
