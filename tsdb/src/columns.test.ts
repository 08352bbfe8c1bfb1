import type { Reading } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { type ColumnBatch, checkBatch, columnize, concatBatches, readingsOf } from './columns.ts';
import { STORED } from './duckdb/schema.ts';

const col = (name: string) => STORED.indexOf(name);
const bit = (valid: Uint32Array, r: number) => (valid[r >>> 5]! >>> (r & 31)) & 1;

describe('columnize', () => {
  it.each([
    ['an empty device key', [{ deviceKey: '', ts: 0, values: { vave1: 1 } }], /reading 0: device key/],
    ['a fractional ts', [{ deviceKey: 'a', ts: 1.5, values: { vave1: 1 } }], /reading 0: ts must be integer/],
    ['values that are not an object', [{ deviceKey: 'a', ts: 1, values: null }], /reading 0: values must/],
    [
      'an unknown parameter in the second reading',
      [
        { deviceKey: 'a', ts: 1, values: { vave1: 1 } },
        { deviceKey: 'a', ts: 2, values: { nosuch: 1 } },
      ],
      /reading 1: unknown parameter "nosuch"/,
    ],
    ['a non-finite value', [{ deviceKey: 'a', ts: 1, values: { vave1: Number.NaN } }], /finite number/],
    ['a string value', [{ deviceKey: 'a', ts: 1, values: { vave1: '1' } }], /finite number/],
  ])('refuses %s', (_, readings, message) => {
    expect(() => columnize(readings as unknown as Reading[])).toThrow(message);
  });

  it('lays out columns in catalogue order with validity, ranges and newest values per device', () => {
    const b = columnize([
      { deviceKey: 'a', ts: 10, values: { vave1: 1, iave1: 2 } },
      { deviceKey: 'b', ts: 5, values: { vave1: 3 } },
      { deviceKey: 'a', ts: 20, values: {} },
      { deviceKey: 'a', ts: 30, values: { vave1: 4 } },
    ]);
    expect(b.rows).toBe(3);
    expect(b.keys).toEqual(['a', 'b']);
    expect([...b.dev.subarray(0, 3)]).toEqual([0, 1, 0]);
    expect([...b.ts.subarray(0, 3)]).toEqual([10, 5, 30]);
    expect(b.cols).toEqual([col('vave1'), col('iave1')].sort((x, y) => x - y));
    const v = b.cols.indexOf(col('vave1'));
    const i = b.cols.indexOf(col('iave1'));
    expect([...b.values[v]!.subarray(0, 3)]).toEqual([1, 3, 4]);
    expect(b.full[v]).toBe(true);
    expect(b.full[i]).toBe(false);
    expect([0, 1, 2].map((r) => bit(b.valid[i]!, r))).toEqual([1, 0, 0]);
    expect([b.minTs, b.maxTs]).toEqual([5, 30]);
    expect(b.minByDev).toEqual([10, 5]);
    expect(b.maxByDev).toEqual([30, 5]);
    const newest = [];
    for (let k = 0; k < b.newest.length; k += 4) newest.push(b.newest.slice(k, k + 4));
    expect(newest).toEqual(
      expect.arrayContaining([
        [0, col('vave1'), 30, 4],
        [0, col('iave1'), 10, 2],
        [1, col('vave1'), 5, 3],
      ]),
    );
    expect(newest).toHaveLength(3);
  });

  it('merges repeated (device, ts) of one batch, the later reading winning value by value', () => {
    const b = columnize([
      { deviceKey: 'a', ts: 2, values: { vave1: 1, iave1: 1 } },
      { deviceKey: 'a', ts: 1, values: { vave1: 5 } },
      { deviceKey: 'a', ts: 2, values: { vave1: 2 } },
    ]);
    expect(b.rows).toBe(2);
    const v = b.cols.indexOf(col('vave1'));
    const i = b.cols.indexOf(col('iave1'));
    expect([...b.ts.subarray(0, 2)]).toEqual([2, 1]);
    expect([...b.values[v]!.subarray(0, 2)]).toEqual([2, 5]);
    expect(bit(b.valid[i]!, 0)).toBe(1);
    expect(bit(b.valid[i]!, 1)).toBe(0);
  });

  it('sets validity bits across 64-row words', () => {
    const readings: Reading[] = Array.from({ length: 200 }, (_, r) => ({
      deviceKey: 'a',
      ts: r,
      values: r % 3 === 0 ? { vave1: r, iave1: r } : ({ vave1: r } as Record<string, number>),
    }));
    const b = columnize(readings);
    const i = b.cols.indexOf(col('iave1'));
    expect(Array.from({ length: 200 }, (_, r) => bit(b.valid[i]!, r))).toEqual(
      Array.from({ length: 200 }, (_, r) => (r % 3 === 0 ? 1 : 0)),
    );
  });
});

describe('concatBatches', () => {
  const plain = (b: ColumnBatch) => ({
    ...b,
    dev: [...b.dev.subarray(0, b.rows)],
    ts: [...b.ts.subarray(0, b.rows)],
    values: b.values.map((v) => [...v.subarray(0, b.rows)]),
    valid: b.valid.map((v, c) => (b.full[c] ? 'full' : [...v.subarray(0, Math.ceil(b.rows / 64) * 2)])),
    newest: [...Array(b.newest.length / 4).keys()]
      .map((i) => b.newest.slice(4 * i, 4 * i + 4).join(' '))
      .sort(),
  });
  const first: Reading[] = [
    { deviceKey: 'aa', ts: 1, values: { vave1: 230, eai1: 1 } },
    { deviceKey: 'bb', ts: 1, values: { vave2: 231 } },
    ...Array.from({ length: 70 }, (_, i) => ({ deviceKey: 'aa', ts: 2 + i, values: { vave1: 200 + i } })),
  ];
  const second: Reading[] = [
    { deviceKey: 'cc', ts: 5, values: { pave1: 10 } },
    { deviceKey: 'aa', ts: 100, values: { eai1: 2, vave1: 240 } },
    { deviceKey: 'bb', ts: 2, values: { vave2: 232, vave1: 1 } },
  ];

  it('joins batches whose devices only move forward into the batch of all their readings', () => {
    const joined = concatBatches([columnize(first), columnize(second)]);
    expect(joined).not.toBeNull();
    expect(plain(joined!)).toEqual(plain(columnize([...first, ...second])));
  });

  it('joins full columns at offsets off the 32-row word boundary', () => {
    const rows = (key: string, from: number, n: number): Reading[] =>
      Array.from({ length: n }, (_, i) => ({
        deviceKey: key,
        ts: from + i,
        values: { vave1: i, eai1: from + i },
      }));
    const parts = [rows('aa', 0, 37), rows('bb', 0, 70), rows('aa', 37, 5), rows('bb', 70, 33)];
    const joined = concatBatches(parts.map((p) => columnize(p)));
    expect(joined!.full).toEqual([true, true]);
    expect(plain(joined!)).toEqual(plain(columnize(parts.flat())));
    // Mixed: a column set in every row of one batch and in some rows of another.
    const mixed = concatBatches([columnize(rows('aa', 0, 37)), columnize(second)])!;
    expect(plain(mixed)).toEqual(plain(columnize([...rows('aa', 0, 37), ...second])));
  });

  it('refuses when a device repeats or goes back a timestamp', () => {
    expect(concatBatches([columnize(second), columnize(first)])).toBeNull();
    expect(concatBatches([columnize(first), columnize([first[0]!])])).toBeNull();
  });
});

describe('readingsOf', () => {
  it('gives back the readings a batch was laid out from, with and without gaps', () => {
    const full: Reading[] = Array.from({ length: 70 }, (_, i) => ({
      deviceKey: i % 2 ? 'aa' : 'bb',
      ts: 1000 + i,
      values: { vave1: 230 + i / 10, eai1: i, pave3: -i },
    }));
    expect(readingsOf(columnize(full))).toEqual(full);
    const gaps: Reading[] = [
      { deviceKey: 'aa', ts: 1, values: { vave1: 230, eai1: 1 } },
      { deviceKey: 'bb', ts: 1, values: { vave2: 231 } },
      { deviceKey: 'aa', ts: 2, values: { eai1: 0 } },
    ];
    expect(readingsOf(columnize(gaps))).toEqual(gaps);
  });
});

describe('checkBatch', () => {
  const good = () =>
    columnize([
      { deviceKey: 'aa', ts: 1, values: { vave1: 230, eai1: 1 } },
      { deviceKey: 'bb', ts: 2, values: { vave1: 231 } },
    ]);

  it('accepts what columnize laid out', () => {
    expect(() => checkBatch(good())).not.toThrow();
  });

  it.each<[string, (b: ColumnBatch) => void, RegExp]>([
    ['more rows than arrays hold', (b) => (b.rows = 3), /malformed column batch/],
    ['a device index out of range', (b) => (b.dev[1] = 5), /at row 1/],
    ['a fractional timestamp', (b) => (b.ts[0] = 1.5), /at row 0/],
    ['parameters out of order', (b) => b.cols.reverse(), /malformed column batch/],
    ['an unknown parameter', (b) => (b.cols[1] = STORED.length), /malformed column batch/],
    ['a value that is not finite', (b) => (b.values[0]![0] = Number.NaN), /row 0 is not a finite number/],
  ])('refuses %s', (_, spoil, message) => {
    const b = good();
    spoil(b);
    expect(() => checkBatch(b)).toThrow(message);
  });
});
