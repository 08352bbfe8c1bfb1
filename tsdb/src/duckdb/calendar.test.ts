import { DuckDBInstance } from '@duckdb/node-api';
import { calendarBucketStarts, DAY_MS } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { bucketStartSql, calendarBuckets } from './calendar.ts';

describe('calendarBuckets', () => {
  const cases: [string, number, number, 'day' | 'month', string][] = [
    ['a year of Warsaw days', Date.UTC(2025, 11, 31, 12), Date.UTC(2026, 11, 31, 5), 'day', 'Europe/Warsaw'],
    [
      'Kolkata days across a year end',
      Date.UTC(2025, 11, 30, 19),
      Date.UTC(2026, 0, 2, 18, 31),
      'day',
      'Asia/Kolkata',
    ],
    ['Warsaw months over two years', Date.UTC(2025, 1, 15), Date.UTC(2027, 2, 1), 'month', 'Europe/Warsaw'],
    ['one instant', Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 2, 29, 1) + 1, 'day', 'Europe/Warsaw'],
    ['exactly one local day', Date.UTC(2026, 2, 28, 23), Date.UTC(2026, 2, 29, 22), 'day', 'Europe/Warsaw'],
  ];
  it.each(cases)('%s matches core and ends where the next bucket starts', (_, from, to, unit, tz) => {
    const { starts, end } = calendarBuckets(from, to, unit, tz);
    expect(starts).toEqual(calendarBucketStarts(from, to, unit, tz));
    const last = starts[starts.length - 1]!;
    expect(end).toBe(calendarBucketStarts(last + 1, last + 40 * DAY_MS, unit, tz)[1]);
  });
  it('is empty for an empty range', () => {
    expect(calendarBuckets(5, 5, 'day', 'Europe/Warsaw').starts).toEqual([]);
  });
});

describe('bucketStartSql', () => {
  const cases: [string, number, number, 'day' | 'month', string][] = [
    ['two years of Warsaw days', Date.UTC(2025, 0, 1), Date.UTC(2027, 0, 1), 'day', 'Europe/Warsaw'],
    ['Warsaw months', Date.UTC(2025, 1, 15), Date.UTC(2027, 2, 1), 'month', 'Europe/Warsaw'],
    ['Kolkata days', Date.UTC(2025, 11, 30, 19), Date.UTC(2026, 1, 2, 18, 31), 'day', 'Asia/Kolkata'],
    [
      'New York days across both changes',
      Date.UTC(2026, 2, 1),
      Date.UTC(2026, 11, 1),
      'day',
      'America/New_York',
    ],
  ];
  it.each(cases)('puts every instant of %s in the bucket DuckDB is told', async (_, from, to, unit, tz) => {
    const { starts, end } = calendarBuckets(from, to, unit, tz);
    const probes: number[] = [];
    for (const [i, s] of starts.entries()) {
      const e = starts[i + 1] ?? end;
      probes.push(s, s + 1, e - 1, s + Math.floor((e - s) / 2));
    }
    for (let t = starts[0]!; t < end; t += 37 * 60_000) probes.push(t);
    const expected = probes.map((t) => starts.filter((s) => s <= t).pop());
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const res = await conn.run(
        `SELECT (${bucketStartSql('t', starts, end)})::DOUBLE FROM (SELECT unnest([${probes.join(', ')}]::BIGINT[]) AS t, generate_subscripts([${probes.join(', ')}], 1) AS i) ORDER BY i`,
      );
      const got = (await res.getRows()).map((r) => r[0]);
      expect(got).toEqual(expected);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
  it('is NULL without buckets', () => {
    expect(bucketStartSql('t', [], 0)).toBe('NULL::BIGINT');
  });
});
