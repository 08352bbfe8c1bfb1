import { TARIFF_GROUPS, type TariffGroup } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { holidayRow, scheduleGrid, zoneRanges, zonesUsed } from './scheduleGrid.ts';

// Zone-2 hours per weekday row (Mon…Sun), from docs/domain.md §Tariffs.
const G12 = ['00–06', '13–15', '22–24'];
const ALL = ['00–24'];
const cases: { group: TariffGroup; operator?: string; zone2: string[][] }[] = [
  { group: 'G11', zone2: [[], [], [], [], [], [], []] },
  { group: 'G12', zone2: [G12, G12, G12, G12, G12, G12, G12] },
  { group: 'G12w', zone2: [G12, G12, G12, G12, G12, ALL, ALL] },
  {
    group: 'G12w',
    operator: 'E.ON',
    zone2: [...Array(5).fill(['00–06', '22–24']), ALL, ALL],
  },
  { group: 'G12r', zone2: Array(7).fill(['00–07', '13–16', '22–24']) },
  { group: 'G12n', zone2: [...Array(6).fill(['01–05']), ALL] },
  { group: 'G12as', zone2: Array(7).fill(['00–06', '22–24']) },
];

describe('scheduleGrid', () => {
  it.each(cases)('$group $operator: zone 2 hours per weekday', ({ group, operator, zone2 }) => {
    const grid = scheduleGrid({ group, operator });
    expect(grid).toHaveLength(7);
    for (const row of grid) expect(row).toHaveLength(24);
    expect(grid.map((row) => zoneRanges(row, 2))).toEqual(zone2);
  });

  it.each(TARIFF_GROUPS)(
    '%s has every hour in zone 1 or 2 by default (one zone for G11 and dynamic)',
    (group) => {
      const used = zonesUsed(scheduleGrid({ group }));
      expect(used).toEqual(group === 'G11' || group === 'dynamic' ? [1] : [1, 2]);
    },
  );

  it('follows an edited schedule, zone 3 included', () => {
    const grid = scheduleGrid({
      group: 'G12',
      schedule: { weekday: [{ from: '07:00', to: '13:00', zone: 3 }], sunday: [] },
    });
    expect(zoneRanges(grid[0]!, 3)).toEqual(['07–13']);
    expect(zoneRanges(grid[6]!, 3)).toEqual([]);
    expect(zonesUsed(grid)).toEqual([1, 3]);
  });
});

describe('zoneRanges', () => {
  it.each([
    { row: [1, 1, 2, 2, 1], zone: 2, out: ['02–04'] },
    { row: [2, 1, 2], zone: 2, out: ['00–01', '02–03'] },
    { row: [1, 1], zone: 3, out: [] },
  ] as const)('$row zone $zone', ({ row, zone, out }) => {
    expect(zoneRanges(row, zone)).toEqual(out);
  });
});

describe('holidayRow', () => {
  it.each([
    { group: 'G12w', operator: undefined, zone2: ['00–24'] },
    { group: 'G12w', operator: 'E.ON', zone2: ['00–24'] },
  ] as const)('$group $operator: holidays are zone 2 all day', ({ group, operator, zone2 }) => {
    expect(zoneRanges(holidayRow({ group, operator })!, 2)).toEqual(zone2);
  });

  it.each(['G11', 'G12', 'G12as', 'G12n', 'G12r'] as const)(
    '%s: holidays keep their weekday hours',
    (group) => {
      expect(holidayRow({ group })).toBeNull();
    },
  );

  it('follows edited holiday windows', () => {
    const row = holidayRow({
      group: 'G12',
      schedule: { holiday: [{ from: '10:00', to: '12:00', zone: 2 }] },
    });
    expect(zoneRanges(row!, 2)).toEqual(['10–12']);
  });
});
