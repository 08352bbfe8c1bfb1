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
    // A workspace of the visitor's own, not the template itself.
    expect(auth.user.email).toMatch(/^demo-[0-9a-f]{12}@kilowatch\.local$/);

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
    // The home's energy flows: the grid connection, the PV and the sub-meters (the heat pump among them).
    const roles = Object.fromEntries(devices.map((d: { name: string; role: string }) => [d.name, d.role]));
    expect(roles).toMatchObject({
      'Grid connection': 'grid',
      'Roof PV 8 kWp': 'production',
      'Heat pump meter': 'consumer',
      'House main meter': 'consumer',
    });
  });

  it('is put back as shipped at start when an older release let visitors deface it', async () => {
    const first = await ensureDemoAccount(t.app, DEMO_DEVICES);
    const template = (await t.app.accounts.findUserByEmail(DEMO_EMAIL))!;
    // What a visitor of the shared demo could do: a session kept, a device renamed to markup, the profile
    // changed, a location deleted, a stranger's meter claimed into it.
    const session = await t.app.sessions.start(template, false);
    const [device] = await t.app.devices.list(template.id);
    await t.app.devices.update(template.id, device!.id, {
      name: '<b>pwned</b>',
      friendlyName: '',
      locationId: null,
      tariffId: null,
      billingStart: device!.billingStart,
      billingMonths: 1,
    });
    await t.app.accounts.updateProfile(template.id, {
      fullName: 'Defaced',
      country: 'DE',
      timezone: 'Europe/Berlin',
      language: 'pl',
    });
    await t.app.locations.remove(template.id, first.locationIds[1]!);
    await t.app.devices.claim(template.id, {
      deviceKey: 'aabbcc20b999',
      mac: 'AA:BB:CC:20:B9:99',
      name: 'Stranger',
      friendlyName: '',
      model: '',
      typeCode: 1,
      phases: 3,
      locationId: null,
      billingStart: '2026-01-01',
    });

    const named = async (name: string) =>
      (await t.app.devices.list(template.id)).find((d) => d.name === name)!;
    for (const [name, role] of [
      ['Grid connection', 'consumer'],
      ['Heat pump meter', 'grid'],
    ] as const) {
      const d = await named(name);
      await t.app.devices.update(template.id, d.id, {
        name: d.name,
        friendlyName: d.friendlyName,
        locationId: d.location?.id ?? null,
        tariffId: null,
        billingStart: d.billingStart,
        billingMonths: 1,
        role,
      });
    }
    expect((await named('Heat pump meter')).role).toBe('grid');

    const restored = await ensureDemoAccount(t.app, DEMO_DEVICES);
    expect(restored.deviceIds).toEqual(first.deviceIds);
    const user = (await t.app.accounts.findUserById(template.id))!;
    expect([user.fullName, user.country, user.timezone, user.language]).toEqual([
      'Demo User',
      'PL',
      'Europe/Warsaw',
      'en',
    ]);
    expect((await t.app.locations.list(template.id)).map((l) => l.name)).toEqual(['Home', 'London flat']);
    const list = await t.app.devices.list(template.id);
    expect(list.map((d) => d.name).sort()).toEqual(DEMO_DEVICES.map((d) => d.name).sort());
    expect(list.every((d) => d.location && d.tariff)).toBe(true);
    // A release before roles made the heat pump, claimed first, the home's grid meter: the start puts
    // the grid role on the grid connection.
    const byName = (name: string) => list.find((d) => d.name === name)!;
    expect([byName('Heat pump meter').role, byName('Grid connection').role]).toEqual(['consumer', 'grid']);
    expect(await t.app.sessions.verify(session.token)).toBeNull();
    // Restored once, it stays put: the next start changes nothing.
    expect(await ensureDemoAccount(t.app, DEMO_DEVICES)).toEqual(restored);
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
