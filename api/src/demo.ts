/**
 * The demo account of the embedded deployment: a user, two locations in different time zones with
 * tariffs, and the simulator's meters. Idempotent: run at every start, it creates only what is missing.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { hashPassword } from './plugins/app/passwords.ts';
import { DEMO_EMAIL } from './routes/account.ts';
import { macOf } from './routes/devices.ts';

/** What the demo needs of a simulated meter (the simulator's `DEMO_DEVICES`). */
export interface DemoDevice {
  deviceKey: string;
  name: string;
  typeCode: number;
  model: string;
  phases: 1 | 3;
}

export interface DemoAccount {
  userId: number;
  locationIds: number[];
  deviceIds: number[];
}

export async function ensureDemoAccount(
  app: FastifyInstance,
  devices: readonly DemoDevice[],
): Promise<DemoAccount> {
  const { accounts, locations } = app;
  let user = await accounts.findUserByEmail(DEMO_EMAIL);
  if (!user) {
    // Nobody knows this password: the demo is entered through POST /api/account/demo only.
    const passwordHash = await hashPassword(randomBytes(32).toString('base64url'), app.config.scrypt);
    user =
      (await accounts.createUser({
        email: DEMO_EMAIL,
        passwordHash,
        fullName: 'Demo User',
        country: 'PL',
        timezone: 'Europe/Warsaw',
        language: 'en',
        isDemo: true,
      })) ?? (await accounts.findUserByEmail(DEMO_EMAIL));
    if (!user) throw new Error('demo account could not be created');
  }
  const userId = user.id;

  let sites = await locations.list(userId);
  if (sites.length === 0) {
    const home = await locations.create(userId, {
      name: 'Home',
      code: 'GDN-01',
      address: 'ul. Długa 1',
      city: 'Gdańsk',
      timezone: 'Europe/Warsaw',
      tariffId: null,
    });
    const homeTariff = await locations.createTariff(userId, home.id, {
      name: 'G12w 2026',
      group: 'G12w',
      operator: 'Energa',
      zone1Price: 1.05,
      zone2Price: 0.62,
      zone3Price: 0,
      fixedPrice: 24.5,
      currency: 'PLN',
      validFrom: '2026-01-01',
      validTo: null,
      clockBasis: 'local',
      schedule: null,
    });
    await locations.update(userId, home.id, { ...home, tariffId: homeTariff.id });
    const flat = await locations.create(userId, {
      name: 'London flat',
      code: 'LDN-01',
      address: '1 Baker Street',
      city: 'London',
      timezone: 'Europe/London',
      tariffId: null,
    });
    const flatTariff = await locations.createTariff(userId, flat.id, {
      name: 'Flat rate',
      group: 'G11',
      operator: null,
      zone1Price: 0.245,
      zone2Price: 0,
      zone3Price: 0,
      fixedPrice: 15,
      currency: 'GBP',
      validFrom: '2026-01-01',
      validTo: null,
      clockBasis: 'local',
      schedule: null,
    });
    await locations.update(userId, flat.id, { ...flat, tariffId: flatTariff.id });
    sites = await locations.list(userId);
  }
  const [home, flat] = sites;

  const owned = new Set((await app.devices.list(userId)).map((d) => d.deviceKey));
  for (const d of devices) {
    if (owned.has(d.deviceKey)) continue;
    // The single-phase meter lives in the London flat, the rest at home.
    const site = d.phases === 1 && d.typeCode === 2 ? (flat ?? home) : home;
    await app.devices.claim(userId, {
      deviceKey: d.deviceKey,
      mac: macOf(d.deviceKey),
      name: d.name,
      friendlyName: d.name,
      model: d.model,
      typeCode: d.typeCode,
      phases: d.phases,
      locationId: site?.id ?? null,
      billingStart: `${new Date(app.clock.now()).getUTCFullYear()}-01-01`,
    });
  }
  const list = await app.devices.list(userId);
  return { userId, locationIds: sites.map((s) => s.id), deviceIds: list.map((d) => d.id) };
}
