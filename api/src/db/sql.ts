/**
 * One small SQL interface over the two metadata engines: PGlite (embedded PostgreSQL in WASM, a
 * directory under KW_DATA_DIR) and PostgreSQL over `pg` (DATABASE_URL). Same SQL, `$n` parameters.
 */
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type pg from 'pg';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<QueryResult<T>>;
}

export interface Sql extends Queryable {
  readonly engine: 'pglite' | 'postgres';
  /** Runs several statements (migrations). */
  exec(text: string): Promise<void>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** PostgreSQL error code of a unique-constraint violation. */
export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION;
}

export interface PgliteOptions {
  /** Directory of the database; in memory when omitted. */
  dataDir?: string;
  /** Schema to create and use (tests give each file its own). */
  schema?: string;
  /** Start from a dumped data directory (`dumpDataDir`) instead of running initdb: much faster. */
  loadDataDir?: Blob;
}

export async function createPgliteSql(options: PgliteOptions = {}): Promise<Sql> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db: PGlite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
  });
  if (options.schema) {
    await db.exec(
      `create schema if not exists ${quoteIdent(options.schema)}; set search_path to ${quoteIdent(options.schema)}`,
    );
  }
  const wrap = (q: PGlite | Transaction): Queryable => ({
    async query<T>(text: string, params: readonly unknown[] = []) {
      const r = await q.query<T>(text, params as unknown[]);
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
    },
  });
  const self = wrap(db);
  return {
    engine: 'pglite',
    query: self.query,
    async exec(text) {
      await db.exec(text);
    },
    transaction(fn) {
      return db.transaction((tx) => fn(wrap(tx)));
    },
    async close() {
      if (!db.closed) await db.close();
    },
  };
}

export interface PostgresOptions {
  connectionString: string;
  /** Schema to create and use (tests give each file its own). */
  schema?: string;
  max?: number;
}

export async function createPostgresSql(options: PostgresOptions): Promise<Sql> {
  const { default: pgModule } = await import('pg');
  // bigint (epoch milliseconds, counts) as JS numbers: every value we keep fits in 2^53.
  pgModule.types.setTypeParser(20, (v) => Number(v));
  const pool: pg.Pool = new pgModule.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  if (options.schema) await pool.query(`create schema if not exists ${quoteIdent(options.schema)}`);
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(text: string, params: readonly unknown[] = []) {
      const r = await q.query(text, params as unknown[]);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
    },
  });
  const self = wrap(pool);
  return {
    engine: 'postgres',
    query: self.query,
    async exec(text) {
      await pool.query(text);
    },
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const out = await fn(wrap(client));
        await client.query('commit');
        return out;
      } catch (err) {
        await client.query('rollback').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async close() {
      await pool.end();
    },
  };
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`invalid schema name ${name}`);
  return `"${name}"`;
}
