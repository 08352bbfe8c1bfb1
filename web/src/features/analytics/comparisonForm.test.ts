import type { SeriesBlock } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import {
  type ComparisonDraft,
  completeMembers,
  type MemberDraft,
  memberKey,
  mergeBlocks,
  toRequest,
  validateDraft,
} from './comparisonForm.ts';

const m = (key: number, deviceId: number | null, param: string | null): MemberDraft => ({
  key,
  deviceId,
  param,
});
const draft = (name: string, members: MemberDraft[]): ComparisonDraft => ({ name, members, grouped: true });

describe('validateDraft (docs/spec.md §5: name 3–30 characters, at least one parameter)', () => {
  it.each([
    { name: 'ab', members: [m(0, 1, 'eai')], errors: { name: 'val.comparisonName' } },
    { name: '  ab  ', members: [m(0, 1, 'eai')], errors: { name: 'val.comparisonName' } },
    { name: 'abc', members: [m(0, 1, 'eai')], errors: {} },
    { name: 'x'.repeat(30), members: [m(0, 1, 'eai')], errors: {} },
    { name: 'x'.repeat(31), members: [m(0, 1, 'eai')], errors: { name: 'val.comparisonName' } },
    { name: 'Kitchen', members: [], errors: { members: 'val.compareParam' } },
    { name: 'Kitchen', members: [m(0, null, 'eai'), m(1, 2, null)], errors: { members: 'val.compareParam' } },
    { name: '', members: [], errors: { name: 'val.comparisonName', members: 'val.compareParam' } },
    {
      name: 'Too many',
      members: Array.from({ length: 17 }, (_, i) => m(i, i + 1, 'eai')),
      errors: { members: 'val.compareParam' },
    },
  ])('"$name" with $members.length members → $errors', ({ name, members, errors }) => {
    expect(validateDraft(draft(name, members))).toEqual(errors);
  });
});

describe('completeMembers and toRequest', () => {
  it('drops incomplete rows and duplicate pairs, keeps order', () => {
    expect(
      completeMembers([m(0, 1, 'eai'), m(1, 2, null), m(2, 1, 'eai'), m(3, 1, 'eae'), m(4, 2, 'eai')]),
    ).toEqual([
      { deviceId: 1, param: 'eai' },
      { deviceId: 1, param: 'eae' },
      { deviceId: 2, param: 'eai' },
    ]);
  });

  it('trims the name and carries the grouped switch', () => {
    expect(toRequest({ name: '  Home  ', members: [m(0, 3, 'vave1')], grouped: false })).toEqual({
      name: 'Home',
      members: [{ deviceId: 3, param: 'vave1' }],
      grouped: false,
    });
  });
});

function block(deviceId: number, param: string, t: number[], avg: (number | null)[]) {
  const data: SeriesBlock = { interval: '1h', from: 0, to: 0, tz: 'UTC', t, series: { [param]: { avg } } };
  return { deviceId, param, deviceName: `D${deviceId}`, data };
}

describe('mergeBlocks', () => {
  it('puts every member on the union of the timestamps, null where a member has none', () => {
    const out = mergeBlocks([block(1, 'eai', [10, 20, 30], [1, 2, 3]), block(2, 'eai', [20, 40], [5, null])]);
    expect(out.t).toEqual([10, 20, 30, 40]);
    expect(out.series).toEqual({
      '1:eai': { avg: [1, 2, 3, null] },
      '2:eai': { avg: [null, 5, null, null] },
    });
  });

  it('keys members by device and parameter', () => {
    expect(memberKey({ deviceId: 7, param: 'vave1' })).toBe('7:vave1');
  });

  it('is empty for no blocks and tolerates a block without its series', () => {
    expect(mergeBlocks([])).toEqual({ t: [], series: {} });
    const b = block(1, 'eai', [1, 2], [1, 2]);
    b.data.series = {};
    expect(mergeBlocks([b]).series['1:eai']).toEqual({ avg: [null, null] });
  });
});
