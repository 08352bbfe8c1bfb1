/** The migration that gives each stock Tasmota suffix to one device: the first claimed of any twins. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, openSql } from '../testing/helper.ts';
import { MIGRATIONS, migrate } from './migrations.ts';
import type { Sql } from './sql.ts';

const VERSION = 239;

describe.each(engines())('stock suffix migration on %s', (engine) => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await openSql(engine);
  });
  afterAll(async () => {
    await sql?.close();
  });

  it('gives a suffix shared by devices of two accounts to the first claimed, and refuses a second holder', async () => {
    await migrate(
      sql,
      MIGRATIONS.filter((m) => m.version < VERSION),
    );
    const user = async (email: string) =>
      Number(
        (
          await sql.query<{ id: number }>(
            `insert into users (email, password_hash, full_name, country, timezone, language, created_at, updated_at)
             values ($1, 'x', 'x', 'GB', 'UTC', 'en', 0, 0) returning id`,
            [email],
          )
        ).rows[0]!.id,
      );
    const alice = await user('alice-suffix@example.com');
    const bob = await user('bob-suffix@example.com');
    const device = (userId: number, key: string, shared = false) =>
      sql.query(
        `insert into devices (user_id, device_key, mac, name, type_code, billing_start, registered_at, modified_at,
           shared_telemetry) values ($1, $2, $2, 'm', 1, '2026-01-01', 0, 0, $3)`,
        [userId, key, shared],
      );
    await device(alice, 'aabbcc112233');
    await device(bob, '111111112233');
    await device(bob, '0000000000ff');
    // A demo workspace's view of a meter holds nothing.
    await device(alice, '0000000000ff', true);
    expect(
      await migrate(
        sql,
        MIGRATIONS.filter((m) => m.version <= VERSION),
      ),
    ).toEqual([VERSION]);
    const { rows } = await sql.query<{ device_key: string; stock_suffix: string | null }>(
      'select device_key, stock_suffix from devices order by id',
    );
    expect(rows.map((r) => [r.device_key, r.stock_suffix])).toEqual([
      ['aabbcc112233', '112233'],
      ['111111112233', null],
      ['0000000000ff', '0000FF'],
      ['0000000000ff', null],
    ]);
    await expect(
      sql.query("update devices set stock_suffix = '112233' where device_key = '111111112233'"),
    ).rejects.toThrow();
  });
});
