/**
 * The web client validates every answer it reads with core's response schemas (docs/api.md), so each answer
 * the API gives must parse with them, also those written without the schema's serializer (series).
 */
import {
  AuthDataSchema,
  ClaimedDeviceSchema,
  DeviceOverviewSchema,
  DeviceSchema,
  EnergySeriesSchema,
  EnergySummarySchema,
  ErrorBodySchema,
  LatestSchema,
  LimitsSchema,
  NotificationSettingsSchema,
  ReadingsPageSchema,
  SeriesBlockSchema,
  UserSchema,
  VerifyTokenResponseSchema,
} from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso, locationOf, steadyCounter } from '../analytics/testing.ts';
import {
  type Account,
  as,
  buildTestApp,
  duckDbStore,
  PASSWORD,
  signUp,
  type TestApp,
} from '../testing/helper.ts';

const H = 3_600_000;

describe("the API's answers parse with the schemas the web client validates them with", () => {
  const now = Date.parse('2026-11-26T09:00:00Z');
  let t: TestApp;
  let store: TelemetryStore;
  let account: Account;
  let device: v.InferOutput<typeof ClaimedDeviceSchema>;

  beforeAll(async () => {
    store = await duckDbStore();
    t = await buildTestApp('pglite', { store, now: () => now });
    account = await signUp(t.app);
    const locationId = await locationOf(t.app, account);
    const claim = await as(t.app, account, {
      method: 'POST',
      url: '/api/devices',
      payload: { mac: 'a0:b1:c2:00:0f:01', name: 'House', typeCode: 1, locationId },
    });
    expect(claim.statusCode).toBe(201);
    device = v.parse(ClaimedDeviceSchema, claim.json());
    await store.write([
      ...steadyCounter(device.deviceKey, 'eai1', now - 48 * H, now - H),
      ...steadyCounter(device.deviceKey, 'vave1', now - 48 * H, now - H, 0, 230),
    ]);
    await store.refreshRollups(now);
  });

  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const cases: [
    string,
    () => { method: 'GET' | 'POST' | 'PUT'; url: string; payload?: Record<string, unknown> },
    v.GenericSchema,
  ][] = [
    ['devices', () => ({ method: 'GET', url: '/api/devices' }), v.array(DeviceSchema)],
    ['a device', () => ({ method: 'GET', url: `/api/devices/${device.id}` }), DeviceOverviewSchema],
    [
      'a device saved',
      () => ({
        method: 'PUT',
        url: `/api/devices/${device.id}`,
        payload: { name: 'House', billingStart: '2026-01-01', billingMonths: 1 },
      }),
      DeviceOverviewSchema,
    ],
    ['limits', () => ({ method: 'GET', url: `/api/devices/${device.id}/limits` }), LimitsSchema],
    [
      'notification settings',
      () => ({ method: 'GET', url: `/api/devices/${device.id}/notifications` }),
      NotificationSettingsSchema,
    ],
    ['latest values', () => ({ method: 'GET', url: `/api/devices/${device.id}/latest` }), LatestSchema],
    [
      'a series',
      () => ({
        method: 'GET',
        url: `/api/devices/${device.id}/series?params=vave1&stats=avg,min,max&from=${iso(now - 24 * H)}&to=${iso(now)}`,
      }),
      SeriesBlockSchema,
    ],
    [
      'energy',
      () => ({
        method: 'GET',
        url: `/api/devices/${device.id}/energy?interval=1h&from=${iso(now - 24 * H)}&to=${iso(now)}`,
      }),
      EnergySeriesSchema,
    ],
    [
      'the energy summary',
      () => ({ method: 'GET', url: `/api/devices/${device.id}/energy/summary` }),
      EnergySummarySchema,
    ],
    [
      'the data log',
      () => ({
        method: 'GET',
        url: `/api/devices/${device.id}/readings?limit=5&from=${iso(now - 24 * H)}&to=${iso(now)}`,
      }),
      ReadingsPageSchema,
    ],
    ['the user', () => ({ method: 'GET', url: '/api/account/userInfo' }), UserSchema],
    [
      'a token check',
      () => ({ method: 'POST', url: '/api/account/verifytoken', payload: { api_token: account.token } }),
      VerifyTokenResponseSchema,
    ],
    [
      'a sign-in',
      () => ({
        method: 'POST',
        url: '/api/account/login',
        payload: { email: account.email, password: PASSWORD },
      }),
      AuthDataSchema,
    ],
    ['an error', () => ({ method: 'GET', url: '/api/devices/2147483647' }), ErrorBodySchema],
    // Last: a refresh ends the access token every case above is sent with.
    [
      'a refresh',
      () => ({
        method: 'POST',
        url: '/api/account/refreshtoken',
        payload: { refreshToken: account.refreshToken },
      }),
      AuthDataSchema,
    ],
  ];

  it.each(cases)('%s', async (_name, req, schema) => {
    const res = await as(t.app, account, req());
    expect(res.statusCode).toBe(schema === ErrorBodySchema ? 404 : 200);
    const parsed = v.safeParse(schema, res.json());
    expect(parsed.issues?.map((i) => `${v.getDotPath(i)}: ${i.message}`) ?? []).toEqual([]);
  });
});
