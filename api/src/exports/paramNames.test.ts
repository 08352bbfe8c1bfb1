import { PARAM_NAMES } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { exportParamLabel, exportParamName } from './paramNames.ts';

describe('export parameter names', () => {
  it.each([
    ['pave1', 'Power L1 (W)'],
    ['vmax2', 'Voltage, max L2 (V)'],
    ['energy3phases_import', 'Active energy import, total (kWh)'],
    ['pfave3', 'Power factor L3'],
    ['vdc2', 'DC voltage 2 (V)'],
    ['frq1', 'Frequency (Hz)'],
    ['nosuchparam', 'nosuchparam'],
  ])('%s → %s', (code, label) => expect(exportParamLabel(code)).toBe(label));

  it('names every stored parameter, none alike and none by its code', () => {
    const names = PARAM_NAMES.map(exportParamName);
    expect(PARAM_NAMES.filter((p) => exportParamName(p) === p)).toEqual([]);
    expect(new Set(names).size).toBe(PARAM_NAMES.length);
  });
});
