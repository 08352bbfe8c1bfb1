import { describe, expect, it } from 'vitest';
import { jsonInPieces } from './schema.ts';

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
