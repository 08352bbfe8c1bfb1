import { describe, expect, it } from 'vitest';
import { initialDetectorState } from './common.ts';
import { detectPhaseImbalance, detectPhaseOverload, type PhaseSample, phaseImbalance } from './phase.ts';

const T0 = Date.parse('2026-01-10T17:00:00Z');
const s = (sec: number) => T0 + sec * 1000;
const sample = (sec: number, i1: number, i2 = 5, i3 = 5): PhaseSample => ({
  ts: s(sec),
  values: { iave1: i1, iave2: i2, iave3: i3 },
});
const settings = { deviceKey: 'a1b2c3d4e5f6', fuseA: 25 };

// Irregular spacing, 7–9 s apart (median 7.5 s, so a spacing above 15 s breaks a run).
const offsets = [0, 7, 15, 22, 30, 37, 44, 52, 61, 68, 76];

describe('phase overload', () => {
  it('no finding below 90 % of the fuse', () => {
    const samples = offsets.map((t) => sample(t, 22.4));
    expect(detectPhaseOverload(samples, settings, s(80)).findings).toEqual([]);
  });

  it('above 22.5 A for 60 s at irregular spacing: one finding from the first sample, with the peak', () => {
    const currents = [23, 24, 25.5, 24, 23.5, 24, 24, 23, 23.2, 23.1, 23];
    const samples = offsets.map((t, i) => sample(t, currents[i]!));
    const r = detectPhaseOverload(samples, settings, s(80));
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({
      kind: 'phase-overload',
      deviceKey: 'a1b2c3d4e5f6',
      at: s(0),
      value: 25.5,
      detail: { phase: 1, fuseA: 25, durationMs: 61_000, detectedAt: s(61) },
    });
    expect(r.findings[0]!.threshold).toBeCloseTo(22.5, 9);
  });

  it('a gap breaks the run: 40 s with no sample', () => {
    const gapped = [0, 7, 15, 22, 62, 70, 77, 85, 93, 100, 108, 115];
    const samples = gapped.map((t) => sample(t, 24));
    // Spacing median 8 s: the 40 s gap breaks the run, and neither 0–22 s nor 62–115 s lasts 60 s.
    expect(detectPhaseOverload(samples, settings, s(120)).findings).toEqual([]);
    // The same samples without the gap make one.
    const dense = [0, 7, 15, 22, 30, 38, 46, 54, 62].map((t) => sample(t, 24));
    expect(detectPhaseOverload(dense, settings, s(70)).findings).toHaveLength(1);
  });

  it('a sample under the threshold ends the run', () => {
    const samples = offsets.map((t) => sample(t, t === 30 ? 20 : 24));
    expect(detectPhaseOverload(samples, settings, s(80)).findings).toEqual([]);
  });

  it('each phase on its own; an exporting phase counts by magnitude', () => {
    const samples = offsets.map((t) => sample(t, 3, 5, -24));
    const r = detectPhaseOverload(samples, settings, s(80));
    expect(r.findings.map((f) => f.detail.phase)).toEqual([3]);
  });

  it('once per run across evaluations, whether windows overlap or follow on', () => {
    const long = Array.from({ length: 40 }, (_, i) => sample(i * 8, 24));
    const r1 = detectPhaseOverload(long.slice(0, 12), settings, s(90), initialDetectorState());
    expect(r1.findings).toHaveLength(1);
    // An overlapping window: samples already seen are skipped.
    const r2 = detectPhaseOverload(long.slice(5, 25), settings, s(200), r1.state);
    expect(r2.findings).toEqual([]);
    // A following window of new samples continues the same run.
    const r3 = detectPhaseOverload(long.slice(25), settings, s(320), r2.state);
    expect(r3.findings).toEqual([]);
    // The run ends, a new one starts: a new finding.
    const after = [sample(330, 10), ...Array.from({ length: 10 }, (_, i) => sample(338 + i * 8, 24))];
    const r4 = detectPhaseOverload(after, settings, s(420), r3.state);
    expect(r4.findings).toHaveLength(1);
    expect(r4.findings[0]!.at).toBe(s(338));
  });

  it('no fuse rating set: no overload check', () => {
    const samples = offsets.map((t) => sample(t, 80));
    expect(detectPhaseOverload(samples, { fuseA: null }, s(80)).findings).toEqual([]);
  });
});

describe('phase imbalance', () => {
  it('(max − min) / mean, only above the floor', () => {
    expect(phaseImbalance([10, 2, 3], 2)).toBeCloseTo(1.6, 9);
    expect(phaseImbalance([3, 0, 0], 2)).toBeNull();
  });

  it('no finding on balanced phases or below the 2 A mean', () => {
    const balanced = offsets.map((t) => sample(t, 10, 9, 8));
    expect(detectPhaseImbalance(balanced, settings, s(80)).findings).toEqual([]);
    const light = offsets.map((t) => sample(t, 5, 0.5, 0.2));
    expect(detectPhaseImbalance(light, settings, s(80)).findings).toEqual([]);
  });

  it('a heat pump on L1 only for a minute: one finding', () => {
    const samples = offsets.map((t) => sample(t, 10, 2, 3));
    const r = detectPhaseImbalance(samples, settings, s(80));
    expect(r.findings).toHaveLength(1);
    expect(r.findings[0]).toMatchObject({ kind: 'phase-imbalance', at: s(0), threshold: 0.5 });
    expect(r.findings[0]!.value).toBeCloseTo(1.6, 9);
    expect(detectPhaseImbalance(samples, settings, s(90), r.state).findings).toEqual([]);
  });
});
