import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS, migrate } from './migrations.ts';
import { migratedPgliteDump, unpackPgliteDump } from './pglite-template.ts';
import { createPgliteSql, type Sql } from './sql.ts';

describe('the PGlite template a first start loads', () => {
  let dir: string;
  let sql: Sql;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kw-template-test-'));
    const dump = await migratedPgliteDump();
    // As a first start does (plugins/app/metadata.ts): unpacked, then opened as an existing data dir.
    await unpackPgliteDump(dump, path.join(dir, 'meta'));
    sql = await createPgliteSql({ dataDir: path.join(dir, 'meta') });
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

  it('leaves nothing half unpacked beside the data directory', async () => {
    expect(existsSync(path.join(dir, 'meta', 'PG_VERSION'))).toBe(true);
    expect(existsSync(path.join(dir, 'meta.unpacking'))).toBe(false);
  });

  it('holds no accounts, devices or sessions', async () => {
    for (const table of ['users', 'devices', 'sessions']) {
      const { rows } = await sql.query<{ n: number }>(`select count(*)::int as n from ${table}`);
      expect(rows[0]!.n, table).toBe(0);
    }
  });
});

describe('unpacking a template', () => {
  /** A one-file tar archive, gzipped. */
  const archive = (name: string, body: string) => {
    const header = Buffer.alloc(512);
    header.write(name, 0, 'utf8');
    header.write(`${Buffer.byteLength(body).toString(8).padStart(11, '0')}\0`, 124, 'ascii');
    header.write('0', 156, 'ascii');
    const data = Buffer.alloc(Math.ceil(Buffer.byteLength(body) / 512) * 512);
    data.write(body, 0, 'utf8');
    return gzipSync(Buffer.concat([header, data, Buffer.alloc(1024)]));
  };

  it('writes the files it holds', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kw-unpack-'));
    try {
      await unpackPgliteDump(archive('/base/PG_VERSION', '17\n'), path.join(dir, 'meta'));
      const { readFile } = await import('node:fs/promises');
      expect(await readFile(path.join(dir, 'meta', 'base', 'PG_VERSION'), 'utf8')).toBe('17\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a path outside the data directory and leaves no data directory', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'kw-unpack-'));
    try {
      await expect(unpackPgliteDump(archive('../../evil', 'x'), path.join(dir, 'meta'))).rejects.toThrow(
        /outside its directory/,
      );
      expect(existsSync(path.join(dir, 'meta'))).toBe(false);
      expect(existsSync(path.join(dir, 'evil'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
