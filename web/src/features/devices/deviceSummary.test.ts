import { describe, expect, it } from 'vitest';

type Values = Record<string, number | null> | undefined;

import { deviceSubtitle, withPhaseTotals } from './deviceSummary.ts';

describe('withPhaseTotals', () => {
  it.each([
    {
      name: 'sums the phases when the meter sends no total',
      values: { pave1: 100, pave2: 200.5, pave3: 300, vave1: 230 },
      expected: { pave1: 100, pave2: 200.5, pave3: 300, vave1: 230, power3phases: 600.5 },
    },
    {
      name: 'keeps a total the meter sent',
      values: { pave1: 100, pave2: 200, pave3: 300, power3phases: 650 },
      expected: { pave1: 100, pave2: 200, pave3: 300, power3phases: 650 },
    },
    {
      name: 'adds the phases it knows (one missing, one null)',
      values: { eai1: 1.5, eai2: null, power3phases: null },
      expected: { eai1: 1.5, eai2: null, power3phases: null, energy3phases_import: 1.5 },
    },
    { name: 'leaves a device without phases alone', values: { tempmain: 21 }, expected: { tempmain: 21 } },
    { name: 'takes no values', values: undefined, expected: {} },
  ] as { name: string; values: Values; expected: Values }[])('$name', ({ values, expected }) => {
    expect(withPhaseTotals(values)).toEqual(expected);
  });
});

describe('deviceSubtitle', () => {
  const base = { typeName: 'Three-phase meter', location: { name: 'Home' } };
  it.each([
    {
      name: 'names the type once when the device has no model (the API then names it by its type)',
      label: 'Three-phase meter',
      d: { ...base, model: '', modelName: 'Three-phase meter' },
      expected: ['Three-phase meter', 'Home'],
    },
    {
      name: 'and in another language',
      label: 'Licznik trójfazowy',
      d: { ...base, model: '', modelName: 'Three-phase meter' },
      expected: ['Licznik trójfazowy', 'Home'],
    },
    {
      name: 'shows a model of its own',
      label: 'Three-phase meter',
      d: { ...base, model: 'SDM630', modelName: 'SDM630' },
      expected: ['Three-phase meter', 'SDM630', 'Home'],
    },
    {
      name: 'leaves out a missing location',
      label: 'Thermostat',
      d: { typeName: 'Thermostat', model: '', modelName: 'Thermostat', location: null },
      expected: ['Thermostat'],
    },
  ])('$name', ({ label, d, expected }) => {
    expect(deviceSubtitle(label, d)).toEqual(expected);
  });
});
