import { describe, expect, it } from 'vitest';
import { costBars, defaultStatsRange, rangeError, rangeQuery, rankGroups } from './statsView.ts';

describe('stats range', () => {
  it('defaults to three calendar months up to today', () => {
    expect(defaultStatsRange(Date.parse('2026-11-22T05:00:00Z'), 'Europe/Warsaw')).toEqual({
      from: '2026-09-01',
      to: '2026-11-22',
    });
  });

  it.each([
    [{ from: '', to: '2026-01-01' }, 'val.dateRange'],
    [{ from: '2026-01-02', to: '2026-01-01' }, 'places.val.rangeOrder'],
    [{ from: '2026-01-01', to: '2026-01-01' }, undefined],
  ])('%j → %s', (r, id) => {
    expect(rangeError(r)?.id).toBe(id);
  });

  it('asks from local midnight to the midnight after the last day', () => {
    expect(rangeQuery({ from: '2026-03-01', to: '2026-03-31' }, 'Europe/Warsaw')).toEqual({
      from: '2026-02-28T23:00:00.000Z',
      to: '2026-03-31T22:00:00.000Z',
    });
    expect(rangeQuery({ from: '2026-03-02', to: '2026-03-01' }, 'UTC')).toBeNull();
  });
});

describe('costBars', () => {
  it('stacks zone costs and the fixed price, scaled to the largest month', () => {
    const bars = costBars([
      {
        month: '2026-01',
        zones: [
          { zone: 2, energy: 10, cost: 5 },
          { zone: 1, energy: 10, cost: 10 },
        ],
        energy: 20,
        fixed: 5,
        cost: 20,
      },
      { month: '2026-02', zones: [{ zone: 1, energy: 5, cost: 5 }], energy: 5, fixed: 5, cost: 10 },
    ]);
    expect(bars[0]).toEqual({
      month: '2026-01',
      total: 20,
      segments: [
        { key: 1, value: 10, percent: 50 },
        { key: 2, value: 5, percent: 25 },
        { key: 'fixed', value: 5, percent: 25 },
      ],
    });
    expect(bars[1]?.segments.map((s) => s.percent)).toEqual([25, 25]);
  });

  it('draws nothing for months without cost', () => {
    expect(costBars([{ month: '2026-01', zones: [], energy: 0, fixed: 0, cost: 0 }])[0]?.segments).toEqual(
      [],
    );
  });
});

describe('rankGroups', () => {
  it('puts the cheapest first with the extra cost of the others', () => {
    const ranked = rankGroups([
      { group: 'G11' as const, cost: 120 },
      { group: 'G12w' as const, cost: 90 },
      { group: 'G12' as const, cost: 100 },
      { group: 'G12as' as const, cost: 100 },
    ]);
    expect(ranked.map((g) => [g.rank, g.group, g.extra])).toEqual([
      [1, 'G12w', 0],
      [2, 'G12', 10],
      [3, 'G12as', 10],
      [4, 'G11', 30],
    ]);
  });
});
