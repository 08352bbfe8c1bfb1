import { describe, expect, it } from 'vitest';
import {
  encodeLine,
  escapeKey,
  escapeMeasurement,
  formatFloat,
  ident,
  literal,
  quoteString,
} from './lineProtocol.ts';

describe('line protocol escaping', () => {
  it.each([
    ['readings', 'readings'],
    ['my measurement', 'my\\ measurement'],
    ['a,b', 'a\\,b'],
    ['a=b', 'a=b'],
  ])('measurement %j → %j', (input, out) => {
    expect(escapeMeasurement(input)).toBe(out);
  });

  it.each([
    ['device', 'device'],
    ['a b', 'a\\ b'],
    ['a,b', 'a\\,b'],
    ['a=b', 'a\\=b'],
    ['"q"', '"q"'],
  ])('key or tag value %j → %j', (input, out) => {
    expect(escapeKey(input)).toBe(out);
  });

  it.each([
    ['plain', '"plain"'],
    ['say "hi"', '"say \\"hi\\""'],
    ['c:\\dir', '"c:\\\\dir"'],
  ])('string field %j → %j', (input, out) => {
    expect(quoteString(input)).toBe(out);
  });

  it.each([
    [1, '1'],
    [-0, '0'],
    [230.5, '230.5'],
    [1e21, '1e+21'],
    [-1.5e-7, '-1.5e-7'],
  ])('float %d → %s (never an integer suffix)', (input, out) => {
    expect(formatFloat(input)).toBe(out);
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY])('refuses %d', (v) => {
    expect(() => formatFloat(v)).toThrow(/finite/);
  });

  it('encodes a point with sorted tags, fields in order and a ms timestamp', () => {
    expect(
      encodeLine('readings', { z: '1', device: 'ab c' }, { vave1: 230, ev: 'r:1' }, 1_700_000_000_000),
    ).toBe('readings,device=ab\\ c,z=1 vave1=230,ev="r:1" 1700000000000');
  });

  it.each([
    ['no fields', () => encodeLine('m', {}, {}, 1), /at least one field/],
    ['a line break in a tag', () => encodeLine('m', { device: 'a\nb' }, { x: 1 }, 1), /line break/],
    ['an empty tag value', () => encodeLine('m', { device: '' }, { x: 1 }, 1), /empty/],
    ['a backslash in a tag value', () => encodeLine('m', { device: 'ab\\' }, { x: 1 }, 1), /backslash/],
    ['a backslash in a measurement', () => encodeLine('m\\', {}, { x: 1 }, 1), /backslash/],
    ['a fractional timestamp', () => encodeLine('m', {}, { x: 1 }, 1.5), /integer/],
  ])('refuses %s', (_, fn, msg) => {
    expect(fn).toThrow(msg);
  });
});

describe('InfluxQL quoting', () => {
  it.each([
    ['vave1', '"vave1"'],
    ['we"ird', '"we\\"ird"'],
  ])('identifier %j → %j', (input, out) => {
    expect(ident(input)).toBe(out);
  });

  it.each([
    ['abc', "'abc'"],
    ["o'brien", "'o\\'brien'"],
    ['x\\', "'x\\\\'"],
  ])('literal %j → %j', (input, out) => {
    expect(literal(input)).toBe(out);
  });
});
