/**
 * Test helpers: the real app over a real metadata store (PGlite in memory, or a fresh schema on the
 * shared PostgreSQL server), driven with `inject`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createDuckDbStore, StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { type BuildAppOptions, buildApp } from '../app.ts';
import type { AppConfig } from '../config.ts';
import { createPgliteSql, createPostgresSql, type Sql } from '../db/sql.ts';
import type { MailMessage } from '../plugins/app/mailer.ts';

export type Engine = 'pglite' | 'postgres';

/** PGlite always; PostgreSQL when the global setup started it. */
export function engines(): Engine[] {
  return inject('pgUrl') ? ['pglite', 'postgres'] : ['pglite'];
}

export async function openSql(engine: Engine): Promise<Sql> {
  if (engine === 'pglite') {
    const dump = inject('pgliteDump');
    return createPgliteSql(dump ? { loadDataDir: new Blob([readFileSync(dump)]) } : {});
  }
  const url = inject('pgUrl');
  if (!url) throw new Error('PostgreSQL is not running');
  return createPostgresSql({ connectionString: url, schema: `t_${randomBytes(6).toString('hex')}`, max: 4 });
}

/** The embedded DuckDB engine in memory. */
export function duckDbStore(): Promise<TelemetryStore> {
  return createDuckDbStore();
}

/** A store that answers nothing: for suites that never touch telemetry (accounts, locations). */
export function noTelemetryStore(): TelemetryStore {
  const fail = async (): Promise<never> => {
    throw new StoreError('no telemetry store in this test', 'configuration');
  };
  return {
    engine: 'duckdb',
    write: fail,
    readRaw: fail,
    streamRaw: () => ({
      [Symbol.asyncIterator]: () => ({ next: fail }),
    }),
    series: fail,
    energy: fail,
    latest: fail,
    refreshRollups: fail,
    deleteDevice: fail,
    deleteReadings: fail,
    devices: fail,
    health: async () => ({ ok: true, engine: 'duckdb' }),
    close: async () => {},
  };
}

/** Fast scrypt for tests; production uses OWASP's N = 2^17. */
export const TEST_CONFIG: Partial<AppConfig> = { scrypt: { N: 1024, r: 8, p: 1 }, maxEventLoopDelayMs: 0 };

export interface TestApp {
  app: FastifyInstance;
  sql: Sql;
  mails: MailMessage[];
  /** The app's clock now. */
  now(): number;
  /** Moves the app's clock. */
  advance(ms: number): void;
  close(): Promise<void>;
}

export async function buildTestApp(
  engine: Engine,
  options: Partial<BuildAppOptions> & { config?: Partial<AppConfig> } = {},
): Promise<TestApp> {
  const sql = await openSql(engine);
  const mails: MailMessage[] = [];
  let skew = 0;
  // The caller's clock when it gives one (a test that says "now is 2026-11-03" means it), else the real one.
  const clock = options.now ?? Date.now;
  const app = await buildApp({
    store: noTelemetryStore(),
    ...options,
    sql,
    config: { ...TEST_CONFIG, ...options.config },
    mailer: { send: async (m) => void mails.push(m) },
    now: () => clock() + skew,
  });
  await app.ready();
  return {
    app,
    sql,
    mails,
    now: () => clock() + skew,
    advance(ms) {
      skew += ms;
    },
    async close() {
      await app.close();
      await sql.close();
    },
  };
}

let counter = 0;
export function uniqueEmail(prefix = 'user'): string {
  counter++;
  return `${prefix}.${counter}.${randomBytes(3).toString('hex')}@example.com`;
}

export const PASSWORD = 'correct horse battery';

export interface Account {
  email: string;
  token: string;
  refreshToken: string;
  userId: number;
}

export async function signUp(app: FastifyInstance, email = uniqueEmail()): Promise<Account> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/register',
    payload: { email, password: PASSWORD, fullName: 'Test User' },
  });
  if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
  const body = res.json() as { token: string; refreshToken: string; user: { id: number } };
  return { email, token: body.token, refreshToken: body.refreshToken, userId: body.user.id };
}

/** `inject` with the account's bearer token. */
export function as(
  app: FastifyInstance,
  account: { token: string },
  opts: InjectOptions,
): Promise<LightMyRequestResponse> {
  return app.inject({ ...opts, headers: { ...opts.headers, authorization: `Bearer ${account.token}` } });
}
