import { describe, expect, it } from 'vitest';
import { periodRange } from '../../shared/flows/periods.ts';
import { consumptionBySource, sankeyData, untrackedShare } from './flowsView.ts';

const none = {
  productionToHome: 0,
  productionToBattery: 0,
  productionToGrid: 0,
  batteryToHome: 0,
  batteryToGrid: 0,
  gridToHome: 0,
  gridToBattery: 0,
};

describe('the Energy view', () => {
  it('draws only the flows that carried energy, a battery and the grid as a node on each side', () => {
    const d = sankeyData({
      ...none,
      productionToHome: 14,
      productionToBattery: 7,
      productionToGrid: 21,
      gridToHome: 10,
    });
    expect(d.links).toEqual([
      { source: 'production', target: 'home', value: 14 },
      { source: 'production', target: 'batteryIn', value: 7 },
      { source: 'production', target: 'gridOut', value: 21 },
      { source: 'gridIn', target: 'home', value: 10 },
    ]);
    expect(d.nodes.map((n) => n.id)).toEqual(['production', 'gridIn', 'home', 'batteryIn', 'gridOut']);
    expect(sankeyData({ ...none, gridToHome: 0.0004 })).toEqual({ nodes: [], links: [] });
    expect(sankeyData(null)).toEqual({ nodes: [], links: [] });
  });

  it('takes the period so far in the location’s zone: today by hours, the month by days, the year by months', () => {
    const now = Date.parse('2026-03-29T10:30:00Z'); // 12:30 CEST on the spring DST day
    expect(periodRange('today', now, 'Europe/Warsaw')).toEqual({
      from: Date.parse('2026-03-28T23:00:00Z'),
      to: now,
      interval: '1h',
    });
    expect(periodRange('month', now, 'Europe/Warsaw')).toEqual({
      from: Date.parse('2026-02-28T23:00:00Z'),
      to: now,
      interval: '1d',
    });
    expect(periodRange('year', now, 'Europe/London').from).toBe(Date.parse('2026-01-01T00:00:00Z'));
  });

  it('stacks the home by source and names the untracked share', () => {
    const bars = consumptionBySource({
      t: ['2026-06-09T22:00:00.000Z', '2026-06-10T22:00:00.000Z'],
      flows: {
        ...Object.fromEntries(Object.keys(none).map((k) => [k, [null, null]])),
        productionToHome: [1, null],
        gridToHome: [2, 3],
      },
    } as never);
    expect(bars).toEqual([
      { t: '2026-06-09T22:00:00.000Z', productionToHome: 1, batteryToHome: 0, gridToHome: 2 },
      { t: '2026-06-10T22:00:00.000Z', productionToHome: 0, batteryToHome: 0, gridToHome: 3 },
    ]);
    expect(untrackedShare({ consumption: 24, untracked: 12 } as never)).toBe(0.5);
    expect(untrackedShare({ consumption: 0, untracked: 0 } as never)).toBeNull();
  });
});
