/**
 * A real PostgreSQL server of the test's own, restarted under traffic: nothing crashes the process (a
 * checked-out transaction's connection ended by the restart, idle pooled ones), requests answer 503
 * while it is down and work again once it is back. And two processes migrating one empty database at
 * once: the second waits for the first and applies nothing twice.
 */
import { randomBytes } from 'node:crypto';
import { type PostgresServer, postgresInstalled, sleep, startPostgresServer } from '@kilowatch/testkit';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../app.ts';
import { UnavailableError } from '../errors.ts';
import { as, noTelemetryStore, signUp, TEST_CONFIG, uniqueEmail } from '../testing/helper.ts';
import { MIGRATIONS, migrate } from './migrations.ts';
import { createPostgresSql, type Sql } from './sql.ts';

const LIMITS = {
  ...TEST_CONFIG,
  accountRateLimit: { max: 10_000, windowMs: 60_000 },
  ipRateLimit: { max: 10_000, windowMs: 60_000 },
};

describe.skipIf(!postgresInstalled())('a PostgreSQL restart under traffic', () => {
  let server: PostgresServer;
  let sql: Sql;
  let app: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    server = await startPostgresServer();
    sql = await createPostgresSql({ connectionString: server.url, max: 4, connectMs: 1000, queryMs: 3000 });
    app = await buildApp({ store: noTelemetryStore(), sql, config: LIMITS });
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await sql?.close();
    server?.remove();
  });

  it('a transaction whose connection the restart ends fails with 503, and the process lives on', async () => {
    const failed = await sql
      .transaction(async (tx) => {
        await tx.query('select 1');
        await server.stop('fast');
        // The server told this idle, checked-out connection it is going away: an `error` event with no
        // query to fail. Give it the time to arrive before the next query.
        await sleep(200);
        await tx.query('select 1');
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(failed).toBeInstanceOf(UnavailableError);
    await server.start();
    // The pool hands out working connections again.
    let ok = false;
    for (let i = 0; i < 50 && !ok; i++) {
      ok = await sql.query('select 1').then(
        () => true,
        () => false,
      );
      if (!ok) await sleep(100);
    }
    expect(ok).toBe(true);
  });

  it('requests during a restart answer 503, never crash or 500, and work again after', async () => {
    const account = await signUp(app);
    const codes: number[] = [];
    let running = true;
    const traffic = async () => {
      while (running) {
        const [register, devices] = await Promise.all([
          app.inject({
            method: 'POST',
            url: '/api/register',
            payload: { email: uniqueEmail('restart'), password: 'correct horse battery', fullName: 'R' },
          }),
          as(app, account, { method: 'GET', url: '/api/devices' }),
        ]);
        codes.push(register.statusCode, devices.statusCode);
        await sleep(10);
      }
    };
    const clients = [traffic(), traffic(), traffic()];
    await sleep(300);
    const before = codes.length;
    await server.stop('fast');
    await sleep(1000);
    await server.start();
    // Until the answers are good again, then a little longer.
    let recovered = false;
    for (let i = 0; i < 100 && !recovered; i++) {
      await sleep(100);
      const recent = codes.slice(-6);
      recovered = recent.length === 6 && recent.every((c) => c === 200 || c === 201);
    }
    running = false;
    await Promise.all(clients);
    expect(before).toBeGreaterThan(0);
    expect(recovered).toBe(true);
    expect(new Set(codes.filter((c) => c !== 200 && c !== 201))).toEqual(new Set([503]));
    expect((await app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });
});

const pgUrl = inject('pgUrl');

describe.skipIf(!pgUrl)('two processes migrating an empty database at once', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const sqls: Sql[] = [];
  afterAll(async () => {
    for (const s of sqls) await s.close();
  });

  it('both start; every migration is applied once', async () => {
    // Separate pools, as separate processes would have, on a schema neither has created yet.
    for (let i = 0; i < 3; i++)
      sqls.push(await createPostgresSql({ connectionString: pgUrl!, schema, max: 2 }));
    const applied = await Promise.all(sqls.map((s) => migrate(s)));
    expect(applied.flat().sort((a, b) => a - b)).toEqual(
      MIGRATIONS.map((m) => m.version).sort((a, b) => a - b),
    );
    const { rows } = await sqls[0]!.query<{ version: number }>('select version from schema_migrations');
    expect(rows).toHaveLength(MIGRATIONS.length);
  });

  it('a lock without waiting: one process runs, the other skips; a holder that dies lets it go', async () => {
    const [a, b] = sqls as [Sql, Sql];
    // This schema's rollup lock only (other test files take advisory locks on the same server).
    const ours =
      "locktype = 'advisory' and granted and objsubid = 2 " +
      "and classid::bigint = (hashtext('kilowatch' || $1)::bigint & 4294967295) " +
      "and objid::bigint = (hashtext('rollups')::bigint & 4294967295)";
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const first = a.exclusive('rollups', () => held.then(() => 'a'), { wait: false });
    // Until the first holds it, the second may still win: wait for the lock to be taken.
    for (let i = 0; i < 100; i++) {
      const { rows } = await b.query<{ n: number }>(`select count(*)::int as n from pg_locks where ${ours}`, [
        schema,
      ]);
      if (rows[0]!.n > 0) break;
      await sleep(20);
    }
    expect(await b.exclusive('rollups', async () => 'b', { wait: false })).toEqual({ ran: false });
    // The holder's connection dies (a process killed mid-refresh): PostgreSQL lets the lock go once the
    // backend has exited, which pg_terminate_backend waits for (up to 5 s) when given a timeout.
    await b.query(
      `select pg_terminate_backend(pid, 5000) from pg_locks where ${ours} and pid <> pg_backend_pid()`,
      [schema],
    );
    expect(await b.exclusive('rollups', async () => 'b', { wait: false })).toEqual({ ran: true, value: 'b' });
    release();
    await first.catch(() => undefined);
  });

  it('group membership: a leaving member learns whether it was the last', async () => {
    const [a, b] = sqls as [Sql, Sql];
    const ma = await a.member('ingest');
    const mb = await b.member('ingest');
    expect(await ma.leave()).toBe(false);
    expect(await mb.leave()).toBe(true);
  });

  it('two apps building together on one empty schema both come up', async () => {
    const fresh = `t_${randomBytes(6).toString('hex')}`;
    const pair = await Promise.all(
      [0, 1].map(async () => createPostgresSql({ connectionString: pgUrl!, schema: fresh, max: 2 })),
    );
    sqls.push(...pair);
    const apps = pair.map((s) => buildApp({ store: noTelemetryStore(), sql: s, config: LIMITS }));
    const built = await Promise.all(apps);
    try {
      await Promise.all(built.map((a) => a.ready()));
      // Each serves a sign-up, and sees the other's account: one schema, migrated once.
      const accounts = [];
      for (const a of built) accounts.push(await signUp(a));
      for (const [i, a] of built.entries()) {
        const other = accounts[1 - i]!;
        const me = await as(a, other, { method: 'GET', url: '/api/account/userInfo' });
        expect(me.statusCode).toBe(200);
        expect(me.json()).toMatchObject({ email: other.email });
      }
      const { rows } = await pair[0]!.query<{ version: number }>('select version from schema_migrations');
      expect(rows).toHaveLength(MIGRATIONS.length);
    } finally {
      for (const a of built) await a.close();
    }
  });
});
