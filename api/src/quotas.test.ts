/**
 * Quotas (docs/api.md §Conventions): each kind an account creates is refused with 409 naming the kind and
 * the limit once the account holds its quota, a demo workspace has its own smaller ones, another account
 * is not counted, a freed place can be used again, and creates at once cannot pass the same count.
 * Small limits in the test app's config; real PGlite and DuckDB.
 */
import { DEFAULT_QUOTAS, settingsFromEnv } from '@kilowatch/core';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimMeter, locationOf } from './analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from './testing/helper.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const QUOTAS = {
  account: { devices: 2, locations: 2, tariffs: 2, comparisons: 1, apiKeys: 1 },
  demo: { devices: 1, locations: 1, tariffs: 1, comparisons: 0, apiKeys: 0 },
};
const tariff = (validFrom: string) => ({
  name: 'G11 2026',
  group: 'G11',
  operator: 'Tauron',
  zone1Price: 1.02,
  fixedPrice: 12.5,
  validFrom,
});

describe('quotas', () => {
  let t: TestApp;
  let store: TelemetryStore;

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, now: () => NOW, config: { quotas: QUOTAS } });
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const post = (who: Account, url: string, payload: Record<string, unknown>) =>
    as(t.app, who, { method: 'POST', url, payload });
  const refused = (kind: string, limit: number, nouns: string, demo = false) => {
    const message = `Quota reached: ${demo ? 'a demo workspace' : 'an account'} may have at most ${limit} ${nouns}.`;
    return { message, errors: { [kind]: [message] } };
  };

  it('devices: the one past the quota is 409 naming it; another account is not counted; a freed place is used again', async () => {
    const alice = await signUp(t.app);
    const first = await claimMeter(t.app, alice, null);
    await claimMeter(t.app, alice, null);
    const third = await post(alice, '/api/devices', { mac: 'a0:b1:c2:ff:00:01', name: 'Third', typeCode: 1 });
    expect(third.statusCode).toBe(409);
    expect(third.json()).toEqual(refused('devices', 2, 'devices'));
    // Bob's devices are his own count.
    const bob = await signUp(t.app);
    await claimMeter(t.app, bob, null);
    // A deleted device frees its place.
    expect((await as(t.app, alice, { method: 'DELETE', url: `/api/devices/${first.id}` })).statusCode).toBe(
      204,
    );
    const again = await post(alice, '/api/devices', { mac: 'a0:b1:c2:ff:00:01', name: 'Third', typeCode: 1 });
    expect(again.statusCode).toBe(201);
  });

  it('devices: claims at once pass the count one at a time', async () => {
    const carol = await signUp(t.app);
    // Each claim is slow to write, so that the others' counts would all run before the first is written
    // unless the check holds the account's place until the answer.
    const claim = t.app.devices.claim.bind(t.app.devices);
    const slow = vi.spyOn(t.app.devices, 'claim').mockImplementation(async (...args) => {
      await new Promise((r) => setTimeout(r, 100));
      return claim(...args);
    });
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((i) =>
        post(carol, '/api/devices', { mac: `a0:b1:c2:fe:00:0${i}`, name: `Meter ${i}`, typeCode: 1 }),
      ),
    ).finally(() => slow.mockRestore());
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 409, 409, 409]);
    const list = await as(t.app, carol, { method: 'GET', url: '/api/devices' });
    expect(list.json()).toHaveLength(2);
  });

  it('locations and tariffs', async () => {
    const dave = await signUp(t.app);
    const loc = await locationOf(t.app, dave);
    await locationOf(t.app, dave);
    const third = await post(dave, '/api/locations', { name: 'Cabin', timezone: 'Europe/Warsaw' });
    expect(third.statusCode).toBe(409);
    expect(third.json()).toEqual(refused('locations', 2, 'locations'));

    expect((await post(dave, `/api/locations/${loc}/tariffs`, tariff('2026-01-01'))).statusCode).toBe(201);
    expect((await post(dave, `/api/locations/${loc}/tariffs`, tariff('2026-07-01'))).statusCode).toBe(201);
    const over = await post(dave, `/api/locations/${loc}/tariffs`, tariff('2026-09-01'));
    expect(over.statusCode).toBe(409);
    expect(over.json()).toEqual(refused('tariffs', 2, 'tariffs'));
  });

  it('comparisons and API keys', async () => {
    const erin = await signUp(t.app);
    const meter = await claimMeter(t.app, erin, null);
    const body = { name: 'Voltages', members: [{ deviceId: meter.id, param: 'vave1' }] };
    expect((await post(erin, '/api/comparisons', body)).statusCode).toBe(201);
    const second = await post(erin, '/api/comparisons', body);
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual(refused('comparisons', 1, 'comparisons'));

    expect((await post(erin, '/api/account/api-keys', { name: 'grafana' })).statusCode).toBe(201);
    const key = await post(erin, '/api/account/api-keys', { name: 'another' });
    expect(key.statusCode).toBe(409);
    expect(key.json()).toEqual(refused('apiKeys', 1, 'API keys'));
  });

  it('a demo workspace has the smaller demo quotas', async () => {
    const visitor = await signUp(t.app);
    await t.sql.query('update users set is_demo = true where id = $1', [visitor.userId]);
    await claimMeter(t.app, visitor, null);
    const second = await post(visitor, '/api/devices', {
      mac: 'a0:b1:c2:fd:00:01',
      name: 'Two',
      typeCode: 1,
    });
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual(refused('devices', 1, 'devices', true));
    const key = await post(visitor, '/api/account/api-keys', { name: 'grafana' });
    expect(key.json()).toEqual(refused('apiKeys', 0, 'API keys', true));
    expect(await t.app.quotas.limitsOf(visitor.userId)).toEqual(QUOTAS.demo);
  });

  it('defaults: a demo workspace’s quotas are below an account’s (API keys: the same cap of 20)', () => {
    for (const kind of ['devices', 'locations', 'tariffs', 'comparisons'] as const)
      expect(DEFAULT_QUOTAS.demo[kind]).toBeLessThan(DEFAULT_QUOTAS.account[kind]);
    expect(DEFAULT_QUOTAS.demo.apiKeys).toBe(DEFAULT_QUOTAS.account.apiKeys);
  });

  it('reads the quotas from KW_QUOTA_* and KW_DEMO_QUOTA_*, with the defaults above', () => {
    expect(settingsFromEnv({}, 'host').quotas).toEqual(DEFAULT_QUOTAS);
    const set = settingsFromEnv({ KW_QUOTA_DEVICES: '7', KW_DEMO_QUOTA_COMPARISONS: '0' }, 'host').quotas;
    expect(set.account.devices).toBe(7);
    expect(set.demo.comparisons).toBe(0);
    expect(() => settingsFromEnv({ KW_QUOTA_API_KEYS: '21' }, 'host')).toThrow(/KW_QUOTA_API_KEYS/);
  });
});
