/**
 * Personal API keys (docs/api.md §Account) on PGlite and PostgreSQL: shown once and stored hashed, read-only,
 * scoped to the owner's devices, revoked at once and by a password reset; a key never opens account, write
 * or export routes.
 */
import { createHash } from 'node:crypto';
import { MESSAGES } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import {
  type Account,
  as,
  buildTestApp,
  duckDbStore,
  engines,
  signUp,
  type TestApp,
} from '../testing/helper.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');

describe.each(engines())('API keys on %s', (engine) => {
  let t: TestApp;
  let store: TelemetryStore;
  let alice: Account;
  let bob: Account;
  let aliceMeter: Meter;
  let bobMeter: Meter;
  let aliceLocation: number;

  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp(engine, { store, now: () => NOW });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    aliceLocation = await locationOf(t.app, alice);
    aliceMeter = await claimMeter(t.app, alice, aliceLocation, 'Alice main');
    bobMeter = await claimMeter(t.app, bob, await locationOf(t.app, bob), 'Bob main');
    await store.write([
      { deviceKey: aliceMeter.deviceKey, ts: NOW - 3_600_000, values: { vave1: 231 } },
      { deviceKey: bobMeter.deviceKey, ts: NOW - 3_600_000, values: { vave1: 229 } },
    ]);
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  async function createKey(who: Account, name = 'Grafana'): Promise<{ id: number; key: string }> {
    const res = await as(t.app, who, { method: 'POST', url: '/api/account/api-keys', payload: { name } });
    expect(res.statusCode).toBe(201);
    return res.json() as { id: number; key: string };
  }
  const withKey = (key: string) => ({ token: key });

  it('creates a named key shown once, stores only its hash, and lists it without the key', async () => {
    const res = await as(t.app, alice, {
      method: 'POST',
      url: '/api/account/api-keys',
      payload: { name: '  Home Grafana  ' },
    });
    expect(res.statusCode).toBe(201);
    const created = res.json() as { id: number; name: string; key: string };
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'Home Grafana',
      key: expect.stringMatching(/^kw_/),
    });
    const stored = await t.sql.query<{ key_hash: string }>('select key_hash from api_keys where id = $1', [
      created.id,
    ]);
    expect(stored.rows[0]!.key_hash).toBe(createHash('sha256').update(created.key).digest('hex'));
    expect(JSON.stringify(stored.rows)).not.toContain(created.key);

    const list = await as(t.app, alice, { method: 'GET', url: '/api/account/api-keys' });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toContainEqual({
      id: created.id,
      name: 'Home Grafana',
      createdAt: iso(NOW),
      lastUsedAt: null,
    });
    expect(list.body).not.toContain(created.key);
    // Bob sees none of Alice's keys.
    const bobs = await as(t.app, bob, { method: 'GET', url: '/api/account/api-keys' });
    expect(bobs.json()).toEqual([]);
  });

  it('refuses an empty or too long name with 400 and the field named', async () => {
    for (const name of ['', '   ', 'x'.repeat(61)]) {
      const res = await as(t.app, alice, { method: 'POST', url: '/api/account/api-keys', payload: { name } });
      expect(res.statusCode).toBe(400);
      expect(res.json().errors.name).toEqual([MESSAGES.fieldEmpty]);
    }
    const missing = await as(t.app, alice, { method: 'POST', url: '/api/account/api-keys', payload: {} });
    expect(missing.statusCode).toBe(400);
  });

  it('opens the read routes of the owner only, and notes when it was used', async () => {
    const { id, key } = await createKey(alice);
    const devices = await as(t.app, withKey(key), { method: 'GET', url: '/api/devices' });
    expect(devices.statusCode).toBe(200);
    expect((devices.json() as { id: number }[]).map((d) => d.id)).toEqual([aliceMeter.id]);
    const latest = await as(t.app, withKey(key), {
      method: 'GET',
      url: `/api/devices/${aliceMeter.id}/latest`,
    });
    expect(latest.statusCode).toBe(200);
    expect(latest.json().values).toEqual({ vave1: 231 });
    const series = await as(t.app, withKey(key), {
      method: 'GET',
      url: `/api/devices/${aliceMeter.id}/series?params=vave1&from=${iso(NOW - 86_400_000)}&to=${iso(NOW)}&interval=1h`,
    });
    expect(series.statusCode).toBe(200);
    // Bob's device is "not found", never revealed.
    for (const url of [`/api/devices/${bobMeter.id}`, `/api/devices/${bobMeter.id}/latest`]) {
      const res = await as(t.app, withKey(key), { method: 'GET', url });
      expect(res.statusCode).toBe(404);
    }
    const list = await as(t.app, alice, { method: 'GET', url: '/api/account/api-keys' });
    expect((list.json() as { id: number; lastUsedAt: string }[]).find((k) => k.id === id)?.lastUsedAt).toBe(
      iso(NOW),
    );
  });

  it('never opens account, write or export routes', async () => {
    const { key } = await createKey(alice);
    const k = withKey(key);
    const refused: InjectOptions[] = [
      // account
      { method: 'GET', url: '/api/account/userInfo' },
      { method: 'GET', url: '/api/account/api-keys' },
      { method: 'POST', url: '/api/account/api-keys', payload: { name: 'escalate' } },
      { method: 'GET', url: '/api/account/logout' },
      {
        method: 'POST',
        url: '/api/account/update',
        payload: { fullName: 'X', country: 'PL', timezone: 'Europe/Warsaw', language: 'en' },
      },
      // writes
      { method: 'POST', url: '/api/devices', payload: { mac: 'aa:bb:cc:dd:ee:01', name: 'x', typeCode: 1 } },
      {
        method: 'PUT',
        url: `/api/devices/${aliceMeter.id}/limits`,
        payload: { warning: 5, critical: 10 },
      },
      { method: 'DELETE', url: `/api/devices/${aliceMeter.id}` },
      { method: 'POST', url: '/api/locations', payload: { name: 'Elsewhere', timezone: 'Europe/Warsaw' } },
      { method: 'DELETE', url: `/api/locations/${aliceLocation}` },
      // exports
      { method: 'GET', url: '/api/exports' },
      {
        method: 'POST',
        url: '/api/exports',
        payload: {
          deviceIds: [aliceMeter.id],
          params: 'all',
          from: iso(NOW - 86_400_000),
          to: iso(NOW),
          format: 'csv',
        },
      },
    ];
    for (const r of refused) {
      const res = await as(t.app, k, r);
      expect(res.statusCode, `${r.method} ${r.url}`).toBe(401);
      expect(res.json()).toEqual({ message: MESSAGES.unauthorized });
    }
    // Nothing changed: the device and the location are still there.
    const still = await as(t.app, alice, { method: 'GET', url: `/api/devices/${aliceMeter.id}` });
    expect(still.statusCode).toBe(200);
    const keys = await as(t.app, alice, { method: 'GET', url: '/api/account/api-keys' });
    expect((keys.json() as { name: string }[]).some((x) => x.name === 'escalate')).toBe(false);
  });

  it('stops working at once when revoked; only its owner can revoke it', async () => {
    const { id, key } = await createKey(alice, 'Short lived');
    expect((await as(t.app, withKey(key), { method: 'GET', url: '/api/devices' })).statusCode).toBe(200);
    const byBob = await as(t.app, bob, { method: 'DELETE', url: `/api/account/api-keys/${id}` });
    expect(byBob.statusCode).toBe(404);
    expect((await as(t.app, withKey(key), { method: 'GET', url: '/api/devices' })).statusCode).toBe(200);
    const revoked = await as(t.app, alice, { method: 'DELETE', url: `/api/account/api-keys/${id}` });
    expect(revoked.statusCode).toBe(204);
    const after = await as(t.app, withKey(key), { method: 'GET', url: '/api/devices' });
    expect(after.statusCode).toBe(401);
    const again = await as(t.app, alice, { method: 'DELETE', url: `/api/account/api-keys/${id}` });
    expect(again.statusCode).toBe(404);
    const list = await as(t.app, alice, { method: 'GET', url: '/api/account/api-keys' });
    expect((list.json() as { id: number }[]).some((x) => x.id === id)).toBe(false);
  });

  it("a password reset ends every key of the account at once; another account's keys live on", async () => {
    const carol = await signUp(t.app);
    const first = await createKey(carol, 'Grafana');
    const second = await createKey(carol, 'Script');
    const bobs = await createKey(bob, 'Bob Grafana');
    for (const { key } of [first, second, bobs])
      expect((await as(t.app, withKey(key), { method: 'GET', url: '/api/devices' })).statusCode).toBe(200);

    const before = t.mails.length;
    const forgot = await t.app.inject({
      method: 'POST',
      url: '/api/forgot_password',
      payload: { email: carol.email },
    });
    expect(forgot.statusCode).toBe(202);
    await vi.waitFor(() => expect(t.mails.length).toBeGreaterThan(before));
    const token = /token=([A-Za-z0-9_-]+)/.exec(t.mails.at(-1)!.text)![1]!;
    const reset = await t.app.inject({
      method: 'POST',
      url: '/api/reset_password',
      payload: { token, password: 'a brand new password' },
    });
    expect(reset.statusCode).toBe(204);

    for (const { key } of [first, second]) {
      const after = await as(t.app, withKey(key), { method: 'GET', url: '/api/devices' });
      expect(after.statusCode).toBe(401);
      expect(after.json()).toEqual({ message: MESSAGES.unauthorized });
    }
    expect((await as(t.app, withKey(bobs.key), { method: 'GET', url: '/api/devices' })).statusCode).toBe(200);
    // The account signs in with the new password and finds no key left.
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/account/login',
      payload: { email: carol.email, password: 'a brand new password' },
    });
    expect(login.statusCode).toBe(200);
    const list = await as(t.app, login.json(), { method: 'GET', url: '/api/account/api-keys' });
    expect(list.json()).toEqual([]);
  });

  it('refuses a key that was never issued, and one of the right shape but unknown', async () => {
    for (const token of [`kw_${'A'.repeat(43)}`, 'kw_not-a-key-but-long-enough']) {
      const res = await as(t.app, { token }, { method: 'GET', url: '/api/devices' });
      expect(res.statusCode).toBe(401);
    }
  });

  it('keeps at most 20 keys per account (409 past that)', async () => {
    const fresh = await signUp(t.app);
    for (let i = 0; i < 20; i++) await createKey(fresh, `key ${i}`);
    const res = await as(t.app, fresh, {
      method: 'POST',
      url: '/api/account/api-keys',
      payload: { name: 'one more' },
    });
    expect(res.statusCode).toBe(409);
  });
});
