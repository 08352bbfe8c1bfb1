import { DEMO_DEVICES } from '@kilowatch/ingest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDemoAccount } from './demo.ts';
import { DEMO_EMAIL } from './routes/account.ts';
import { as, buildTestApp, duckDbStore, engines, type TestApp } from './testing/helper.ts';

const engine = engines().includes('postgres') ? 'postgres' : 'pglite';

describe('the demo account', () => {
  let t: TestApp;
  let store: Awaited<ReturnType<typeof duckDbStore>>;
  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp(engine, { store, config: { demo: true } });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  it('is answered 404 until it exists', async () => {
    expect((await t.app.inject({ method: 'POST', url: '/api/account/demo', payload: {} })).statusCode).toBe(
      404,
    );
  });

  it('is created once with two locations in different zones, tariffs and one meter of each type', async () => {
    const first = await ensureDemoAccount(t.app, DEMO_DEVICES);
    const again = await ensureDemoAccount(t.app, DEMO_DEVICES);
    expect(again).toEqual(first);

    const res = await t.app.inject({ method: 'POST', url: '/api/account/demo', payload: {} });
    expect(res.statusCode).toBe(200);
    const auth = res.json();
    expect(auth.user.email).toBe(DEMO_EMAIL);

    const locations = (await as(t.app, auth, { method: 'GET', url: '/api/locations' })).json();
    expect(locations.map((l: { timezone: string }) => l.timezone).sort()).toEqual([
      'Europe/London',
      'Europe/Warsaw',
    ]);
    expect(locations.every((l: { tariffId: number | null }) => l.tariffId !== null)).toBe(true);

    const devices = (await as(t.app, auth, { method: 'GET', url: '/api/devices' })).json();
    expect(
      devices.map((d: { typeCode: number }) => d.typeCode).sort((a: number, b: number) => a - b),
    ).toEqual([...DEMO_DEVICES.map((d) => d.typeCode)].sort((a, b) => a - b));
    expect(devices.map((d: { typeCode: number }) => d.typeCode)).toEqual(
      expect.arrayContaining([10, 13, 16, 17]),
    );
    expect(devices.every((d: { location: unknown; tariff: unknown }) => d.location && d.tariff)).toBe(true);
  });

  it('cannot be entered with a password nor reset', async () => {
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/account/login',
      payload: { email: DEMO_EMAIL, password: 'anything at all' },
    });
    expect(login.statusCode).toBe(400);
    const before = t.mails.length;
    await t.app.inject({ method: 'POST', url: '/api/forgot_password', payload: { email: DEMO_EMAIL } });
    expect(t.mails.length).toBe(before);
  });
});
