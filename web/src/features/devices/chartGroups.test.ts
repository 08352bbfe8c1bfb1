import { describe, expect, it } from 'vitest';
import { chartGroups, kindFromPath } from './chartGroups.ts';

describe('chartGroups', () => {
  it.each([
    {
      kind: 'three-phase',
      view: 'phase',
      params: [
        ['vave1', 'vave2', 'vave3'],
        ['iave1', 'iave2', 'iave3'],
        ['pave1', 'pave2', 'pave3'],
        ['pfave1', 'pfave2', 'pfave3'],
      ],
    },
    { kind: 'three-phase', view: 'sum', params: [['vave'], ['iave'], ['pave'], ['pfave']] },
    { kind: 'single-phase', view: 'phase', params: [['vave1'], ['iave1'], ['pave1'], ['pfave1']] },
    { kind: 'solar', view: 'sum', params: [['pave'], ['vdc1', 'vdc2', 'vdc3'], ['idc1', 'idc2']] },
    { kind: 'thermostat', view: 'phase', params: [['tempmain', 'tempset'], ['rel1']] },
    { kind: 'energy', view: 'sum', params: [['pave']] },
  ] as const)('$kind $view', ({ kind, view, params }) => {
    const groups = chartGroups(kind, view);
    expect(groups.map((g) => g.params)).toEqual(params);
    for (const g of groups) {
      expect(g.specs.map((s) => s.param)).toEqual(g.params);
      expect(g.labels).toHaveLength(g.params.length);
    }
  });

  it('voltage charts carry the limit bands and units', () => {
    const [voltage] = chartGroups('three-phase', 'phase');
    expect(voltage?.voltageLimits).toBe(true);
    expect(voltage?.specs.map((s) => s.unit)).toEqual(['V', 'V', 'V']);
  });
});

describe('kindFromPath', () => {
  it.each([
    ['/device-details/1', 'three-phase'],
    ['/device-energy-details/2', 'energy'],
    ['/solar-device-details/3', 'solar'],
    ['/thermo-device-details/4', 'thermostat'],
    ['/single-phase-device-details/5', 'single-phase'],
  ])('%s → %s', (path, kind) => {
    expect(kindFromPath(path)).toBe(kind);
  });
});
