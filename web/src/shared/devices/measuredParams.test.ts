import { COMBINED_PARAMS, DEVICE_TYPES, PARAM_NAMES } from '@kilowatch/core';
import { type MessageDescriptor, setupI18n } from '@lingui/core';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { describe, expect, it } from 'vitest';
import { en, type MessageId } from '../../i18n/locales/en.ts';
import { pl } from '../../i18n/locales/pl.ts';
import { tr } from '../../i18n/locales/tr.ts';
import { measuredParams, paramsForDevice } from './measuredParams.ts';
import { paramSelectData } from './paramNames.ts';

function translator(locale: string, messages: Record<string, string>) {
  const i18n = setupI18n({
    locale,
    messages: {
      [locale]: Object.fromEntries(Object.entries(messages).map(([id, m]) => [id, compileMessage(m)])),
    },
  });
  return (id: MessageId, values?: Record<string, unknown>) => i18n._({ id, values } as MessageDescriptor);
}

/** Every parameter a picker may offer: the stored ones and the phases-combined ones. */
const ALL_PARAMS = [...COMBINED_PARAMS.map((c) => c.name), ...PARAM_NAMES];

const TYPES = [
  { name: 'three-phase meter', typeCode: DEVICE_TYPES.threePhase.code, phases: 3 as const },
  { name: 'single-phase meter', typeCode: DEVICE_TYPES.singlePhase.code, phases: 1 as const },
  { name: 'PV installation', typeCode: DEVICE_TYPES.solar.code, phases: 3 as const },
  { name: 'energy meter', typeCode: DEVICE_TYPES.energy.code, phases: 3 as const },
  { name: 'thermostat', typeCode: DEVICE_TYPES.thermostat.code, phases: 3 as const },
];

describe('what a device type measures', () => {
  it.each([
    [
      'three-phase meter',
      1,
      3,
      ['vave1', 'vave3', 'pave', 'power3phases', 'eai', 'frq1'],
      ['tempmain', 'vdc1', 'rel1'],
    ],
    [
      'single-phase meter',
      2,
      1,
      ['vave1', 'pave1', 'eai1', 'eai', 'frq1'],
      ['vave2', 'pave2', 'power3phases', 'tempmain'],
    ],
    [
      'PV installation',
      10,
      3,
      ['pave', 'power3phases', 'vdc1', 'idc2', 'eae'],
      ['tempmain', 'pfave1', 'rel1'],
    ],
    ['energy meter', 13, 3, ['power3phases', 'energy3phases_import', 'eai'], ['vave1', 'tempmain', 'vdc1']],
    ['thermostat', 17, 3, ['tempmain', 'tempset', 'rel1'], ['vave1', 'eai', 'alarm', 'power3phases']],
  ] as const)('a %s', (_name, typeCode, phases, has, lacks) => {
    const measured = measuredParams(typeCode, phases);
    for (const p of has) expect(measured.has(p), p).toBe(true);
    for (const p of lacks) expect(measured.has(p), p).toBe(false);
  });

  it('narrows a list in its order, keeps what is already chosen, and leaves it whole without a device', () => {
    const thermostat = { typeCode: DEVICE_TYPES.thermostat.code };
    expect(paramsForDevice(['vave1', 'tempset', 'tempmain'], thermostat)).toEqual(['tempset', 'tempmain']);
    expect(paramsForDevice(['vave1', 'tempset'], thermostat, ['vave1'])).toEqual(['vave1', 'tempset']);
    expect(paramsForDevice(['vave1', 'tempset'], undefined)).toEqual(['vave1', 'tempset']);
  });
});

describe('parameter picker labels', () => {
  for (const [lang, messages] of [
    ['en', en],
    ['pl', pl],
    ['tr', tr],
  ] as const) {
    const t = translator(lang, messages as Record<string, string>);
    it.each([{ name: 'every type together', typeCode: -1, phases: 3 as const }, ...TYPES])(
      `no two options read alike (${lang}, $name)`,
      ({ typeCode, phases }) => {
        const params = typeCode === -1 ? [...ALL_PARAMS] : paramsForDevice(ALL_PARAMS, { typeCode, phases });
        const labels = paramSelectData(t, params).flatMap((g) => g.items.map((i) => i.label));
        expect(labels.length).toBe(params.length);
        expect(labels.filter((l, i) => labels.indexOf(l) !== i)).toEqual([]);
      },
    );
  }

  it('names the sum of the phases apart from the meter’s own total', () => {
    const t = translator('en', en as Record<string, string>);
    const items = paramSelectData(t, ['pave', 'power3phases']).flatMap((g) => g.items);
    expect(items).toEqual([
      { value: 'pave', label: 'Power, sum of phases (W)' },
      { value: 'power3phases', label: 'Power, total (W)' },
    ]);
  });
});
