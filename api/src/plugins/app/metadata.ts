/** The metadata store: the configured `Sql` (PGlite or PostgreSQL), migrated before anything uses it. */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { migrate } from '../../db/migrations.ts';
import { unpackPgliteDump } from '../../db/pglite-template.ts';
import { createPgliteSql, createPostgresSql, type Sql } from '../../db/sql.ts';

declare module 'fastify' {
  interface FastifyInstance {
    sql: Sql;
  }
}

export async function openMetadataStore(config: {
  databaseUrl: string | undefined;
  dataDir: string;
}): Promise<Sql> {
  if (config.databaseUrl) return createPostgresSql({ connectionString: config.databaseUrl });
  // The data directory may not exist yet: with InfluxDB for telemetry, PGlite is the first to write in it.
  await mkdir(config.dataDir, { recursive: true });
  const dataDir = path.join(config.dataDir, 'meta');
  const template = existsSync(dataDir) ? undefined : pgliteTemplate();
  if (template) await unpackPgliteDump(template, dataDir);
  return createPgliteSql({ dataDir });
}

/**
 * The initialised and migrated PGlite data directory `pnpm build` dumps beside the compiled server
 * (`api/dist/pglite-initdb.tar.gz`, scripts/build.mjs, db/pglite-template.ts). A first start loads it
 * instead of running initdb in WebAssembly (10–85 s, and ~400 MB of its memory left resident) and the
 * migrations (14 s of a 57 s first start on the busy 2-core machine). Absent when the server runs from
 * its TypeScript sources: PGlite then runs initdb and the migrations as before. Unpacked natively
 * (`unpackPgliteDump`), not through PGlite's `loadDataDir`.
 */
function pgliteTemplate(): Uint8Array | undefined {
  const file = path.join(path.dirname(fileURLToPath(import.meta.url)), PGLITE_TEMPLATE);
  return existsSync(file) ? readFileSync(file) : undefined;
}

/** The template's file name beside the compiled server (scripts/build.mjs writes it). */
export const PGLITE_TEMPLATE = 'pglite-initdb.tar.gz';

export default fp(
  async (app: FastifyInstance, opts: { sql?: Sql }) => {
    const owned = !opts.sql;
    const sql = opts.sql ?? (await openMetadataStore(app.config));
    await migrate(sql);
    app.decorate('sql', sql);
    // A store handed in by the caller is closed by the caller.
    if (owned) app.addHook('onClose', () => sql.close());
  },
  { name: 'metadata', dependencies: ['config'] },
);
