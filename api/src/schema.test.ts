import { describe, expect, it } from 'vitest';
import { tidyNumbers } from './analytics/tidy.ts';
import { arrayElements, jsonInPieces, jsonInTurns } from './schema.ts';

const text = (x: Buffer | string) => (typeof x === 'string' ? x : x.toString('utf8'));

describe('jsonInPieces', () => {
  const long = Array.from({ length: 30_001 }, (_, i) => (i % 97 === 0 ? null : 230 + Math.sin(i) / 3));
  const cases: [string, unknown][] = [
    ['a small answer', { interval: '1h', t: [1, 2, 3], series: { vave1: { avg: [230.5, null, 1e-7] } } }],
    [
      'a year of columns',
      {
        interval: '1h',
        t: long.map((_, i) => 1_700_000_000_000 + i * 3_600_000),
        series: { vave1: { avg: long, min: long } },
      },
    ],
    [
      'arrays of exactly one and two slices',
      { a: long.slice(0, 4096), b: long.slice(0, 8192), c: long.slice(0, 4097) },
    ],
    [
      'comparison blocks with names outside ASCII',
      { interval: '1d', blocks: [{ deviceName: 'Łazienka — piętro „2”', data: { t: long, series: {} } }] },
    ],
    ['empty values', { a: [], b: {}, c: '', d: 0, e: false, skipped: undefined, n: null }],
    ['a date and a top-level array', [new Date(0), { x: [1, [2, [3]]] }]],
    [
      'whole numbers around the fast path (small, large, the largest safe, one fraction, -0)',
      {
        a: [1_000_000, 1_000_001, 1_700_000_000_005, 1_700_000_100_000, Number.MAX_SAFE_INTEGER],
        b: [999_999, 1_000_000, 2_000_000],
        c: [1_700_000_000_000, 1_700_000_000_000.5],
        d: [-1_700_000_000_000, 1_700_000_000_000],
        e: [-0, 1e21, 1_700_000_000_000, Number.NaN, null],
        f: Array.from({ length: 9000 }, (_, i) => (i === 8500 ? 0.5 : 1_700_000_000_000 + i * 60_007)),
      },
    ],
    [
      'one time axis shared by several blocks, and an array of objects appearing twice',
      (() => {
        const t = long.map((_, i) => 1_700_000_000_000 + i * 3_600_000);
        const rows = Array.from({ length: 100 }, (_, i) => ({ i, name: `row ${i}` }));
        return { blocks: [{ t, v: long }, { t, v: long.slice(1) }, { t }], rows, again: rows };
      })(),
    ],
    [
      "Grafana's targets: a short array of objects holding long arrays of pairs",
      [0, 1, 2].map((d) => ({
        target: `meter ${d} vave1`,
        datapoints: long.map((x, i) => [x, 1_700_000_000_000 + i * 60_000]),
        meta: { at: new Date(0), skipped: undefined, f: () => 1 },
      })),
    ],
    ['short arrays mixing objects, arrays and plain values', [1, 'a', null, [2, { b: [3, undefined] }], {}]],
  ];
  it.each(cases)('writes %s exactly as JSON.stringify', (_, value) => {
    expect(text(jsonInPieces(value))).toBe(JSON.stringify(value));
  });
  it('gives bytes, not one large string, for a large answer', () => {
    const out = jsonInPieces({ series: { v: long } });
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(JSON.parse(text(out))).toEqual(JSON.parse(JSON.stringify({ series: { v: long } })));
  });
});

describe('jsonInTurns', () => {
  const long = Array.from({ length: 30_001 }, (_, i) => (i % 97 === 0 ? null : 230 + Math.sin(i) / 3));
  const t = Array.from({ length: 30_001 }, (_, i) => Date.UTC(2026, 0, 1) + i * 900_000);
  it('writes the same bytes as jsonInPieces, in turns', async () => {
    const value = { interval: '15m', t, series: { a: long, b: long.slice(0, 100) }, note: 'x', n: 0.1 + 0.2 };
    const out = await jsonInTurns(value, false);
    expect(text(out)).toBe(text(jsonInPieces(value)));
    expect(text(out)).toBe(JSON.stringify(value));
  });
  it('with tidy, writes what tidyNumbers would, lists of rows included', async () => {
    const value = {
      t,
      import: long.map((x) => (x === null ? null : x / 7)),
      months: [{ month: '2026-01', cost: 0.1 + 0.2, zones: [{ zone: 1, energy: 25.829999999999927 }] }],
      total: { cost: 1 / 3 },
    };
    const out = await jsonInTurns(value, true);
    expect(text(out)).toBe(JSON.stringify(tidyNumbers(value)));
  });
  it('with tidy, writes each block of a short list of blocks as tidyNumbers would', async () => {
    const value = {
      blocks: [0, 1].map((b) => ({ name: `block ${b}`, t, v: long.map((x) => (x === null ? null : x / 3)) })),
    };
    const out = await jsonInTurns(value, true);
    expect(text(out)).toBe(JSON.stringify(tidyNumbers(value)));
  });
  it('counts array elements up to a bound', () => {
    expect(arrayElements({ a: [1, 2], b: { c: [3] }, d: [{ e: [4, 5] }] }, 100)).toBe(6);
    expect(arrayElements({ a: long, b: long }, 10)).toBeGreaterThanOrEqual(10);
  });
});
