/** The migration that gives every device a role: its type's, one grid meter per location (the first claimed). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, openSql } from '../testing/helper.ts';
import { MIGRATIONS, migrate } from './migrations.ts';
import type { Sql } from './sql.ts';

const VERSION = 420;

describe.each(engines())('device role migration on %s', (engine) => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await openSql(engine);
  });
  afterAll(async () => {
    await sql?.close();
  });

  it('gives each device its type’s role, the first energy meter of a location its grid meter', async () => {
    await migrate(
      sql,
      MIGRATIONS.filter((m) => m.version < VERSION),
    );
    const userId = Number(
      (
        await sql.query<{ id: number }>(
          `insert into users (email, password_hash, full_name, country, timezone, language, created_at, updated_at)
           values ('roles@example.com', 'x', 'x', 'PL', 'Europe/Warsaw', 'pl', 0, 0) returning id`,
        )
      ).rows[0]!.id,
    );
    const location = async (name: string) =>
      Number(
        (
          await sql.query<{ id: number }>(
            `insert into locations (user_id, name, timezone, created_at, updated_at)
             values ($1, $2, 'Europe/Warsaw', 0, 0) returning id`,
            [userId, name],
          )
        ).rows[0]!.id,
      );
    const home = await location('Home');
    const cabin = await location('Cabin');
    let seq = 0;
    const device = (typeCode: number, locationId: number | null) =>
      sql.query(
        `insert into devices (user_id, device_key, mac, name, type_code, location_id, billing_start, registered_at,
           modified_at) values ($1, $2, $2, 'm', $3, $4, '2026-01-01', 0, 0)`,
        [userId, `aabbcc0000${(++seq).toString(16).padStart(2, '0')}`, typeCode, locationId],
      );
    await device(1, home);
    await device(16, home);
    await device(13, home);
    await device(10, home);
    await device(17, home);
    await device(13, cabin);
    await device(16, null);
    await device(13, null);
    expect(
      await migrate(
        sql,
        MIGRATIONS.filter((m) => m.version <= VERSION),
      ),
    ).toEqual([VERSION]);
    const { rows } = await sql.query<{ role: string }>('select role from devices order by id');
    expect(rows.map((r) => r.role)).toEqual([
      'consumer',
      'grid',
      'consumer',
      'production',
      'consumer',
      'grid',
      'grid',
      'grid',
    ]);
    // The database itself holds one grid meter per location, and only the four roles.
    await expect(
      sql.query("update devices set role = 'grid' where type_code = 13 and location_id = $1", [home]),
    ).rejects.toThrow();
    await expect(sql.query("update devices set role = 'battery' where type_code = 1")).rejects.toThrow();
  });
});
