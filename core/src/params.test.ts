import { describe, expect, it } from 'vitest';
import {
  checkValue,
  combinedParamDef,
  detailsPageFor,
  deviceKeyFromMac,
  isQueryableParam,
  paramDef,
} from './index.ts';

describe('parameter catalogue', () => {
  it.each([
    ['vave1', 231.2, { ok: true }],
    ['vave1', 600, { ok: false, reason: 'out-of-range' }],
    ['frq1', 39.9, { ok: false, reason: 'out-of-range' }],
    ['pfave2', -1, { ok: true }],
    ['pfave2', 1.01, { ok: false, reason: 'out-of-range' }],
    ['eai3', -0.5, { ok: false, reason: 'out-of-range' }],
    ['vave4', 230, { ok: false, reason: 'unknown-parameter' }],
    ['vave1', Number.NaN, { ok: false, reason: 'not-finite' }],
  ])('%s = %d', (name, value, expected) => {
    expect(checkValue(name, value)).toEqual(expected);
  });

  it('knows units and kinds', () => {
    expect(paramDef('eai1')).toMatchObject({ unit: 'kWh', kind: 'counter', phase: 1, stem: 'eai' });
    expect(paramDef('tempmain')).toMatchObject({ unit: '°C', kind: 'gauge' });
    expect(paramDef('rel1')?.kind).toBe('state');
  });

  it('combines phases: powers, currents and energies add, voltages and power factors average', () => {
    expect(combinedParamDef('pave')).toMatchObject({ combine: 'sum', of: ['pave1', 'pave2', 'pave3'] });
    expect(combinedParamDef('eai')).toMatchObject({ combine: 'sum', kind: 'counter' });
    expect(combinedParamDef('vave')?.combine).toBe('mean');
    expect(combinedParamDef('pfave')?.combine).toBe('mean');
    expect(isQueryableParam('vave')).toBe(true);
    expect(isQueryableParam('nope')).toBe(false);
  });
});

describe('device types', () => {
  it.each([
    [13, 3, 'energy'],
    [16, 3, 'energy'],
    [10, 3, 'solar'],
    [17, 3, 'thermostat'],
    [1, 3, 'three-phase'],
    [2, 1, 'single-phase'],
    [99, 3, 'three-phase'],
  ] as const)('type %i (%i phases) → %s', (code, phases, page) => {
    expect(detailsPageFor(code, phases)).toBe(page);
  });

  it.each([
    ['AA:BB:CC:DD:EE:FF', 'aabbccddeeff'],
    ['aabbccddeeff', 'aabbccddeeff'],
    ['aa-bb-cc-dd-ee-ff', 'aabbccddeeff'],
    ['zz:bb:cc:dd:ee:ff', null],
    ['aabbccddeeff00', null],
  ])('MAC %s → %s', (mac, key) => {
    expect(deviceKeyFromMac(mac)).toBe(key);
  });
});
