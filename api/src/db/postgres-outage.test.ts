/**
 * PostgreSQL that stops answering, between the API and a real server: a TCP relay that can freeze (a
 * stopped or partitioned database). Requests answer 503 with Retry-After within the time limits instead
 * of hanging, /api/health answers and names the metadata store, and all is well again once it thaws.
 */
import { randomBytes } from 'node:crypto';
import { createServer, Socket as NetSocket, type Server, type Socket } from 'node:net';
import { MESSAGES } from '@kilowatch/core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../app.ts';
import { as, noTelemetryStore, signUp, TEST_CONFIG } from '../testing/helper.ts';
import { createPostgresSql, type Sql } from './sql.ts';

/** Forwards connections to `target`; `freeze()` stops passing bytes either way until `thaw()`. */
async function freezableRelay(target: URL) {
  const pairs: [Socket, Socket][] = [];
  let frozen = false;
  const server: Server = createServer((client) => {
    const upstream = new NetSocket();
    upstream.connect(Number(target.port), target.hostname);
    pairs.push([client, upstream]);
    const pass = (from: Socket, to: Socket) =>
      from.on('data', (chunk) => {
        if (frozen) return; // swallowed: the far side never hears of it
        to.write(chunk);
      });
    pass(client, upstream);
    pass(upstream, client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `postgres://${target.username}@127.0.0.1:${port}${target.pathname}`,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const pgUrl = inject('pgUrl');

describe.skipIf(!pgUrl)('the API when PostgreSQL stops answering', () => {
  let relay: Awaited<ReturnType<typeof freezableRelay>>;
  let sql: Sql;
  let app: Awaited<ReturnType<typeof buildApp>>;

  beforeAll(async () => {
    relay = await freezableRelay(new URL(pgUrl!));
    sql = await createPostgresSql({
      connectionString: relay.url,
      schema: `t_${randomBytes(6).toString('hex')}`,
      max: 4,
      connectMs: 300,
      queryMs: 500,
    });
    app = await buildApp({ store: noTelemetryStore(), sql, config: TEST_CONFIG });
    await app.ready();
  });

  afterAll(async () => {
    relay?.thaw();
    await app?.close();
    await sql?.close();
    await relay?.close();
  });

  it('answers 503 with Retry-After, and health says which store, until it answers again', async () => {
    const a = await signUp(app);
    expect((await as(app, a, { method: 'GET', url: '/api/devices' })).statusCode).toBe(200);
    relay.freeze();
    const res = await as(app, a, { method: 'GET', url: '/api/devices' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('10');
    expect(res.json()).toEqual({ message: MESSAGES.busy });
    const health = await app.inject({ method: 'GET', url: '/api/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json().metadata).toMatchObject({ ok: false, engine: 'postgres' });
    relay.thaw();
    // The connections that timed out were let go; new ones work.
    let after = await as(app, a, { method: 'GET', url: '/api/devices' });
    for (let i = 0; i < 20 && after.statusCode !== 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await as(app, a, { method: 'GET', url: '/api/devices' });
    }
    expect(after.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });
});
