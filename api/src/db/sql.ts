/**
 * One small SQL interface over the two metadata engines: PGlite (embedded PostgreSQL in WASM, a
 * directory under KW_DATA_DIR) and PostgreSQL over `pg` (DATABASE_URL). Same SQL, `$n` parameters.
 */

import { setFlagsFromString } from 'node:v8';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import type pg from 'pg';
import { UnavailableError } from '../errors.ts';

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
  /**
   * Runs `fn` while holding the named lock, across every process on this database (a PostgreSQL advisory
   * lock in the current schema; PGlite has one process only). `wait: false` gives up at once when
   * another process holds it (`{ ran: false }`). The lock goes with its connection: a process that dies
   * holding it releases it.
   */
  exclusive<T>(
    name: string,
    fn: () => Promise<T>,
    options?: { wait?: boolean },
  ): Promise<{ ran: true; value: T } | { ran: false }>;
  /**
   * Joins the named group of processes for as long as this one lives (a shared advisory lock on a
   * connection of its own; a process that dies leaves with its connection). `leave()` tells whether it
   * was the last member; on any doubt (PostgreSQL out of reach) it says it was.
   */
  member(name: string): Promise<{ leave(): Promise<boolean> }>;
  /** Connection pool counts for /metrics (PostgreSQL; null on PGlite, which has no pool). */
  poolStats(): { total: number; idle: number; waiting: number; max: number } | null;
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

/**
 * PostgreSQL's shared buffers inside PGlite. Its default, 128 MB, stays resident in the process; the
 * metadata (accounts, devices, locations, sessions) is a few megabytes, so 16 MB holds all of it and
 * the embedded process is ~130 MB smaller.
 */
export const PGLITE_SHARED_BUFFERS = '16MB';

/**
 * PGlite's WebAssembly is compiled by V8's baseline compiler (Liftoff) only, never tiered up to its
 * optimising one. The tier-up kept optimised code and compiler memory resident (the server: 315 → ~240 MB
 * at ready; PGlite alone: 196 → 161 MB) for no speed a user sees: a metadata query's time is PGlite's protocol and JavaScript, and
 * 6,000 point queries plus 3,000 upserts ran in the same time both ways (bench/results/footprint.md).
 * The flag is V8's, so it holds for any WebAssembly the process compiles after it; PGlite's is the only
 * WebAssembly the server runs.
 */
let liftoffOnly = false;

export async function createPgliteSql(options: PgliteOptions = {}): Promise<Sql> {
  if (!liftoffOnly) {
    setFlagsFromString('--liftoff-only');
    liftoffOnly = true;
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const defaults = (PGlite as unknown as { defaultStartParams?: string[] }).defaultStartParams;
  const db: PGlite = await PGlite.create({
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
    // Only when this PGlite says what its own start parameters are: they are replaced, not added to.
    ...(defaults ? { startParams: [...defaults, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`] } : {}),
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
    async exclusive(_name, fn) {
      // One process owns a PGlite directory: nothing to exclude.
      return { ran: true, value: await fn() };
    },
    async member() {
      return { leave: async () => true };
    },
    poolStats: () => null,
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

/** SQLSTATE classes and codes, and driver errors, that mean the server is out of reach, not a bad query. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
function unreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  // 08xxx: connection exceptions; 57P01 / 57P03: the server shutting down or not yet accepting.
  if (
    typeof code === 'string' &&
    (UNREACHABLE_CODES.has(code) || code.startsWith('08') || code === '57P01' || code === '57P03')
  )
    return true;
  return /timeout exceeded when trying to connect|Query read timeout|Connection terminated|not queryable/i.test(
    err.message,
  );
}

/** Rethrows a lost or silent server as 503 (UnavailableError); anything else as it is. */
function translated(err: unknown): unknown {
  return unreachable(err) ? new UnavailableError('PostgreSQL', err) : err;
}

export interface PostgresTimeouts {
  /** Waiting for a connection (default 5 s). */
  connectMs?: number;
  /** One query's answer (default 20 s); migrations get an hour. */
  queryMs?: number;
}

export async function createPostgresSql(options: PostgresOptions & PostgresTimeouts): Promise<Sql> {
  const { default: pgModule } = await import('pg');
  // bigint (epoch milliseconds, counts) as JS numbers: every value we keep fits in 2^53.
  pgModule.types.setTypeParser(20, (v) => Number(v));
  // A server that stops answering must not hold requests (and /api/health) forever: connections and
  // queries have time limits, and running out of them answers 503.
  const pool: pg.Pool = new pgModule.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectMs ?? 5_000,
    query_timeout: options.queryMs ?? 20_000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => {});
  if (options.schema) {
    // Two processes creating the same schema at once: the loser's duplicate key is the winner's schema.
    await pool.query(`create schema if not exists ${quoteIdent(options.schema)}`).catch((err: unknown) => {
      if (!isUniqueViolation(err)) throw translated(err);
    });
  }
  const wrap = (q: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T>(text: string, params: readonly unknown[] = []) {
      try {
        const r = await q.query(text, params as unknown[]);
        return { rows: r.rows as T[], rowCount: r.rowCount ?? r.rows.length };
      } catch (err) {
        throw translated(err);
      }
    },
  });
  const self = wrap(pool);
  return {
    engine: 'postgres',
    query: self.query,
    async exec(text) {
      try {
        // `query_timeout` per query is honoured by pg, though its types leave it out.
        await pool.query({ text, query_timeout: 3_600_000 } as pg.QueryConfig);
      } catch (err) {
        throw translated(err);
      }
    },
    async transaction(fn) {
      const client = await pool.connect().catch((err: unknown) => {
        throw translated(err);
      });
      // A connection whose rollback failed (lost, or silent) is not given back to the pool.
      let broken: Error | undefined;
      // While checked out, a client has no listener of the pool's: a server that goes away (a restart
      // ends every session with 57P01) would emit an unhandled `error` and take the process with it.
      // The query in progress fails on its own; the connection is dropped when it is released.
      const lost = (err: Error) => {
        broken ??= err;
      };
      client.on('error', lost);
      try {
        await client.query('begin');
        const out = await fn(wrap(client));
        await client.query('commit');
        return out;
      } catch (err) {
        await client.query('rollback').catch((e: unknown) => {
          broken = e instanceof Error ? e : new Error(String(e));
        });
        throw translated(err);
      } finally {
        client.off('error', lost);
        client.release(broken);
      }
    },
    async exclusive(name, fn, opts = {}) {
      const client = await pool.connect().catch((err: unknown) => {
        throw translated(err);
      });
      let broken: Error | undefined;
      const lost = (err: Error) => {
        broken ??= err;
      };
      client.on('error', lost);
      const key = ['kilowatch', name];
      let locked = false;
      try {
        // Keyed by schema too, so separate schemas (tests) on one database do not exclude each other.
        // Waiting for another process's migration may take longer than one query's time limit.
        const r = await client.query({
          text: `select ${opts.wait === false ? 'pg_try_advisory_lock' : 'pg_advisory_lock'}(hashtext($1 || current_schema()), hashtext($2)) as locked`,
          values: key,
          query_timeout: 3_600_000,
        } as pg.QueryConfig);
        locked = opts.wait === false ? r.rows[0]?.locked === true : true;
        if (!locked) return { ran: false };
        return { ran: true, value: await fn() };
      } catch (err) {
        throw translated(err);
      } finally {
        if (locked) {
          await client
            .query('select pg_advisory_unlock(hashtext($1 || current_schema()), hashtext($2))', key)
            .catch((e: unknown) => {
              broken ??= e instanceof Error ? e : new Error(String(e));
            });
        }
        client.off('error', lost);
        client.release(broken);
      }
    },
    poolStats: () => ({
      total: pool.totalCount,
      idle: pool.idleCount,
      waiting: pool.waitingCount,
      max: options.max ?? 10,
    }),
    async member(name) {
      const lock = 'hashtext($1 || current_schema()), hashtext($2)';
      const key = ['kilowatch-member', name];
      const client = await pool.connect().catch((err: unknown) => {
        throw translated(err);
      });
      client.on('error', () => {});
      try {
        await client.query(`select pg_advisory_lock_shared(${lock})`, key);
      } catch (err) {
        client.release(true);
        throw translated(err);
      }
      let left: Promise<boolean> | undefined;
      return {
        leave() {
          left ??= (async () => {
            try {
              // Out of the group, then: does anyone else still hold it?
              await client.query(`select pg_advisory_unlock_shared(${lock})`, key);
              const r = await client.query(`select pg_try_advisory_lock(${lock}) as alone`, key);
              return r.rows[0]?.alone === true;
            } catch {
              return true;
            } finally {
              client.release(true);
            }
          })();
          return left;
        },
      };
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
