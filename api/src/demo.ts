/**
 * The demo template of the embedded deployment: a user, two locations in different time zones with
 * tariffs, and the simulator's meters. Nobody signs in to it: each demo sign-in gets a workspace copied
 * from it (plugins/app/demo-workspaces.ts). Idempotent: run at every start, it creates only what is missing.
 */
import { DEFAULT_LIMITS, DEFAULT_NOTIFICATION_SETTINGS, type DeviceRole } from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import { DEMO_EMAIL } from './plugins/app/demo-workspaces.ts';
import { notificationValues } from './plugins/app/devices-repository.ts';
import { unmatchableHash } from './plugins/app/passwords.ts';
import { macOf } from './routes/devices.ts';

/** What the demo needs of a simulated meter (the simulator's `DEMO_DEVICES`). */
export interface DemoDevice {
  deviceKey: string;
  name: string;
  typeCode: number;
  model: string;
  phases: 1 | 3;
  /** Its part in the demo home's energy flows; its type's when absent. */
  role?: DeviceRole;
}

export interface DemoAccount {
  userId: number;
  locationIds: number[];
  deviceIds: number[];
}

const PROFILE = { fullName: 'Demo User', country: 'PL', timezone: 'Europe/Warsaw', language: 'en' } as const;

const SITES = [
  {
    location: {
      name: 'Home',
      code: 'GDN-01',
      address: 'ul. Długa 1',
      city: 'Gdańsk',
      timezone: 'Europe/Warsaw',
      // The roof's 8 kWp went up before April 2022: net-metering, 0.8 of the export banked.
      settlement: { scheme: 'net-metering', installedKw: 8, since: '2021-06-01' },
    },
    tariff: {
      name: 'G12w 2026',
      group: 'G12w',
      operator: 'Energa',
      zone1Price: 1.05,
      zone2Price: 0.62,
      zone3Price: 0,
      fixedPrice: 24.5,
      currency: 'PLN',
    },
  },
  {
    location: {
      name: 'London flat',
      code: 'LDN-01',
      address: '1 Baker Street',
      city: 'London',
      timezone: 'Europe/London',
      settlement: { scheme: 'none', installedKw: null, since: null },
    },
    tariff: {
      name: 'Flat rate',
      group: 'G11',
      operator: null,
      zone1Price: 0.245,
      zone2Price: 0,
      zone3Price: 0,
      fixedPrice: 15,
      currency: 'GBP',
    },
  },
] as const;

/**
 * Creates the demo template, or puts it back as shipped: an older release let visitors into it, so its
 * profile, locations, tariffs and device names are restored, rows that are not simulated meters go
 * (telemetry stays), and any session or API key still open on it is ended.
 */
export async function ensureDemoAccount(
  app: FastifyInstance,
  devices: readonly DemoDevice[],
): Promise<DemoAccount> {
  const { accounts, locations, sql } = app;
  let user = await accounts.findUserByEmail(DEMO_EMAIL);
  if (!user) {
    // No password opens it: the demo is entered through POST /api/account/demo only.
    const passwordHash = unmatchableHash(app.config.scrypt);
    user =
      (await accounts.createUser({ email: DEMO_EMAIL, passwordHash, ...PROFILE, isDemo: true })) ??
      (await accounts.findUserByEmail(DEMO_EMAIL));
    if (!user) throw new Error('demo account could not be created');
  }
  const userId = user.id;
  if (
    user.fullName !== PROFILE.fullName ||
    user.country !== PROFILE.country ||
    user.timezone !== PROFILE.timezone ||
    user.language !== PROFILE.language
  )
    await accounts.updateProfile(userId, PROFILE);
  await accounts.revokeUserSessions(userId, 'demo template');
  await sql.query('delete from api_keys where user_id = $1', [userId]);
  await sql.query('delete from comparisons where user_id = $1', [userId]);
  await sql.query('delete from notifications where user_id = $1', [userId]);
  const mine = 'select id from devices where user_id = $1';
  await sql.query(`delete from meter_offsets where device_id in (${mine})`, [userId]);
  const n = DEFAULT_NOTIFICATION_SETTINGS;
  await sql.query(
    `update notification_settings set enabled = $2, voltage_drop = $3, voltage_rise = $4, total_consumption = $5,
       disable_at_night = $6, interval_minutes = $7, mute_all = $8 where device_id in (${mine})`,
    [userId, ...notificationValues(n)],
  );
  await sql.query(`update device_limits set warning = $2, critical = $3 where device_id in (${mine})`, [
    userId,
    DEFAULT_LIMITS.warning,
    DEFAULT_LIMITS.critical,
  ]);

  let sites = await locations.list(userId);
  const asShipped =
    sites.length === SITES.length &&
    (
      await Promise.all(
        SITES.map(async (want, i) => {
          const got = sites[i]!;
          const tariffs = await locations.listTariffs(userId, got.id);
          return (
            (Object.keys(want.location) as (keyof typeof want.location)[]).every((k) =>
              k === 'settlement'
                ? JSON.stringify(got.settlement) === JSON.stringify(want.location.settlement)
                : got[k] === want.location[k],
            ) &&
            tariffs.length === 1 &&
            got.tariffId === tariffs[0]!.id &&
            tariffs[0]!.name === want.tariff.name &&
            tariffs[0]!.zone1Price === want.tariff.zone1Price
          );
        }),
      )
    ).every(Boolean);
  if (!asShipped) {
    for (const l of sites) await locations.remove(userId, l.id);
    for (const site of SITES) {
      const created = await locations.create(userId, { ...site.location, tariffId: null });
      const tariff = await locations.createTariff(userId, created.id, {
        ...site.tariff,
        validFrom: '2026-01-01',
        validTo: null,
        clockBasis: 'local',
        schedule: null,
      });
      await locations.update(userId, created.id, { ...created, tariffId: tariff.id });
    }
    sites = await locations.list(userId);
  }
  const [home, flat] = sites;

  const simulated = new Map(devices.map((d) => [d.deviceKey, d]));
  const owned = await app.devices.list(userId);
  for (const d of owned) {
    const sim = simulated.get(d.deviceKey);
    if (!sim) {
      await app.devices.remove(userId, d.id);
      continue;
    }
    const site = siteOf(sim, home, flat);
    if (
      d.name !== sim.name ||
      d.friendlyName !== sim.name ||
      d.location?.id !== site?.id ||
      (sim.role !== undefined && d.role !== sim.role) ||
      (d.tariff !== null && d.tariff.id !== d.defaultTariff?.id)
    ) {
      // By id: a meter giving up the grid role is edited before the one taking it.
      await app.devices.update(userId, d.id, {
        name: sim.name,
        friendlyName: sim.name,
        locationId: site?.id ?? null,
        tariffId: null,
        billingStart: d.billingStart,
        billingMonths: d.billingMonths,
        role: sim.role,
      });
    }
  }
  const have = new Set(owned.map((d) => d.deviceKey));
  for (const d of devices) {
    if (have.has(d.deviceKey)) continue;
    await app.devices.claim(userId, {
      deviceKey: d.deviceKey,
      mac: macOf(d.deviceKey),
      name: d.name,
      friendlyName: d.name,
      model: d.model,
      typeCode: d.typeCode,
      phases: d.phases,
      locationId: siteOf(d, home, flat)?.id ?? null,
      billingStart: `${new Date(app.clock.now()).getUTCFullYear()}-01-01`,
      role: d.role,
    });
  }
  const list = await app.devices.list(userId);
  return { userId, locationIds: sites.map((s) => s.id), deviceIds: list.map((d) => d.id) };
}

/** The single-phase meter lives in the London flat, the rest at home. */
function siteOf<T>(d: DemoDevice, home: T | undefined, flat: T | undefined): T | undefined {
  return d.phases === 1 && d.typeCode === 2 ? (flat ?? home) : home;
}
