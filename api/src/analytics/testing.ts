/** Test fixtures for the analytics suites: a user with a location and claimed meters, and known readings. */
import type { Reading } from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import { type Account, as, signUp } from '../testing/helper.ts';

export interface Meter {
  id: number;
  deviceKey: string;
}

export async function locationOf(
  app: FastifyInstance,
  account: Account,
  timezone = 'Europe/Warsaw',
): Promise<number> {
  const res = await as(app, account, {
    method: 'POST',
    url: '/api/locations',
    payload: { name: 'Home', timezone },
  });
  if (res.statusCode !== 201 && res.statusCode !== 200)
    throw new Error(`location: ${res.statusCode} ${res.body}`);
  return (res.json() as { id: number }).id;
}

let macCounter = 0x100;
export async function claimMeter(
  app: FastifyInstance,
  account: Account,
  locationId: number | null,
  name = 'Meter',
): Promise<Meter> {
  macCounter++;
  const deviceKey = `a0b1c2${macCounter.toString(16).padStart(6, '0')}`;
  const mac = deviceKey.match(/../g)!.join(':');
  const res = await as(app, account, {
    method: 'POST',
    url: '/api/devices',
    payload: { mac, name, typeCode: 1, locationId },
  });
  if (res.statusCode !== 201) throw new Error(`claim: ${res.statusCode} ${res.body}`);
  return { id: (res.json() as { id: number }).id, deviceKey };
}

export async function userWithMeter(app: FastifyInstance, timezone = 'Europe/Warsaw') {
  const account = await signUp(app);
  const locationId = await locationOf(app, account, timezone);
  const meter = await claimMeter(app, account, locationId);
  return { account, locationId, meter };
}

/** A counter rising `perHour` kWh every hour, sampled every 15 minutes over [from, to]. */
export function steadyCounter(
  deviceKey: string,
  counter: string,
  from: number,
  to: number,
  perHour = 1,
  start = 1000,
): Reading[] {
  const out: Reading[] = [];
  for (let t = from; t <= to; t += 15 * 60_000) {
    out.push({ deviceKey, ts: t, values: { [counter]: start + ((t - from) / 3_600_000) * perHour } });
  }
  return out;
}

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Voltage alerts for the meter: below 207 V or above 253 V, at most one of a kind a minute, day and
 * night; `muteAll` silences them.
 */
export async function alertOnVoltage(
  app: FastifyInstance,
  who: Account,
  meter: Meter,
  muteAll = false,
): Promise<void> {
  const res = await as(app, who, {
    method: 'PUT',
    url: `/api/devices/${meter.id}/notifications`,
    payload: {
      enabled: true,
      voltageDrop: 207,
      voltageRise: 253,
      totalConsumption: 0,
      disableAtNight: false,
      interval: 1,
      muteAll,
    },
  });
  if (res.statusCode !== 200) throw new Error(`notification settings: ${res.statusCode} ${res.body}`);
}
