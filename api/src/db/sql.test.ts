import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engines, openSql } from '../testing/helper.ts';
import { MIGRATIONS, migrate } from './migrations.ts';
import { isUniqueViolation, PGLITE_SHARED_BUFFERS, type Sql } from './sql.ts';

describe('PGlite as the metadata store', () => {
  it('keeps PGlite’s shared buffers small (they stay resident in the process)', async () => {
    const sql = await openSql('pglite');
    try {
      const { rows } = await sql.query<{ shared_buffers: string }>('show shared_buffers');
      expect(rows[0]!.shared_buffers).toBe(PGLITE_SHARED_BUFFERS);
    } finally {
      await sql.close();
    }
  });
});

describe.each(engines())('metadata store on %s', (engine) => {
  let sql: Sql;
  beforeAll(async () => {
    sql = await openSql(engine);
  });
  afterAll(async () => {
    await sql?.close();
  });

  it('applies every migration once, in order', async () => {
    const first = await migrate(sql);
    expect(first).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
    expect(await migrate(sql)).toEqual([]);
    const { rows } = await sql.query<{ version: number }>(
      'select version from schema_migrations order by version',
    );
    expect(rows.map((r) => Number(r.version))).toEqual(first);
  });

  it('returns bigint epoch milliseconds as numbers on both engines', async () => {
    const t = 1_795_000_000_123;
    const { rows } = await sql.query<{ id: number; created_at: number }>(
      `insert into users (email, password_hash, full_name, country, timezone, language, created_at, updated_at)
       values ($1, 'x', 'N', 'PL', 'Europe/Warsaw', 'en', $2, $2) returning id, created_at`,
      [`bigint-${engine}@example.com`, t],
    );
    expect(rows[0]!.created_at).toBe(t);
    expect(typeof rows[0]!.id).toBe('number');
  });

  it('rolls a failed transaction back and reports unique violations by code', async () => {
    const email = `tx-${engine}@example.com`;
    const insert = (q: Pick<Sql, 'query'>) =>
      q.query(
        `insert into users (email, password_hash, full_name, country, timezone, language, created_at, updated_at)
         values ($1, 'x', 'N', 'PL', 'Europe/Warsaw', 'en', 0, 0)`,
        [email],
      );
    const err = await sql
      .transaction(async (tx) => {
        await insert(tx);
        await insert(tx);
      })
      .catch((e: unknown) => e);
    expect(isUniqueViolation(err)).toBe(true);
    const { rows } = await sql.query('select 1 from users where email = $1', [email]);
    expect(rows).toHaveLength(0);
  });
});
