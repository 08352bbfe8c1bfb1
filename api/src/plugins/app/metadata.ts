/** The metadata store: the configured `Sql` (PGlite or PostgreSQL), migrated before anything uses it. */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { migrate } from '../../db/migrations.ts';
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
  return createPgliteSql({ dataDir: path.join(config.dataDir, 'meta') });
}

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
