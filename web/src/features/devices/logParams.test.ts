import { PARAM_NAMES } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LOG_PARAMS, defaultParamsFor, ownParams, paramOptions } from './logParams.ts';

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

  it("offers the device's parameters first, then every other one once", () => {
    const options = paramOptions(['tempmain'], { own: 'This device', other: 'Other' });
    expect(options).toEqual([
      { group: 'This device', items: ['tempmain'] },
      { group: 'Other', items: PARAM_NAMES.filter((p) => p !== 'tempmain') },
    ]);
    expect(paramOptions([], { own: 'a', other: 'b' })).toEqual([...PARAM_NAMES]);
  });
});
