import { describe, expect, it } from 'vitest';
import { appendReading } from './liveSeries.ts';

const T0 = Date.UTC(2026, 2, 29, 10);

describe('appendReading', () => {
  it('draws a summed and an averaged view live from the phases of a reading', () => {
    const data = {
      t: [T0],
      series: { pave: { avg: [600], min: [590], max: [610] }, vave: { avg: [231] }, pave1: { avg: [200] } },
    };
    const next = appendReading(data, T0 + 10_000, {
      pave1: 100,
      pave2: 200,
      pave3: 300,
      vave1: 230,
      vave3: 234,
    });
    expect(next).toEqual({
      t: [T0, T0 + 10_000],
      series: {
        pave: { avg: [600, 600], min: [590, 600], max: [610, 600] },
        vave: { avg: [231, 232], min: undefined, max: undefined },
        pave1: { avg: [200, 100], min: undefined, max: undefined },
      },
    });
  });

  it('leaves a gap where the reading has neither the parameter nor any of its phases', () => {
    const next = appendReading({ t: [T0], series: { pave: { avg: [1] }, tmp: { avg: [20] } } }, T0 + 1, {
      vave1: 230,
      tmp: null,
    } as Record<string, number | null>);
    expect(next?.series).toEqual({
      pave: { avg: [1, null], min: undefined, max: undefined },
      tmp: { avg: [20, null], min: undefined, max: undefined },
    });
  });

  it('ignores a reading not newer than the last point', () => {
    expect(appendReading({ t: [T0], series: { pave: { avg: [1] } } }, T0, { pave1: 5 })).toBeNull();
  });
});
