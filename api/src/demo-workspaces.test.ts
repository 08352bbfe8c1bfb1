/**
 * Demo workspaces on the real app over PGlite and PostgreSQL with DuckDB telemetry: every demo sign-in
 * gets its own copy of the demo, which it may change freely; the simulated meters and their telemetry
 * belong to nobody who signs in; workspaces expire; demo sign-in is rate limited per address.
 */

import { MESSAGES } from '@kilowatch/core';
import { DEMO_DEVICES } from '@kilowatch/ingest';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from './app.ts';
import { ensureDemoAccount } from './demo.ts';
import { HUB_PATH } from './hub/hub.ts';
import { createLocalLiveSource } from './hub/live-source.ts';
import { DEMO_EMAIL, NOTIFICATION_COLUMNS } from './plugins/app/demo-workspaces.ts';
import {
  as,
  buildTestApp,
  duckDbStore,
  engines,
  signUp,
  TEST_CONFIG,
  type TestApp,
} from './testing/helper.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-26T09:00:00Z');

interface Auth {
  token: string;
  refreshToken: string;
  user: { id: number; email: string; fullName: string };
}
interface DeviceView {
  id: number;
  name: string;
  deviceKey: string;
  mac: string;
}

async function demo(app: FastifyInstance, remoteAddress = '127.0.0.1'): Promise<Auth> {
  const res = await app.inject({ method: 'POST', url: '/api/account/demo', payload: {}, remoteAddress });
  if (res.statusCode !== 200) throw new Error(`demo sign-in: ${res.statusCode} ${res.body}`);
  return res.json() as Auth;
}

const devicesOf = async (app: FastifyInstance, a: Auth) =>
  (await as(app, a, { method: 'GET', url: '/api/devices' })).json() as DeviceView[];

describe.each(engines())('demo workspaces on %s', (engine) => {
  let t: TestApp;
  let store: TelemetryStore;
  let clock = NOW;
  const config = {
    demo: true,
    demoSignInRateLimit: { max: 1000, windowMs: 60_000 },
    demoWorkspaces: { max: 6, idleMs: 24 * HOUR },
  };

  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp(engine, { store, config, now: () => clock });
    await ensureDemoAccount(t.app, DEMO_DEVICES);
    // Readings of every simulated meter in the last hours.
    await store.write(
      DEMO_DEVICES.flatMap((d) =>
        [3, 2, 1].map((h) => ({ deviceKey: d.deviceKey, ts: NOW - h * HOUR, values: { vave1: 230 + h } })),
      ),
    );
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  it('gives each visitor a workspace of their own: what A changes, B never sees', async () => {
    const a = await demo(t.app);
    const b = await demo(t.app);
    expect(a.user.id).not.toBe(b.user.id);
    expect(a.user.email).not.toBe(DEMO_EMAIL);
    const aDevices = await devicesOf(t.app, a);
    const original = await devicesOf(t.app, b);
    expect(aDevices.map((d) => d.deviceKey).sort()).toEqual(DEMO_DEVICES.map((d) => d.deviceKey).sort());
    expect(original.map((d) => d.name)).toEqual(aDevices.map((d) => d.name));

    // A renames a device to markup, edits the profile, adds a location and deletes a device.
    const [renamed, deleted] = aDevices;
    const overview = (await as(t.app, a, { method: 'GET', url: `/api/devices/${renamed!.id}` })).json();
    const put = await as(t.app, a, {
      method: 'PUT',
      url: `/api/devices/${renamed!.id}`,
      payload: {
        name: '<img src=x onerror=alert(1)>',
        friendlyName: '',
        locationId: null,
        tariffId: null,
        billingStart: overview.billingStart,
        billingMonths: overview.billingMonths,
      },
    });
    expect(put.statusCode).toBe(200);
    const profile = await as(t.app, a, {
      method: 'POST',
      url: '/api/account/update',
      payload: { fullName: 'Defaced', country: 'DE', timezone: 'Europe/Berlin', language: 'en' },
    });
    expect(profile.statusCode).toBe(200);
    const created = await as(t.app, a, {
      method: 'POST',
      url: '/api/locations',
      payload: { name: 'Spam', timezone: 'Europe/Warsaw' },
    });
    expect(created.statusCode).toBe(201);
    expect((await as(t.app, a, { method: 'DELETE', url: `/api/devices/${deleted!.id}` })).statusCode).toBe(
      204,
    );

    // A sees its changes.
    const aAfter = await devicesOf(t.app, a);
    expect(aAfter).toHaveLength(DEMO_DEVICES.length - 1);
    expect(aAfter.find((d) => d.id === renamed!.id)?.name).toBe('<img src=x onerror=alert(1)>');

    // B (and a visitor after both) sees the original demo.
    for (const visitor of [b, await demo(t.app)]) {
      const list = await devicesOf(t.app, visitor);
      expect(list.map((d) => d.name)).toEqual(original.map((d) => d.name));
      const me = (await as(t.app, visitor, { method: 'GET', url: '/api/account/userInfo' })).json();
      expect(me.fullName).toBe('Demo User');
      const places = (await as(t.app, visitor, { method: 'GET', url: '/api/locations' })).json();
      expect(places.map((l: { name: string }) => l.name).sort()).toEqual(['Home', 'London flat']);
      // The meter A deleted still has its telemetry, read through B's own device row.
      const same = list.find((d) => d.deviceKey === deleted!.deviceKey)!;
      const latest = await as(t.app, visitor, { method: 'GET', url: `/api/devices/${same.id}/latest` });
      expect(latest.statusCode).toBe(200);
      expect(latest.json()).toMatchObject({ values: { vave1: 231 } });
    }
    expect(await store.latest(deleted!.deviceKey)).not.toBeNull();
    // Neither can reach the other's rows.
    expect((await as(t.app, b, { method: 'GET', url: `/api/devices/${renamed!.id}` })).statusCode).toBe(404);
  });

  it('refuses to claim a simulated meter or another user’s meter, and to rotate a simulated meter’s account', async () => {
    const a = await demo(t.app);
    const simulated = (await devicesOf(t.app, a))[0]!;
    const claimSimulated = await as(t.app, a, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: simulated.mac, name: 'Mine now', typeCode: 1 },
    });
    expect(claimSimulated.statusCode).toBe(409);
    expect(claimSimulated.json().message).toBe(MESSAGES.alreadyClaimed);

    const owner = await signUp(t.app);
    const mac = 'AA:BB:CC:20:0B:01';
    expect(
      (
        await as(t.app, owner, {
          method: 'POST',
          url: '/api/devices',
          payload: { mac, name: 'Real', typeCode: 1 },
        })
      ).statusCode,
    ).toBe(201);
    const claimOthers = await as(t.app, a, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac, name: 'Not mine', typeCode: 1 },
    });
    expect(claimOthers.statusCode).toBe(409);

    const rotate = await as(t.app, a, {
      method: 'POST',
      url: `/api/devices/${simulated.id}/mqtt-credentials`,
    });
    expect(rotate.statusCode).toBe(409);
    expect(rotate.json()).toEqual({ message: MESSAGES.sharedMeter });
    // Nor can a registered user claim one.
    const byUser = await as(t.app, owner, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: simulated.mac, name: 'Mine', typeCode: 1 },
    });
    expect(byUser.statusCode).toBe(409);
  });

  it('sends a simulated meter’s alerts to each workspace by its own settings', async () => {
    const a = await demo(t.app);
    const b = await demo(t.app);
    const key = DEMO_DEVICES.find((d) => d.phases === 3)!.deviceKey;
    const aDevice = (await devicesOf(t.app, a)).find((d) => d.deviceKey === key)!;
    const bDevice = (await devicesOf(t.app, b)).find((d) => d.deviceKey === key)!;
    const settings = {
      enabled: true,
      voltageDrop: 207,
      voltageRise: 253,
      totalConsumption: 0,
      disableAtNight: false,
      interval: 1,
      muteAll: false,
    };
    for (const [who, d] of [
      [a, aDevice],
      [b, bDevice],
    ] as const) {
      const res = await as(t.app, who, {
        method: 'PUT',
        url: `/api/devices/${d.id}/notifications`,
        payload: who === a ? settings : { ...settings, enabled: false },
      });
      expect(res.statusCode).toBe(200);
    }
    await t.app.alerts.evaluate({
      deviceKey: key,
      ts: clock - 1000,
      values: { vave1: 190, vave2: 231, vave3: 231 },
    });
    const aList = (await as(t.app, a, { method: 'GET', url: '/api/notifications' })).json();
    const bList = (await as(t.app, b, { method: 'GET', url: '/api/notifications' })).json();
    expect(aList.items.map((n: { deviceId: number; kind: string }) => [n.deviceId, n.kind])).toContainEqual([
      aDevice.id,
      'voltage-drop',
    ]);
    expect(bList.items).toEqual([]);
  });

  it("copies every notification setting of the template's meters, the detectors' too, to a new workspace", async () => {
    const { rows } = await t.sql.query<{ column_name: string }>(
      // This suite's own schema (the PostgreSQL suites share one database, a schema each).
      `select column_name from information_schema.columns
       where table_name = 'notification_settings' and table_schema = current_schema()`,
    );
    expect(rows.map((r) => r.column_name).sort()).toEqual(
      ['device_id', ...NOTIFICATION_COLUMNS.split(', ')].sort(),
    );
    const template = await t.app.accounts.findUserByEmail(DEMO_EMAIL);
    const key = DEMO_DEVICES.find((d) => d.phases === 3)!.deviceKey;
    const meter = (await t.app.devices.list(template!.id)).find((d) => d.deviceKey === key)!;
    const before = await t.sql.query<Record<string, unknown>>(
      'select * from notification_settings where device_id = $1',
      [meter.id],
    );
    await t.sql.query(
      `update notification_settings set fuse_a = 25, overload_share = 0.8, offline = true, offline_factor = 4,
         base_load = true, base_load_share = 0.25, unusual = true, solar = true, solar_share = 0.35, email = true
       where device_id = $1`,
      [meter.id],
    );
    // Room for one more workspace (the suite's limit is small).
    for (const id of (
      await t.sql.query<{ id: number }>('select id from users where workspace_expires_at is not null')
    ).rows)
      await t.app.demoWorkspaces.remove(Number(id.id));
    try {
      const visitor = await demo(t.app);
      const own = (await devicesOf(t.app, visitor)).find((d) => d.deviceKey === key)!;
      const res = await as(t.app, visitor, { method: 'GET', url: `/api/devices/${own.id}/notifications` });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        fuseA: 25,
        overloadShare: 0.8,
        offline: true,
        offlineFactor: 4,
        baseLoad: true,
        baseLoadShare: 0.25,
        unusual: true,
        solar: true,
        solarShare: 0.35,
        email: true,
      });
    } finally {
      const b = before.rows[0]!;
      await t.sql.query(
        `update notification_settings set fuse_a = $2, overload_share = $3, offline = $4, offline_factor = $5,
           base_load = $6, base_load_share = $7, unusual = $8, solar = $9, solar_share = $10, email = $11
         where device_id = $1`,
        [
          meter.id,
          b.fuse_a,
          b.overload_share,
          b.offline,
          b.offline_factor,
          b.base_load,
          b.base_load_share,
          b.unusual,
          b.solar,
          b.solar_share,
          b.email,
        ],
      );
    }
  });

  it('removes a workspace at sign-out and once idle for a day; in use, it lives on', async () => {
    for (const id of (
      await t.sql.query<{ id: number }>('select id from users where workspace_expires_at is not null')
    ).rows)
      await t.app.demoWorkspaces.remove(Number(id.id));
    const idle = await demo(t.app);
    const used = await demo(t.app);
    const leaving = await demo(t.app);
    expect(await t.app.demoWorkspaces.count()).toBe(3);

    expect((await as(t.app, leaving, { method: 'GET', url: '/api/account/logout' })).statusCode).toBe(204);
    expect(await t.app.demoWorkspaces.count()).toBe(2);

    clock += 20 * HOUR;
    const refreshed = await t.app.inject({
      method: 'POST',
      url: '/api/account/refreshtoken',
      payload: { refreshToken: used.refreshToken },
    });
    expect(refreshed.statusCode).toBe(200);
    clock += 5 * HOUR;
    expect(await t.app.demoWorkspaces.sweep()).toBe(1);
    expect(await t.app.demoWorkspaces.count()).toBe(1);
    expect(await t.app.accounts.findUserById(idle.user.id)).toBeNull();
    expect((await as(t.app, idle, { method: 'GET', url: '/api/devices' })).statusCode).toBe(401);
    const again = await t.app.inject({
      method: 'POST',
      url: '/api/account/refreshtoken',
      payload: { refreshToken: (refreshed.json() as Auth).refreshToken },
    });
    expect(again.statusCode).toBe(200);
    const next = again.json() as Auth;
    expect((await as(t.app, next, { method: 'GET', url: '/api/devices' })).statusCode).toBe(200);
    // An expired workspace that was not swept yet is not brought back by a refresh.
    clock += 24 * HOUR + 1;
    const late = await t.app.inject({
      method: 'POST',
      url: '/api/account/refreshtoken',
      payload: { refreshToken: next.refreshToken },
    });
    expect(late.statusCode).toBe(401);
    expect(await t.app.demoWorkspaces.sweep()).toBe(1);
    // The template and its meters' telemetry are untouched.
    const template = await t.app.accounts.findUserByEmail(DEMO_EMAIL);
    expect((await t.app.devices.list(template!.id)).map((d) => d.deviceKey).sort()).toEqual(
      DEMO_DEVICES.map((d) => d.deviceKey).sort(),
    );
    for (const d of DEMO_DEVICES) expect(await store.latest(d.deviceKey)).not.toBeNull();
  });

  it('answers 503 with Retry-After in the contract shape when every workspace is taken', async () => {
    const existing = await t.app.demoWorkspaces.count();
    const made: Auth[] = [];
    for (let i = existing; i < config.demoWorkspaces.max; i++) made.push(await demo(t.app));
    const full = await t.app.inject({ method: 'POST', url: '/api/account/demo', payload: {} });
    expect(full.statusCode).toBe(503);
    expect(full.json()).toEqual({ message: MESSAGES.demoFull });
    expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(60);
    await as(t.app, made[0]!, { method: 'GET', url: '/api/account/logout' });
    expect((await t.app.inject({ method: 'POST', url: '/api/account/demo', payload: {} })).statusCode).toBe(
      200,
    );
  });
});

describe.each(engines())('demo sign-in limits and restarts on %s', (engine) => {
  it('limits demo sign-ins per address: 429 with Retry-After in the contract shape', async () => {
    const store = await duckDbStore();
    const t = await buildTestApp(engine, {
      store,
      now: () => NOW,
      config: { demo: true, demoSignInRateLimit: { max: 3, windowMs: 60_000 } },
    });
    try {
      await ensureDemoAccount(t.app, DEMO_DEVICES);
      for (let i = 0; i < 3; i++) await demo(t.app, '198.51.100.7');
      const limited = await t.app.inject({
        method: 'POST',
        url: '/api/account/demo',
        payload: {},
        remoteAddress: '198.51.100.7',
      });
      expect(limited.statusCode).toBe(429);
      expect(limited.json()).toEqual({ message: MESSAGES.tooManyRequests });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(await t.app.demoWorkspaces.count()).toBe(3);
      // Another address is not held back.
      await demo(t.app, '198.51.100.8');
    } finally {
      await t.close();
      await store.close();
    }
  });

  it('keeps the simulated meters, their telemetry and each workspace after a restart', async () => {
    const store = await duckDbStore();
    const t = await buildTestApp(engine, { store, now: () => NOW, config: { demo: true } });
    let second: FastifyInstance | undefined;
    try {
      const seeded = await ensureDemoAccount(t.app, DEMO_DEVICES);
      await store.write(
        DEMO_DEVICES.map((d) => ({ deviceKey: d.deviceKey, ts: NOW - HOUR, values: { vave1: 229 } })),
      );
      const a = await demo(t.app);
      const first = (await devicesOf(t.app, a))[0]!;
      await as(t.app, a, { method: 'DELETE', url: `/api/devices/${first.id}` });
      await t.app.close();

      second = await buildApp({
        sql: t.sql,
        store,
        config: { ...TEST_CONFIG, demo: true },
        now: () => NOW,
        mailer: { send: async () => {} },
      });
      await second.ready();
      expect(await ensureDemoAccount(second, DEMO_DEVICES)).toEqual(seeded);
      for (const d of DEMO_DEVICES) expect(await store.latest(d.deviceKey)).not.toBeNull();
      // A's workspace is as A left it; a new visitor gets every meter.
      expect((await devicesOf(second, a)).map((d) => d.id)).not.toContain(first.id);
      expect(await devicesOf(second, await demo(second))).toHaveLength(DEMO_DEVICES.length);
    } finally {
      await second?.close();
      await t.sql.close();
      await store.close();
    }
  });
});

describe('live readings of a simulated meter in every workspace', () => {
  it('reach each workspace watching the meter, under its own device id, a workspace made later too', async () => {
    const store = await duckDbStore();
    const live = createLocalLiveSource();
    const t = await buildTestApp('pglite', { store, live, now: () => NOW, config: { demo: true } });
    const sockets: WebSocket[] = [];
    try {
      await ensureDemoAccount(t.app, DEMO_DEVICES);
      const base = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
      const key = DEMO_DEVICES[0]!.deviceKey;
      /** A visitor's socket subscribed to its copy of the meter; answers the readings it receives. */
      const watch = async () => {
        const visitor = await demo(t.app);
        const id = (await devicesOf(t.app, visitor)).find((d) => d.deviceKey === key)!.id;
        const ws = new WebSocket(`${base}${HUB_PATH}?access_token=${visitor.token}`);
        sockets.push(ws);
        const readings: { deviceId: number; ts: number }[] = [];
        let pongs = 0;
        ws.on('message', (data) => {
          const m = JSON.parse(String(data)) as { type: string; deviceId: number; ts: number };
          if (m.type === 'reading') readings.push({ deviceId: m.deviceId, ts: m.ts });
          if (m.type === 'pong') pongs++;
        });
        await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
        ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [id] }));
        ws.send(JSON.stringify({ type: 'ping' }));
        await expect.poll(() => pongs).toBe(1);
        return { id, readings };
      };
      const a = await watch();
      const b = await watch();
      expect(a.id).not.toBe(b.id);
      live.publish({ deviceKey: key, ts: NOW - 2000, values: { vave1: 230 } });
      await expect
        .poll(() => [a.readings, b.readings])
        .toEqual([[{ deviceId: a.id, ts: NOW - 2000 }], [{ deviceId: b.id, ts: NOW - 2000 }]]);
      // The meter's owners were just looked up; a workspace made now is told the next reading at once.
      const c = await watch();
      live.publish({ deviceKey: key, ts: NOW - 1000, values: { vave1: 231 } });
      await expect.poll(() => c.readings).toEqual([{ deviceId: c.id, ts: NOW - 1000 }]);
      await expect.poll(() => a.readings.length).toBe(2);
    } finally {
      for (const ws of sockets) ws.terminate();
      await t.close();
      await store.close();
    }
  });
});
