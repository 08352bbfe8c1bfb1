/**
 * Requests meant to stall or break the API, through the real app on real DuckDB: every route refuses a
 * range it cannot answer before doing any work, and a read that exceeds its time budget is answered
 * 503 instead of being waited for.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInfluxStore } from '@kilowatch/influx';
import { influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, type Meter, userWithMeter } from '../analytics/testing.ts';
import { buildApp } from '../app.ts';
import {
  type Account,
  as,
  buildTestApp,
  engines,
  noTelemetryStore,
  TEST_CONFIG,
  type TestApp,
} from '../testing/helper.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const WIDE = 'from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59Z';

describe('ranges are checked before any work', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let account: Account;
  let meter: Meter;

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, now: () => NOW });
    ({ account, meter } = await userWithMeter(t.app));
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const get = (url: string) => as(t.app, account, { method: 'GET', url });

  it.each([
    [
      'energy by day over ten thousand years',
      (id: number) => `/api/devices/${id}/energy?${WIDE}&interval=1d`,
    ],
    [
      'energy by month over ten thousand years',
      (id: number) => `/api/devices/${id}/energy?${WIDE}&interval=1mo`,
    ],
    ['voltage quality over ten thousand years', (id: number) => `/api/devices/${id}/voltage-quality?${WIDE}`],
    ['series', (id: number) => `/api/devices/${id}/series?params=vave1&${WIDE}&interval=1d`],
    ['heatmap', (id: number) => `/api/devices/${id}/heatmap?param=eai&kind=yearly&${WIDE}`],
    ['data log', (id: number) => `/api/devices/${id}/readings?${WIDE}`],
    ['consumption table', (id: number) => `/api/analytics/consumption?deviceIds=${id}&${WIDE}&interval=1mo`],
  ])('%s answers 400 "Data range is too long."', async (_name, url) => {
    const res = await get(url(meter.id));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message: 'Data range is too long.' });
  });

  it('a consumption table of more than 100,000 rows is too long', async () => {
    const more = [
      await claimMeter(t.app, account, null, 'Second'),
      await claimMeter(t.app, account, null, 'Third'),
    ];
    const ids = [meter.id, ...more.map((m) => m.id)].join(',');
    // Three meters by day over 130 years: 142,000 rows, though each series alone is within its limit.
    const res = await get(
      `/api/analytics/consumption?deviceIds=${ids}&from=1970-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&interval=1d`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ message: 'Data range is too long.' });
    const month = await get(
      `/api/analytics/consumption?deviceIds=${meter.id}&from=2000-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&interval=1mo`,
    );
    expect(month.statusCode).toBe(200);
  });

  it('names the field outside 1970..2099', async () => {
    const early = await get(
      `/api/devices/${meter.id}/energy?from=1969-12-31T23:59:59Z&to=2026-01-01T00:00:00Z&interval=1mo`,
    );
    expect(early.statusCode).toBe(400);
    expect(early.json()).toEqual({
      message: 'Data range is too long.',
      errors: { from: ['Data range is too long.'] },
    });
    const late = await get(
      `/api/devices/${meter.id}/energy?from=2026-01-01T00:00:00Z&to=2100-01-01T00:00:01Z&interval=1mo`,
    );
    expect(late.json()).toEqual({
      message: 'Data range is too long.',
      errors: { to: ['Data range is too long.'] },
    });
  });

  it('monthly energy over the whole allowed window still answers', async () => {
    const res = await get(
      `/api/devices/${meter.id}/energy?from=1970-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&interval=1mo`,
    );
    expect(res.statusCode).toBe(200);
    const body = res.json() as { t: number[] };
    expect(body.t.length).toBeGreaterThanOrEqual(130 * 12);
    expect(body.t.length).toBeLessThanOrEqual(130 * 12 + 1);
  });

  it('voltage quality over more than 100,000 ten-minute windows is too long, just under is fine', async () => {
    const from = Date.parse('2024-01-01T00:00:00Z');
    const over = new Date(from + 100_001 * 600_000).toISOString();
    const under = new Date(from + 100_000 * 600_000).toISOString();
    const a = await get(`/api/devices/${meter.id}/voltage-quality?from=2024-01-01T00:00:00Z&to=${over}`);
    expect(a.statusCode).toBe(400);
    expect(a.json()).toMatchObject({ message: 'Data range is too long.' });
    const b = await get(`/api/devices/${meter.id}/voltage-quality?from=2024-01-01T00:00:00Z&to=${under}`);
    expect(b.statusCode).toBe(200);
  });
});

describe('a store read past its time budget', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let account: Account;
  let meter: Meter;
  let release: () => void = () => {};

  beforeAll(async () => {
    store = await createDuckDbStore();
    // The real store, except that its series reads hang until released: a store stuck on a query.
    const stuck = new Promise<void>((r) => {
      release = r;
    });
    const hanging: TelemetryStore = Object.assign(Object.create(store) as TelemetryStore, {
      series: async (...args: Parameters<TelemetryStore['series']>) => {
        await stuck;
        return store.series(...args);
      },
    });
    t = await buildTestApp('pglite', { store: hanging, now: () => NOW, queryBudgetMs: 200 });
    ({ account, meter } = await userWithMeter(t.app));
  });
  afterAll(async () => {
    release();
    await t?.close();
    await store?.close();
  });

  it('answers 503 busy with Retry-After instead of waiting', async () => {
    const res = await as(t.app, account, {
      method: 'GET',
      url: `/api/devices/${meter.id}/series?params=vave1&from=2026-11-19T00:00:00Z&to=2026-11-20T00:00:00Z`,
    });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ message: 'The server is busy. Try again later.' });
    expect(res.headers['retry-after']).toBeDefined();
  });
});

for (const engine of engines()) {
  describe(`ids and text PostgreSQL cannot hold, on ${engine}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let account: Account;
    let meter: Meter;
    let locationId: number;

    beforeAll(async () => {
      store = await createDuckDbStore();
      t = await buildTestApp(engine, { store, now: () => NOW });
      ({ account, meter, locationId } = await userWithMeter(t.app));
    });
    afterAll(async () => {
      await t?.close();
      await store?.close();
    });

    it('every /:id route answers 404 for ids from 2^31 on, never 500', async () => {
      const routes = t.app.routeTable.filter(
        (r) => r.url.includes('/:') && r.method !== 'HEAD' && r.url.startsWith('/api/'),
      );
      expect(routes.length).toBeGreaterThan(20);
      for (const id of ['2147483648', '99999999999', '999999999999999']) {
        for (const r of routes) {
          const url = `${r.url.replace(/:[A-Za-z]+/g, id)}?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&deviceId=${meter.id}&param=eai&params=eai1`;
          const res = await as(t.app, account, {
            method: r.method as 'GET',
            url,
            ...(r.method === 'GET' || r.method === 'DELETE' ? {} : { payload: {} }),
          });
          expect({ route: `${r.method} ${r.url}`, status: res.statusCode }).toEqual({
            route: `${r.method} ${r.url}`,
            status: 404,
          });
          expect(res.json()).toEqual({ message: 'Seems there is nothing here' });
        }
      }
      // The largest id PostgreSQL holds is an id like any other: unknown → 404.
      const max = await as(t.app, account, { method: 'GET', url: '/api/devices/2147483647' });
      expect(max.statusCode).toBe(404);
    });

    it('ids from 2^31 on in query strings, cursors and bodies answer 400 or 404', async () => {
      const big = 2147483648;
      const cases = [
        {
          method: 'GET',
          url: `/api/analytics/consumption?deviceIds=${big}&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z`,
        },
        {
          method: 'GET',
          url: `/api/tariffs/compare?deviceId=${big}&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z`,
        },
        { method: 'GET', url: `/api/notifications?cursor=${big}` },
        {
          method: 'POST',
          url: '/api/exports',
          payload: {
            deviceIds: [big],
            params: 'all',
            from: '2026-11-01T00:00:00Z',
            to: '2026-11-02T00:00:00Z',
            format: 'csv',
          },
        },
        {
          method: 'POST',
          url: '/api/comparisons',
          payload: { name: 'Big ids', members: [{ deviceId: big, param: 'vave1' }], grouped: false },
        },
        {
          method: 'PUT',
          url: `/api/devices/${meter.id}`,
          payload: { name: 'M', friendlyName: 'M', locationId: 1e300, tariffId: null },
        },
        {
          method: 'PUT',
          url: `/api/devices/${meter.id}`,
          payload: { name: 'M', friendlyName: 'M', locationId: big, tariffId: null },
        },
        {
          method: 'PUT',
          url: `/api/devices/${meter.id}`,
          payload: { name: 'M', friendlyName: 'M', locationId, tariffId: big },
        },
        {
          method: 'POST',
          url: '/api/devices',
          payload: { mac: 'a0:b1:c2:ff:ff:01', name: 'X', typeCode: 1, locationId: 1e300 },
        },
        {
          method: 'PUT',
          url: `/api/locations/${locationId}`,
          payload: { name: 'Home', timezone: 'Europe/Warsaw', tariffId: big },
        },
      ] as const;
      for (const c of cases) {
        const res = await as(t.app, account, c);
        expect({ url: c.url, ok: [400, 404].includes(res.statusCode) }).toEqual({ url: c.url, ok: true });
        expect(typeof (res.json() as { message: string }).message).toBe('string');
      }
    });

    it('a NUL character in any text field answers 400, and nothing is stored', async () => {
      const cases = [
        {
          method: 'PUT',
          url: `/api/devices/${meter.id}`,
          payload: { name: 'a\u0000b', friendlyName: 'M', locationId, tariffId: null },
        },
        { method: 'POST', url: '/api/locations', payload: { name: 'Home\u0000', timezone: 'Europe/Warsaw' } },
        {
          method: 'POST',
          url: '/api/account/update',
          payload: { fullName: 'x\u0000', country: 'PL', timezone: 'Europe/Warsaw', language: 'en' },
        },
        {
          method: 'POST',
          url: '/api/comparisons',
          payload: { name: 'ab\u0000cd', members: [{ deviceId: meter.id, param: 'vave1' }], grouped: false },
        },
        {
          method: 'POST',
          url: '/api/account/login',
          payload: { email: 'a\u0000@example.com', password: 'whatever1' },
        },
        { method: 'POST', url: '/api/forgot_password', payload: { email: 'a\u0000@example.com' } },
        {
          method: 'GET',
          url: `/api/devices/${meter.id}/readings?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&cursor=%00`,
        },
      ] as const;
      for (const c of cases) {
        const res = await as(t.app, account, c);
        expect({ url: c.url, status: res.statusCode }).toEqual({ url: c.url, status: 400 });
        expect((res.json() as { message: string }).message).toEqual(expect.any(String));
      }
      const device = await as(t.app, account, { method: 'GET', url: `/api/devices/${meter.id}` });
      expect((device.json() as { name: string }).name).not.toContain('\u0000');
    });

    it('a URL the router cannot read answers in the contract shape', async () => {
      for (const url of ['/%', '/api/devices/%', '/api/%E0%A4%A']) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ message: 'The request could not be read.' });
        expect(res.headers['x-app-version']).toBeDefined();
      }
    });
  });
}

describe('security headers', () => {
  it('over plain HTTP (any host name on a LAN) the policy never asks to upgrade to https', async () => {
    const t = await buildTestApp('pglite', { config: { publicUrl: 'http://kilowatch.local:8080' } });
    try {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/health',
        headers: { host: 'kilowatch.local:8080' },
      });
      const csp = String(res.headers['content-security-policy']);
      expect(csp).not.toContain('upgrade-insecure-requests');
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).toContain("frame-ancestors 'self'");
      expect(res.headers['strict-transport-security']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('served over HTTPS the policy upgrades and HSTS is sent', async () => {
    const t = await buildTestApp('pglite', { config: { publicUrl: 'https://kilowatch.example.com' } });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/api/health' });
      const csp = String(res.headers['content-security-policy']);
      expect(csp).toContain('upgrade-insecure-requests');
      expect(csp).toContain("default-src 'self'");
      expect(res.headers['strict-transport-security']).toContain('max-age=');
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(influxSkipReason() !== null)('data-log cursors on InfluxDB', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let server: Awaited<ReturnType<typeof startInfluxServer>>;
  let account: Account;
  let meter: Meter;

  beforeAll(async () => {
    server = await startInfluxServer();
    store = await createInfluxStore({ url: server.url, database: server.database });
    t = await buildTestApp('pglite', { store, now: () => NOW });
    ({ account, meter } = await userWithMeter(t.app));
    await store.write([
      { deviceKey: meter.deviceKey, ts: Date.parse('2026-11-01T10:00:00Z'), values: { vave1: 230 } },
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
    await server?.stop();
  });

  it('a cursor beyond the last instant InfluxDB holds answers 400, a real one pages on', async () => {
    const url = (cursor: string) =>
      `/api/devices/${meter.id}/readings?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&cursor=${cursor}`;
    for (const cursor of ['9999999999999999', '9223372036854']) {
      const res = await as(t.app, account, { method: 'GET', url: url(cursor) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        message: 'The request could not be read.',
        errors: { cursor: ['The request could not be read.'] },
      });
    }
    const first = await as(t.app, account, { method: 'GET', url: url('') });
    expect(first.statusCode).toBe(200);
    expect((first.json() as { items: unknown[] }).items).toHaveLength(1);
  });
});

describe('data-log cursors on DuckDB', () => {
  it('a cursor past every reading pages to nothing', async () => {
    const store = await createDuckDbStore();
    const t = await buildTestApp('pglite', { store, now: () => NOW });
    try {
      const { account, meter } = await userWithMeter(t.app);
      const res = await as(t.app, account, {
        method: 'GET',
        url: `/api/devices/${meter.id}/readings?from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z&cursor=ts:99999999999999999999`,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ items: [], nextCursor: null });
    } finally {
      await t.close();
      await store.close();
    }
  });
});

describe('starting without DATABASE_URL in a data directory that does not exist yet', () => {
  it('creates the directory for the embedded metadata store (InfluxDB deployments have no DuckDB file)', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'kw-data-'));
    const dataDir = path.join(root, 'not', 'yet', 'there');
    const app = await buildApp({
      store: noTelemetryStore(),
      config: { ...TEST_CONFIG, dataDir, databaseUrl: undefined },
    });
    try {
      await app.ready();
      const res = await app.inject({
        method: 'POST',
        url: '/api/register',
        payload: { email: 'first@example.com', password: 'correct horse battery', fullName: 'First' },
      });
      expect(res.statusCode).toBe(201);
      expect(existsSync(path.join(dataDir, 'meta'))).toBe(true);
    } finally {
      await app.close();
      await rm(root, { recursive: true, force: true });
    }
  }, 180_000);
});
