/**
 * The metadata database a first start begins from: a PGlite data directory, initialised and with every
 * migration applied, dumped as a gzipped tar. `pnpm build` writes it beside the compiled server
 * (scripts/build.mjs, `api/dist/pglite-initdb.tar.gz`) and a first start loads it
 * (plugins/app/metadata.ts), so it runs neither initdb nor the migrations in WebAssembly: together they
 * were most of a first start (15 s and 14 s of 57 s on the shared 2-core machine). `migrate` at start
 * then finds nothing to do, and still applies migrations added after the dump.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate } from './migrations.ts';
import { createPgliteSql } from './sql.ts';

export async function migratedPgliteDump(): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kw-pglite-template-'));
  try {
    const sql = await createPgliteSql({ dataDir: dir });
    await migrate(sql);
    await sql.close();
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create({ dataDir: dir });
    const dump = await db.dumpDataDir('gzip');
    await db.close();
    return new Uint8Array(await dump.arrayBuffer());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
