import { describe, expect, it } from 'vitest';
import { MINUTE_MS } from '../time.ts';
import { initialDetectorState } from './common.ts';
import { detectMeterOffline, offlineThresholdMs } from './offline.ts';

const T0 = Date.parse('2026-03-29T00:30:00Z');
const every = (stepMs: number, n: number, from = T0) =>
  Array.from({ length: n }, (_, i) => from + i * stepMs);
const settings = { deviceKey: 'a1b2c3d4e5f6' };

describe('meter offline', () => {
  it('threshold: 5 × the median interval, at least 5 minutes', () => {
    expect(offlineThresholdMs(every(10_000, 50))).toBe(5 * MINUTE_MS);
    expect(offlineThresholdMs(every(5 * MINUTE_MS, 20))).toBe(25 * MINUTE_MS);
    // Irregular spacing: the median, not the mean, of the recent intervals.
    expect(offlineThresholdMs([0, 60_000, 120_000, 180_000, 900_000, 960_000])).toBe(5 * MINUTE_MS);
    expect(offlineThresholdMs([T0])).toBe(5 * MINUTE_MS);
  });

  it('no finding while the silence is within the threshold', () => {
    const t = every(10_000, 50);
    expect(detectMeterOffline(t, settings, t.at(-1)! + 4 * MINUTE_MS).findings).toEqual([]);
  });

  it('one finding per outage, stamped with the last reading', () => {
    const t = every(60_000, 30);
    const last = t.at(-1)!;
    const r1 = detectMeterOffline(t, settings, last + 6 * MINUTE_MS, initialDetectorState());
    expect(r1.findings).toEqual([
      {
        kind: 'meter-offline',
        deviceKey: 'a1b2c3d4e5f6',
        at: last,
        value: 6 * MINUTE_MS,
        threshold: 5 * MINUTE_MS,
        detail: expect.objectContaining({ lastReading: last, usualIntervalMs: 60_000 }),
      },
    ]);
    const r2 = detectMeterOffline(t, settings, last + 60 * MINUTE_MS, r1.state);
    expect(r2.findings).toEqual([]);
    // It comes back, then goes silent again: a new outage.
    const back = [...t, last + 61 * MINUTE_MS, last + 62 * MINUTE_MS];
    const r3 = detectMeterOffline(back, settings, last + 63 * MINUTE_MS, r2.state);
    expect(r3.findings).toEqual([]);
    expect(r3.state.episodes).toEqual({});
    const r4 = detectMeterOffline(back, settings, last + 70 * MINUTE_MS, r3.state);
    expect(r4.findings.map((f) => f.at)).toEqual([last + 62 * MINUTE_MS]);
  });

  it('a reading between two evaluations starts a new outage even without an evaluation in between', () => {
    const t = every(60_000, 30);
    const last = t.at(-1)!;
    const r1 = detectMeterOffline(t, settings, last + 6 * MINUTE_MS);
    const later = [...t, last + 20 * MINUTE_MS];
    const r2 = detectMeterOffline(later, settings, last + 30 * MINUTE_MS, r1.state);
    expect(r2.findings.map((f) => f.at)).toEqual([last + 20 * MINUTE_MS]);
  });

  it('a device never seen is not offline', () => {
    expect(detectMeterOffline([], settings, T0).findings).toEqual([]);
  });
});
