import { DuckDBInstance } from '@duckdb/node-api';
import { calendarBuckets } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { bucketStartSql } from './calendar.ts';

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
