import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MESSAGES } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter } from './analytics/testing.ts';
import { as, buildTestApp, engines, PASSWORD, signUp, type TestApp, uniqueEmail } from './testing/helper.ts';

// Transport-level behaviour does not depend on the metadata engine: one engine, the quicker to start.
const engine = engines().includes('postgres') ? 'postgres' : 'pglite';

describe('the app: headers, errors, limits, docs', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(engine, {
      config: {
        bodyLimit: 4096,
        appVersion: '9.9.9-test',
        allowedOrigins: ['http://dashboard.example'],
        accountRateLimit: { max: 5, windowMs: 60_000 },
        ipRateLimit: { max: 12, windowMs: 60_000 },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('puts X-App-Version and security headers on every response, errors included', async () => {
    for (const res of [
      await t.app.inject({ method: 'GET', url: '/api/health' }),
      await t.app.inject({ method: 'GET', url: '/api/devices' }),
      await t.app.inject({ method: 'GET', url: '/api/nope' }),
    ]) {
      expect(res.headers['x-app-version']).toBe('9.9.9-test');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('answers unknown paths 404 with the catalogue message', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ message: MESSAGES.notFound });
  });

  it('answers malformed JSON 400 and an oversized body 413, without echoing either', async () => {
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/account/login',
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "a@b.c", "password": ',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ message: MESSAGES.malformed });
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/register',
      payload: { email: uniqueEmail(), password: PASSWORD, fullName: 'x'.repeat(10_000) },
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toEqual({ message: MESSAGES.tooLarge });
  });

  it('allows CORS only for the configured origins', async () => {
    const ok = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/account/login',
      headers: { origin: 'http://dashboard.example', 'access-control-request-method': 'POST' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('http://dashboard.example');
    const other = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/account/login',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('slows password guessing per IP and account with 429 + Retry-After, without locking the owner out', async () => {
    const victim = await signUp(t.app);
    const attacker = '198.51.100.7';
    const attempt = (remoteAddress: string, password: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/account/login',
        remoteAddress,
        payload: { email: victim.email, password },
      });
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) codes.push((await attempt(attacker, `guess ${i}`)).statusCode);
    expect(codes).toEqual([400, 400, 400, 400, 400, 429, 429]);
    const limited = await attempt(attacker, PASSWORD);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toEqual({ message: MESSAGES.tooManyRequests });
    // The owner, from their own address, still signs in.
    expect((await attempt('203.0.113.20', PASSWORD)).statusCode).toBe(200);
  });

  it('limits one address spraying many accounts (per-IP budget)', async () => {
    const ip = '198.51.100.99';
    const codes: number[] = [];
    for (let i = 0; i < 14; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/forgot_password',
        remoteAddress: ip,
        payload: { email: uniqueEmail('spray') },
      });
      codes.push(res.statusCode);
    }
    expect(codes.slice(0, 12).every((c) => c === 202)).toBe(true);
    expect(codes.slice(12)).toEqual([429, 429]);
  });

  it('limits refresh-token guessing too', async () => {
    const ip = '198.51.100.50';
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/account/refreshtoken',
        remoteAddress: ip,
        payload: { refreshToken: 'r'.repeat(43) },
      });
      codes.push(res.statusCode);
    }
    expect(codes).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it('reports health of the store and the metadata store', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'ok',
      version: '9.9.9-test',
      store: { ok: true },
      metadata: { ok: true, engine: engine === 'postgres' ? 'postgres' : 'pglite' },
    });
  });

  it('exposes API counters at /metrics', async () => {
    await t.app.inject({ method: 'GET', url: '/api/health' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(
      /kilowatch_api_responses_total\{method="GET",route="\/api\/health",status="200"\} \d+/,
    );
    const rss = Number(/^process_resident_memory_bytes (\d+)$/m.exec(res.body)?.[1]);
    expect(rss).toBeGreaterThan(10 * 2 ** 20);
    expect(res.body).toMatch(/^nodejs_heap_used_bytes \d+$/m);
    // A store without its own count of memory (this one answers nothing) adds no lines.
    expect(res.body).not.toContain('kilowatch_store_memory_bytes');
    expect(res.body).not.toContain('kilowatch_store_memory_limit_bytes');
  });

  it("adds the embedded store's memory by tag and its limit in force to /metrics", async () => {
    const store = await createDuckDbStore({ memoryLimit: '384MB', bulkMemoryLimit: '192MB' });
    const own = await buildTestApp(engine, { store });
    try {
      await store.write([{ deviceKey: 'metrics-meter', ts: Date.UTC(2026, 0, 1), values: { vave1: 230 } }]);
      const res = await own.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      const held = Number(
        /^kilowatch_store_memory_bytes\{tag="IN_MEMORY_TABLE"\} (\d+)$/m.exec(res.body)?.[1],
      );
      expect(held).toBeGreaterThan(0);
      expect(res.body).toMatch(/^kilowatch_store_temporary_bytes\{tag="BASE_TABLE"\} \d+$/m);
      expect(res.body).toMatch(/^kilowatch_store_memory_limit_bytes 384000000$/m);
      expect(res.body).toMatch(/^kilowatch_store_bulk_memory_limit_given_up 0$/m);
    } finally {
      await own.close();
      await store.close();
    }
  });

  it('serves an OpenAPI 3 document that validates and lists every route', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    const result = await new Validator().validate(doc);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`),
    );
    const expected = [
      'POST /api/account/login',
      'POST /api/account/demo',
      'POST /api/account/refreshtoken',
      'POST /api/account/verifytoken',
      'GET /api/account/userInfo',
      'POST /api/account/update',
      'GET /api/account/logout',
      'POST /api/register',
      'POST /api/forgot_password',
      'POST /api/reset_password',
      'GET /api/devices',
      'POST /api/devices',
      'GET /api/devices/{id}',
      'PUT /api/devices/{id}',
      'DELETE /api/devices/{id}',
      'GET /api/devices/{id}/notifications',
      'PUT /api/devices/{id}/notifications',
      'GET /api/devices/{id}/limits',
      'PUT /api/devices/{id}/limits',
      'POST /api/devices/{id}/meter-value',
      'GET /api/locations',
      'POST /api/locations',
      'GET /api/locations/{id}',
      'PUT /api/locations/{id}',
      'DELETE /api/locations/{id}',
      'GET /api/locations/{id}/tariffs',
      'POST /api/locations/{id}/tariffs',
      'GET /api/locations/{id}/tariffs/{tariffId}',
      'PUT /api/locations/{id}/tariffs/{tariffId}',
      'DELETE /api/locations/{id}/tariffs/{tariffId}',
      'GET /api/health',
      'GET /metrics',
    ];
    expect(ops).toEqual(expect.arrayContaining(expected));
    // Every route the app serves is documented (HEAD twins and routes marked hidden aside).
    const served = t.app.routeTable
      .filter((r) => r.method !== 'HEAD' && !r.hidden)
      .map((r) => `${r.method} ${r.url.replace(/:([A-Za-z]+)/g, '{$1}')}`);
    expect([...new Set(served)].sort()).toEqual([...new Set(ops)].sort());
    // Request bodies carry the same constraints valibot enforces.
    const limits = doc.paths['/api/devices/{id}/limits'].put.requestBody.content['application/json'].schema;
    expect(limits.required).toEqual(['warning', 'critical']);
  });

  it('serves the docs UI from local assets (no CDN)', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('swagger-ui');
    expect(page.body).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);
    const asset = await t.app.inject({ method: 'GET', url: '/api/docs/static/swagger-ui-bundle.js' });
    expect(asset.statusCode).toBe(200);
  });
});

describe('the app under failure', () => {
  it('answers 500 with the catalogue message and no internals when the metadata store fails', async () => {
    const t = await buildTestApp(engine);
    try {
      const a = await signUp(t.app);
      await t.sql.close();
      const res = await as(t.app, a, { method: 'GET', url: '/api/account/userInfo' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ message: MESSAGES.internal });
      expect(res.body).not.toMatch(/select|stack|at /i);
    } finally {
      await t.app.close();
    }
  });

  it('answers 503 busy with Retry-After, soon, when the telemetry store hangs', async () => {
    // An InfluxDB that stops answering (a stopped process) after the meter is claimed: the real InfluxDB engine
    // gives its queries two attempts of their time limit (200 ms here, 15 s by default), then the API
    // tells the client to come back instead of a 500.
    const held: ServerResponse[] = [];
    let hang = false;
    const hung = createServer((_req, res) => {
      if (hang) held.push(res);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[{"statement_id":0}]}');
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const store = await createInfluxStore({
      url: `http://127.0.0.1:${(hung.address() as AddressInfo).port}`,
      database: 'kilowatch',
      reads: { timeoutMs: 200 },
    });
    const t = await buildTestApp(engine, { store });
    try {
      const a = await signUp(t.app);
      const meter = await claimMeter(t.app, a, null);
      hang = true;
      const res = await as(t.app, a, {
        method: 'GET',
        url: `/api/devices/${meter.id}/series?params=vave1&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z`,
      });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('10');
      expect(res.json()).toEqual({ message: MESSAGES.busy });
      expect(held.length).toBe(2);
    } finally {
      await t.close();
      for (const r of held) r.destroy();
      hung.closeAllConnections();
      await new Promise<void>((r) => hung.close(() => r()));
    }
  });

  it('sheds load with 503 + Retry-After when over its pressure limits', async () => {
    const t = await buildTestApp(engine, { pressure: { maxHeapUsedBytes: 1 } });
    try {
      // The first sample is taken on an interval; wait for it with a bounded loop.
      const probe = () => t.app.inject({ method: 'POST', url: '/api/account/login', payload: {} });
      let res = await probe();
      for (let i = 0; i < 100 && res.statusCode !== 503; i++) {
        await new Promise((r) => setTimeout(r, 20));
        res = await probe();
      }
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('10');
      expect(res.json()).toEqual({ message: MESSAGES.busy });
      // Monitoring still sees the server.
      const health = await t.app.inject({ method: 'GET', url: '/api/health' });
      expect(health.statusCode).toBe(200);
      expect(health.json().load.heapUsed).toBeGreaterThan(1);
    } finally {
      await t.close();
    }
  });
});
