/**
 * The login, forgot-password and refresh budgets hold across API processes: two app instances on one
 * real PostgreSQL database (as two replicas behind a round-robin proxy) draw on one budget per address
 * and account, not one each.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from './app.ts';
import { createPostgresSql, type Sql } from './db/sql.ts';
import { noTelemetryStore, PASSWORD, signUp, TEST_CONFIG, uniqueEmail } from './testing/helper.ts';

const pgUrl = inject('pgUrl');
const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);

describe.skipIf(!pgUrl)('rate limits shared by two API processes on one PostgreSQL', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const sqls: Sql[] = [];
  const apps: FastifyInstance[] = [];
  let now = T0;

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const sql = await createPostgresSql({ connectionString: pgUrl!, schema, max: 2 });
      sqls.push(sql);
      const app = await buildApp({
        store: noTelemetryStore(),
        sql,
        now: () => now,
        config: {
          ...TEST_CONFIG,
          accountRateLimit: { max: 4, windowMs: 60_000 },
          ipRateLimit: { max: 6, windowMs: 60_000 },
        },
      });
      await app.ready();
      apps.push(app);
    }
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
    for (const sql of sqls) await sql.close();
  });

  /** The same request to each process in turn. */
  const roundRobin = async (count: number, request: InjectOptions) => {
    const codes: number[] = [];
    for (let i = 0; i < count; i++) codes.push((await apps[i % 2]!.inject(request)).statusCode);
    return codes;
  };

  it('counts wrong passwords for one address and account once, whichever process answers', async () => {
    const victim = await signUp(apps[0]!);
    const codes = await roundRobin(6, {
      method: 'POST',
      url: '/api/account/login',
      remoteAddress: '198.51.100.7',
      payload: { email: victim.email, password: 'a guess' },
    });
    expect(codes).toEqual([400, 400, 400, 400, 429, 429]);
    // The owner from their own address is not locked out on either process.
    for (const app of apps) {
      const res = await app.inject({
        method: 'POST',
        url: '/api/account/login',
        remoteAddress: '203.0.113.20',
        payload: { email: victim.email, password: PASSWORD },
      });
      expect(res.statusCode).toBe(200);
    }
    // A new window opens once the old one has passed, on both.
    now += 60_000;
    const after = await roundRobin(2, {
      method: 'POST',
      url: '/api/account/login',
      remoteAddress: '198.51.100.7',
      payload: { email: victim.email, password: 'a guess' },
    });
    expect(after).toEqual([400, 400]);
  });

  it('holds the per-address budget across processes for one address spraying accounts', async () => {
    const codes: number[] = [];
    for (let i = 0; i < 8; i++)
      codes.push(
        (
          await apps[i % 2]!.inject({
            method: 'POST',
            url: '/api/forgot_password',
            remoteAddress: '198.51.100.99',
            payload: { email: uniqueEmail('spray') },
          })
        ).statusCode,
      );
    expect(codes).toEqual([202, 202, 202, 202, 202, 202, 429, 429]);
  });

  it('counts failed refreshes across processes', async () => {
    const codes = await roundRobin(6, {
      method: 'POST',
      url: '/api/account/refreshtoken',
      remoteAddress: '198.51.100.50',
      payload: { refreshToken: 'r'.repeat(43) },
    });
    expect(codes).toEqual([401, 401, 401, 401, 429, 429]);
  });
});
