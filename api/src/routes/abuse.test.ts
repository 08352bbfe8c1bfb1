/**
 * Requests meant to stall or break the API, through the real app on real DuckDB: every route refuses a
 * range it cannot answer before doing any work, and a read that exceeds its time budget is answered
 * 503 instead of being waited for.
 */
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Meter, userWithMeter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, type TestApp } from '../testing/helper.ts';

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
