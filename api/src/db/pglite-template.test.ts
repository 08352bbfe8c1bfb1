import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from './migrations.ts';
import { migratedPgliteDump } from './pglite-template.ts';
import { createPgliteSql, type Sql } from './sql.ts';

describe('the PGlite template a first start loads', () => {
  let dir: string;
  let sql: Sql;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kw-template-test-'));
    const dump = await migratedPgliteDump();
    sql = await createPgliteSql({ dataDir: path.join(dir, 'meta'), loadDataDir: new Blob([dump]) });
  }, 180_000);
  afterAll(async () => {
    await sql?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('holds every migration, so a start from it applies none', async () => {
    const { rows } = await sql.query<{ version: number }>(
      'select version from schema_migrations order by version',
    );
    expect(rows.map((r) => Number(r.version))).toEqual(
      MIGRATIONS.map((m) => m.version).sort((a, b) => a - b),
    );
    expect(await migrate(sql)).toEqual([]);
  });

  it('holds no accounts, devices or sessions', async () => {
    for (const table of ['users', 'devices', 'sessions']) {
      const { rows } = await sql.query<{ n: number }>(`select count(*)::int as n from ${table}`);
      expect(rows[0]!.n, table).toBe(0);
    }
  });
});
