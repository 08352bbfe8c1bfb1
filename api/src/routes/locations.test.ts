import { MESSAGES } from '@kilowatch/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Account, as, buildTestApp, engines, signUp, type TestApp } from '../testing/helper.ts';

describe.each(engines())('locations and tariffs on %s', (engine) => {
  let t: TestApp;
  let owner: Account;
  let stranger: Account;
  beforeAll(async () => {
    t = await buildTestApp(engine);
    owner = await signUp(t.app);
    stranger = await signUp(t.app);
  });
  afterAll(async () => {
    await t?.close();
  });

  const tariffBody = {
    name: 'G12w Tauron 2026',
    group: 'G12w',
    operator: 'Tauron',
    zone1Price: 1.02,
    zone2Price: 0.61,
    fixedPrice: 12.5,
    validFrom: '2026-01-01',
  };

  async function newLocation(account: Account, body: Record<string, unknown> = {}) {
    const res = await as(t.app, account, {
      method: 'POST',
      url: '/api/locations',
      payload: {
        name: 'Home',
        code: 'H1',
        address: 'Długa 1',
        city: 'Gdańsk',
        timezone: 'Europe/Warsaw',
        ...body,
      },
    });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: number; name: string; tariffId: number | null };
  }

  it('creates, lists, reads, edits and deletes a location', async () => {
    const a = await signUp(t.app);
    const loc = await newLocation(a);
    expect(loc).toEqual({
      id: expect.any(Number),
      name: 'Home',
      code: 'H1',
      address: 'Długa 1',
      city: 'Gdańsk',
      timezone: 'Europe/Warsaw',
      tariffId: null,
      settlement: { scheme: 'none', installedKw: null, since: null },
    });
    await newLocation(a, { name: 'Cottage', timezone: 'Europe/London', code: undefined });
    const list = (await as(t.app, a, { method: 'GET', url: '/api/locations' })).json();
    expect(list.map((l: { name: string }) => l.name)).toEqual(['Home', 'Cottage']);
    expect(list[1].code).toBe('');
    expect((await as(t.app, a, { method: 'GET', url: `/api/locations/${loc.id}` })).json()).toEqual(loc);
    const put = await as(t.app, a, {
      method: 'PUT',
      url: `/api/locations/${loc.id}`,
      payload: { name: 'House', timezone: 'Europe/Berlin' },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ name: 'House', timezone: 'Europe/Berlin', code: '', tariffId: null });
    expect((await as(t.app, a, { method: 'DELETE', url: `/api/locations/${loc.id}` })).statusCode).toBe(204);
    expect((await as(t.app, a, { method: 'GET', url: `/api/locations/${loc.id}` })).statusCode).toBe(404);
  });

  it.each([
    [{ name: '', timezone: 'Europe/Warsaw' }, { name: [MESSAGES.fieldEmpty] }],
    [{ name: 'X' }, { timezone: [MESSAGES.timezoneRequired] }],
    [{ name: 'X', timezone: 'Nowhere/City' }, { timezone: [MESSAGES.timezoneRequired] }],
  ])('rejects the location %j', async (payload, errors) => {
    const res = await as(t.app, owner, { method: 'POST', url: '/api/locations', payload });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ message: MESSAGES.saveFailed, errors });
  });

  it('keeps tariff versions per location; the location names one of its own as current', async () => {
    const loc = await newLocation(owner);
    const other = await newLocation(owner, { name: 'Other' });
    const v1 = await as(t.app, owner, {
      method: 'POST',
      url: `/api/locations/${loc.id}/tariffs`,
      payload: { ...tariffBody, validTo: '2026-07-01' },
    });
    expect(v1.statusCode).toBe(201);
    expect(v1.json()).toEqual({
      id: expect.any(Number),
      locationId: loc.id,
      name: 'G12w Tauron 2026',
      group: 'G12w',
      operator: 'Tauron',
      zone1Price: 1.02,
      zone2Price: 0.61,
      zone3Price: 0,
      fixedPrice: 12.5,
      currency: 'PLN',
      validFrom: '2026-01-01',
      validTo: '2026-07-01',
      clockBasis: 'local',
      schedule: null,
      simulated: true,
    });
    const schedule = {
      weekday: [{ from: '21:00', to: '06:00', zone: 2 }],
      saturday: [{ from: '00:00', to: '24:00', zone: 2 }],
    };
    const v2 = await as(t.app, owner, {
      method: 'POST',
      url: `/api/locations/${loc.id}/tariffs`,
      payload: { ...tariffBody, zone1Price: 1.1, validFrom: '2026-07-01', clockBasis: 'cet', schedule },
    });
    expect(v2.json()).toMatchObject({ zone1Price: 1.1, clockBasis: 'cet', schedule, validTo: null });
    const list = (await as(t.app, owner, { method: 'GET', url: `/api/locations/${loc.id}/tariffs` })).json();
    expect(list.map((x: { validFrom: string }) => x.validFrom)).toEqual(['2026-01-01', '2026-07-01']);

    const setCurrent = await as(t.app, owner, {
      method: 'PUT',
      url: `/api/locations/${loc.id}`,
      payload: { name: 'Home', timezone: 'Europe/Warsaw', tariffId: v2.json().id },
    });
    expect(setCurrent.json().tariffId).toBe(v2.json().id);
    // A tariff of another location cannot be the current one.
    const foreign = await as(t.app, owner, {
      method: 'PUT',
      url: `/api/locations/${other.id}`,
      payload: { name: 'Other', timezone: 'Europe/Warsaw', tariffId: v2.json().id },
    });
    expect(foreign.statusCode).toBe(404);

    const edited = await as(t.app, owner, {
      method: 'PUT',
      url: `/api/locations/${loc.id}/tariffs/${v1.json().id}`,
      payload: { ...tariffBody, name: 'Renamed', group: 'G11', validTo: '2026-07-01' },
    });
    expect(edited.statusCode).toBe(200);
    expect(edited.json()).toMatchObject({ name: 'Renamed', group: 'G11' });
    expect(
      (
        await as(t.app, owner, { method: 'GET', url: `/api/locations/${loc.id}/tariffs/${v1.json().id}` })
      ).json().name,
    ).toBe('Renamed');
    // Deleting the current tariff clears it from the location.
    expect(
      (await as(t.app, owner, { method: 'DELETE', url: `/api/locations/${loc.id}/tariffs/${v2.json().id}` }))
        .statusCode,
    ).toBe(204);
    expect(
      (await as(t.app, owner, { method: 'GET', url: `/api/locations/${loc.id}` })).json().tariffId,
    ).toBeNull();
  });

  it.each([
    [{ ...tariffBody, group: 'G13' }, { group: [MESSAGES.fieldEmpty] }],
    [{ ...tariffBody, zone1Price: 'cheap' }, { zone1Price: [MESSAGES.validNumber] }],
    [
      { ...tariffBody, zone2Price: -1 },
      { zone2Price: ['Must be greater than or equal to 0, and less than or equal to 1000000.'] },
    ],
    [{ ...tariffBody, validFrom: '2026-02-30' }, { validFrom: [MESSAGES.invalidDate] }],
    [{ ...tariffBody, validTo: '2025-12-31' }, { validTo: [MESSAGES.invalidDate] }],
    [
      { ...tariffBody, schedule: { weekday: [{ from: '25:00', to: '06:00', zone: 2 }] } },
      { 'schedule.weekday.0.from': [MESSAGES.fieldEmpty] },
    ],
  ])('rejects the tariff %j', async (payload, errors) => {
    const loc = await newLocation(owner);
    const res = await as(t.app, owner, { method: 'POST', url: `/api/locations/${loc.id}/tariffs`, payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual(errors);
  });

  it("another user's location and tariffs answer 404 on every route, and stay untouched", async () => {
    const loc = await newLocation(owner);
    const tariff = (
      await as(t.app, owner, { method: 'POST', url: `/api/locations/${loc.id}/tariffs`, payload: tariffBody })
    ).json();
    const own = await newLocation(stranger);
    const locBody = { name: 'Mine', timezone: 'Europe/Warsaw' };
    const routes: [string, string, object?][] = [
      ['GET', `/api/locations/${loc.id}`],
      ['PUT', `/api/locations/${loc.id}`, locBody],
      ['DELETE', `/api/locations/${loc.id}`],
      ['GET', `/api/locations/${loc.id}/tariffs`],
      ['POST', `/api/locations/${loc.id}/tariffs`, tariffBody],
      ['GET', `/api/locations/${loc.id}/tariffs/${tariff.id}`],
      ['PUT', `/api/locations/${loc.id}/tariffs/${tariff.id}`, tariffBody],
      ['DELETE', `/api/locations/${loc.id}/tariffs/${tariff.id}`],
      // Someone else's tariff under one's own location, or as one's own location's current tariff.
      ['GET', `/api/locations/${own.id}/tariffs/${tariff.id}`],
      ['PUT', `/api/locations/${own.id}`, { ...locBody, tariffId: tariff.id }],
    ];
    for (const [method, url, payload] of routes) {
      const r = await as(t.app, stranger, { method: method as 'GET', url, ...(payload ? { payload } : {}) });
      expect([method, url, r.statusCode]).toEqual([method, url, 404]);
    }
    // Nor can a device be pointed at it.
    const device = await as(t.app, stranger, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: '02:00:00:00:00:01', name: 'Meter', typeCode: 1, locationId: loc.id },
    });
    expect(device.statusCode).toBe(404);
    expect((await as(t.app, owner, { method: 'GET', url: `/api/locations/${loc.id}` })).json().name).toBe(
      'Home',
    );
    expect(
      (await as(t.app, owner, { method: 'GET', url: `/api/locations/${loc.id}/tariffs` })).json(),
    ).toHaveLength(1);
  });
});
