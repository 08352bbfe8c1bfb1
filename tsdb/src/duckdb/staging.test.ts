import { DuckDBInstance } from '@duckdb/node-api';
import type { Reading } from '@kilowatch/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { columnize } from '../columns.ts';
import { StagingTables } from './staging.ts';

const ids = (rows: number) => new Int32Array(rows).fill(7);

/** `rows` readings of device 'a' from ts 1: `iave1` on every row, `vave1` on the rows `gap` keeps. */
function batch(rows: number, from: number, gap: (i: number) => boolean) {
  const readings: Reading[] = [];
  for (let i = 0; i < rows; i++) {
    const values: Record<string, number> = { iave1: from + i };
    if (!gap(i)) values.vave1 = 1000 + from + i;
    readings.push({ deviceKey: 'a', ts: from + i, values });
  }
  return columnize(readings);
}

describe('StagingTables', () => {
  let instance: DuckDBInstance;
  beforeEach(async () => {
    instance = await DuckDBInstance.create(':memory:');
  });
  afterEach(() => {
    instance.closeSync();
  });

  it('stages batch after batch through one appender and chunk, each row as it was given', async () => {
    const conn = await instance.connect();
    const made = vi.spyOn(conn, 'createAppender');
    const tables = new StagingTables(conn, 'stg');
    // A gap in every third row of the first batch (over two chunks), none in the second, gaps again in the third:
    // a chunk used again must not keep the first batch's gaps.
    const batches = [
      batch(3000, 1, (i) => i % 3 === 0),
      batch(2500, 10_001, () => false),
      batch(100, 20_001, (i) => i >= 50),
    ];
    const stg = await tables.table(batches[0]!.cols);
    for (const b of batches) {
      expect(await tables.table(b.cols)).toBe(stg);
      await tables.stage(stg, b, ids(b.rows));
    }
    expect(made).toHaveBeenCalledTimes(1);
    const rows = (
      await conn.runAndReadAll(`SELECT ts::BIGINT, device, iave1, vave1 FROM temp.${stg} ORDER BY ts`)
    ).getRows();
    expect(rows).toHaveLength(5600);
    const expected = batches.flatMap((b, n) => {
      const from = [1, 10_001, 20_001][n]!;
      return Array.from({ length: b.rows }, (_, i) => {
        const gap = n === 0 ? i % 3 === 0 : n === 2 ? i >= 50 : false;
        return [BigInt(from + i), 7, from + i, gap ? null : 1000 + from + i];
      });
    });
    expect(rows).toEqual(expected);
    await tables.dropAll();
  });

  it('makes the appender again for a table made again, and after a failed batch', async () => {
    const conn = await instance.connect();
    const made = vi.spyOn(conn, 'createAppender');
    const tables = new StagingTables(conn, 'bulk');
    const b = batch(10, 1, () => false);
    let stg = await tables.fresh(b.cols);
    await tables.stage(stg, b, ids(b.rows));
    stg = await tables.fresh(b.cols);
    await tables.stage(stg, b, ids(b.rows));
    expect(made).toHaveBeenCalledTimes(2);
    expect((await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM temp.${stg}`)).getRows()).toEqual([[10]]);

    // A batch whose columns are not the table's is refused, and the table stays usable.
    const narrow = columnize([{ deviceKey: 'a', ts: 50, values: { iave1: 1 } }]);
    await expect(tables.stage(stg, narrow, ids(1))).rejects.toThrow(/holds columns .*, not /);
    await tables.stage(
      stg,
      batch(5, 100, () => false),
      ids(5),
    );
    expect(made).toHaveBeenCalledTimes(2);
    expect(
      (await conn.runAndReadAll(`SELECT count(*)::INTEGER, max(ts)::BIGINT FROM temp.${stg}`)).getRows(),
    ).toEqual([[15, 104n]]);

    // A failed append (the table gone underneath): the appender is closed, and the table made again gets a new one.
    await conn.run(`DROP TABLE temp.${stg}`);
    await expect(tables.stage(stg, b, ids(b.rows))).rejects.toThrow();
    stg = await tables.fresh(b.cols);
    await tables.stage(stg, b, ids(b.rows));
    expect(made).toHaveBeenCalledTimes(3);
    expect((await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM temp.${stg}`)).getRows()).toEqual([[10]]);

    // Released (the store closing): the appenders are closed, the tables and their rows kept.
    tables.release();
    expect((await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM temp.${stg}`)).getRows()).toEqual([[10]]);
    await tables.stage(stg, b, ids(b.rows));
    expect(made).toHaveBeenCalledTimes(4);
    await tables.dropAll();
    expect(
      (await conn.runAndReadAll(`SELECT count(*)::INTEGER FROM duckdb_tables() WHERE temporary`)).getRows(),
    ).toEqual([[0]]);
  });
});
