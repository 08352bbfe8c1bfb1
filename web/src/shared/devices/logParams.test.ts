import { PARAM_NAMES } from '@kilowatch/core';
import { type MessageDescriptor, setupI18n } from '@lingui/core';
import { compileMessage } from '@lingui/message-utils/compileMessage';
import { describe, expect, it } from 'vitest';
import { en, type MessageId } from '../../i18n/locales/en.ts';
import { DEFAULT_LOG_PARAMS, defaultParamsFor, ownParams, paramOptions } from './logParams.ts';

const i18n = setupI18n({
  locale: 'en',
  messages: { en: Object.fromEntries(Object.entries(en).map(([id, m]) => [id, compileMessage(m)])) },
});
const t = (id: MessageId, values?: Record<string, unknown>) => i18n._({ id, values } as MessageDescriptor);

describe('data log parameters', () => {
  it("takes a device's catalogue parameters in catalogue order", () => {
    expect(ownParams({ vave1: 230, pave1: 1, sentAt: 5 })).toEqual(
      PARAM_NAMES.filter((p) => p === 'vave1' || p === 'pave1'),
    );
    expect(ownParams({ tempset: 21, tempmain: 20 })).toEqual(['tempmain', 'tempset']);
    expect(ownParams(undefined)).toEqual([]);
  });

  it('picks the usual set a meter reports, and a thermostat its own', () => {
    expect(defaultParamsFor(['vave1', 'iave1', 'pave1'])).toEqual(['vave1', 'pave1']);
    expect(defaultParamsFor(['tempmain', 'tempset', 'rel1'])).toEqual(['tempmain', 'tempset', 'rel1']);
    expect(defaultParamsFor([])).toEqual(DEFAULT_LOG_PARAMS);
  });

  it('offers only what the device reports, grouped, by human name with unit', () => {
    const options = paramOptions(t, ['vave1', 'pave1', 'energy3phases_import', 'tempmain']);
    expect(options).toEqual([
      {
        group: en['paramGroup.activeEnergy'],
        items: [{ value: 'energy3phases_import', label: 'Active energy import, total (kWh)' }],
      },
      { group: en['paramGroup.power'], items: [{ value: 'pave1', label: 'Power L1 (W)' }] },
      { group: en['paramGroup.voltage'], items: [{ value: 'vave1', label: 'Voltage L1 (V)' }] },
      { group: en['paramGroup.temperature'], items: [{ value: 'tempmain', label: 'Temperature (°C)' }] },
    ]);
  });

  it('keeps a chosen parameter the device does not report, and offers the catalogue until readings are known', () => {
    const kept = paramOptions(t, ['tempmain'], ['vave1']).flatMap((g) => g.items.map((i) => i.value));
    expect(kept.sort()).toEqual(['tempmain', 'vave1']);
    const all = paramOptions(t, []).flatMap((g) => g.items);
    expect(all.map((i) => i.value).sort()).toEqual([...PARAM_NAMES].sort());
    // No raw code is a label.
    expect(all.filter((i) => i.label === i.value || i.label.startsWith(`${i.value} `))).toEqual([]);
  });
});
