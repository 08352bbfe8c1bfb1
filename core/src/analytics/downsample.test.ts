import { describe, expect, it } from 'vitest';
import { HOUR_MS } from '../time.ts';
import { MAX_POINTS, MIN_POINTS, reduceSeries, type SeriesColumns } from './downsample.ts';

const T0 = Date.parse('2024-01-01T00:00:00Z');
const H = HOUR_MS;

/** `hours` hourly buckets from T0 of one parameter; `value(i)` null for a gap. */
function hourly(
  hours: number,
  value: (i: number) => number | null,
  stats: readonly ('avg' | 'min' | 'max')[] = ['avg', 'min', 'max'],
) {
  const t = Array.from({ length: hours }, (_, i) => T0 + i * H);
  const col = (d: number) =>
    t.map((_, i) => {
      const v = value(i);
      return v === null ? null : v + d;
    });
  const s: Partial<Record<'avg' | 'min' | 'max', (number | null)[]>> = {};
  if (stats.includes('avg')) s.avg = col(0);
  if (stats.includes('min')) s.min = col(-1);
  if (stats.includes('max')) s.max = col(1);
  return { interval: '1h', from: T0, to: T0 + hours * H, tz: 'Europe/Warsaw', t, series: { vave1: s } };
}

const wave = (i: number) => 230 + 3 * Math.sin(i / 7);

describe('reduceSeries', () => {
  it('keeps a spike exactly in the band shape, at most `points` rows, a row per slice', () => {
    const spikeAt = 3_333;
    const a = hourly(5 * 365 * 24, (i) => (i === spikeAt ? 400 : wave(i)));
    const r = reduceSeries(a, 1000);
    expect(r.t).toHaveLength(1000);
    expect(r.reduced).toEqual({ points: 1000, from: a.t.length });
    const s = r.series.vave1!;
    expect(Math.max(...(s.max as number[]))).toBe(401);
    expect(Math.min(...(s.min as number[]))).toBe(Math.min(...(a.series.vave1.min as number[])));
    // The slice of the spike: its max is the spike's, its mean stays near the wave.
    const k = r.t.findLastIndex((x) => x <= a.t[spikeAt]!);
    expect(s.max![k]).toBe(401);
    expect(s.avg![k]).toBeLessThan(240);
    // Same range, interval and zone; the columns stay aligned.
    expect([r.interval, r.from, r.to, r.tz]).toEqual([a.interval, a.from, a.to, a.tz]);
    expect([s.avg!.length, s.min!.length, s.max!.length]).toEqual([1000, 1000, 1000]);
  });

  it('averages the buckets of a slice, each counted once, nulls left out', () => {
    const a = hourly(40, (i) => (i < 20 ? 1 : 3));
    const r = reduceSeries(a, 10);
    expect(r.series.vave1!.avg).toEqual([1, 1, 1, 1, 1, 3, 3, 3, 3, 3]);
    expect(r.t).toEqual([0, 4, 8, 12, 16, 20, 24, 28, 32, 36].map((i) => T0 + i * H));
  });

  it('sets every row at a time stamp of the answer: its slice’s first', () => {
    // 1 000 buckets into 30 slices: slices of 33.3 buckets, edges between the answer's stamps.
    const a = hourly(1000, wave);
    const r = reduceSeries(a, 30);
    const stamps = new Set(a.t);
    expect(r.t.every((x) => stamps.has(x))).toBe(true);
    expect(r.t[0]).toBe(a.t[0]);
    const width = (a.to - a.from) / 30;
    r.t.forEach((x, k) => {
      expect(x).toBeGreaterThanOrEqual(a.from + k * width);
      expect(x - H).toBeLessThan(a.from + k * width);
    });
  });

  it('keeps a gap as a gap: a null row at its start, never a value across it', () => {
    // Data, then 100 hours without (a third of a slice in from the edge), then data again.
    const a = hourly(1200, (i) => (i >= 410 && i < 510 ? null : 230));
    const r = reduceSeries(a, 12);
    const avg = r.series.vave1!.avg!;
    const gapStart = r.t.indexOf(T0 + 410 * H);
    expect(gapStart).toBeGreaterThan(0);
    expect(avg[gapStart]).toBeNull();
    expect(r.series.vave1!.max![gapStart]).toBeNull();
    expect(avg[gapStart - 1]).toBe(230);
    // Data resumes at its own stamp, after the nulls.
    expect(r.t[gapStart + 1]).toBe(T0 + 510 * H);
    expect(avg[gapStart + 1]).toBe(230);
    // The nulls are never counted as values, and no other row is null.
    expect(avg.filter((x) => x === null)).toHaveLength(1);
    expect(r.t.length).toBeLessThanOrEqual(12 + 2);
  });

  it('keeps first, last, lowest and highest rows (M4) when the answer has no min and max', () => {
    const a = hourly(2000, (i) => (i === 777 ? 999 : i === 1500 ? -5 : wave(i)), ['avg']);
    const r = reduceSeries(a, 100);
    expect(r.reduced).toEqual({ points: 100, from: 2000 });
    expect(r.series.vave1!.min).toBeUndefined();
    const avg = r.series.vave1!.avg as number[];
    expect(avg.length).toBeLessThanOrEqual(4 * 100);
    expect(Math.max(...avg)).toBe(999);
    expect(Math.min(...avg)).toBe(-5);
    // Rows are the answer's own, in order: the values at their stamps.
    r.t.forEach((x, k) => {
      expect(avg[k]).toBe(a.series.vave1.avg![(x - T0) / H]);
    });
    expect([...r.t].sort((x, y) => x - y)).toEqual(r.t);
    expect(r.t[0]).toBe(a.t[0]);
    expect(r.t.at(-1)).toBe(a.t.at(-1));
  });

  it('M4 keeps a gap: its first null row stays', () => {
    const a = hourly(1000, (i) => (i >= 300 && i < 400 ? null : 230), ['avg']);
    const r = reduceSeries(a, 20);
    const k = r.t.indexOf(T0 + 300 * H);
    expect(r.series.vave1!.avg![k]).toBeNull();
    expect(r.series.vave1!.avg![k - 1]).toBe(230);
    expect(r.t[k + 1]).toBe(T0 + 400 * H);
  });

  it('returns the answer itself when it has no more rows than points', () => {
    const a = hourly(500, wave);
    expect(reduceSeries(a, 500)).toBe(a);
    expect(reduceSeries(a, MAX_POINTS)).toBe(a);
    expect(reduceSeries(a, 500)).not.toHaveProperty('reduced');
    const empty: SeriesColumns = { from: T0, to: T0 + H, t: [], series: {} };
    expect(reduceSeries(empty, MIN_POINTS)).toBe(empty);
  });

  it('is deterministic and leaves its input alone', () => {
    const a = hourly(3000, (i) => (i % 500 === 0 ? null : wave(i)));
    const copy = structuredClone(a);
    const one = reduceSeries(a, 64);
    const two = reduceSeries(structuredClone(a), 64);
    expect(one).toEqual(two);
    expect(a).toEqual(copy);
  });

  it('reduces every parameter of the answer on the same rows', () => {
    const a = hourly(900, wave);
    const b = {
      ...a,
      series: {
        ...a.series,
        vave2: { ...a.series.vave1, max: a.series.vave1.max!.map((x, i) => (i === 450 ? 500 : x)) },
      },
    };
    const r = reduceSeries(b, 90);
    expect(r.t).toHaveLength(90);
    expect(Math.max(...(r.series.vave2!.max as number[]))).toBe(500);
    expect(Math.max(...(r.series.vave1!.max as number[]))).toBeLessThan(240);
  });
});
