import { describe, expect, it } from 'vitest';
import { energyInterval, seriesInterval, thin } from './resolution.ts';

const H = 3_600_000;
const DAY = 24 * H;
const at = (from: number, span: number, intervalMs: number, maxDataPoints: number) => ({
  from,
  to: from + span,
  intervalMs,
  maxDataPoints,
});
const T0 = Date.parse('2026-06-01T00:00:00Z');

describe('the resolution of a Grafana answer', () => {
  it('takes the finest rollup no finer than the panel interval that fits maxDataPoints', () => {
    expect(seriesInterval(at(T0, 6 * H, 20_000, 1000))).toBe('raw');
    expect(seriesInterval(at(T0, 6 * H, 20_000, 100))).toBe('15m');
    expect(seriesInterval(at(T0, 7 * DAY, 10 * 60_000, 1000))).toBe('15m');
    expect(seriesInterval(at(T0, 7 * DAY, 20 * 60_000, 1000))).toBe('30m');
    expect(seriesInterval(at(T0, 7 * DAY, 0, 100))).toBe('1d');
    expect(seriesInterval(at(T0, 365 * DAY, 0, 100_000))).toBe('15m');
    expect(seriesInterval(at(T0, 365 * DAY, DAY, 1000))).toBe('1d');
    // Nothing fits: the coarsest, to be merged down afterwards.
    expect(seriesInterval(at(T0, 365 * DAY, 0, 10))).toBe('1d');
    expect(energyInterval(at(T0, 365 * DAY, 0, 10))).toBe('1mo');
    expect(energyInterval(at(T0, 3 * DAY, H, 1000))).toBe('1h');
    expect(energyInterval(at(T0, 3 * DAY, 0, 1000))).toBe('15m');
  });

  it('never goes finer than the interval the query asks for', () => {
    expect(seriesInterval(at(T0, 6 * H, 20_000, 1000), '1h')).toBe('1h');
    expect(energyInterval(at(T0, 3 * DAY, 0, 1000), '1d')).toBe('1d');
    expect(energyInterval(at(T0, 3 * 365 * DAY, 0, 100), '1d')).toBe('1mo');
  });

  it('merges runs of points: energies summed, statistics kept, gaps stay gaps', () => {
    const t = [0, 1, 2, 3, 4, 5, 6];
    const x = [1, 2, null, 4, null, null, 7];
    expect(thin(t, x, 10, 'sum')).toEqual({ t, values: x });
    expect(thin(t, x, 3, 'sum')).toEqual({ t: [0, 3, 6], values: [3, 4, 7] });
    expect(thin(t, x, 3, 'avg')).toEqual({ t: [0, 3, 6], values: [1.5, 4, 7] });
    expect(thin(t, x, 3, 'min')).toEqual({ t: [0, 3, 6], values: [1, 4, 7] });
    expect(thin(t, x, 3, 'max')).toEqual({ t: [0, 3, 6], values: [2, 4, 7] });
    expect(thin(t, [null, null, null, 1, 1, 1, 1], 2, 'sum')).toEqual({ t: [0, 4], values: [1, 3] });
    expect(thin(t, x, 1, 'sum').values).toEqual([14]);
    expect(thin([0, 1, 2, 3], [null, null, 5, 5], 2, 'avg')).toEqual({ t: [0, 2], values: [null, 5] });
  });
});
