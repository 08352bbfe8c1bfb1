/**
 * A location's Energy view against the real API (embedded deployment) in headless Chromium. A solar house
 * of the test's own — a grid meter, a PV inverter and a sub-meter — publishes 10 June 2026 until 18:00
 * (Europe/Warsaw) over MQTT, and the page's clock is held at 18:00 that day, so nothing depends on the day
 * the test runs.
 *
 * Each hour the sub-meter reads 0.5 kWh and the home uses 1 kWh: from the grid at night (00–06 and
 * 17–18), from the PV by day (06–17: 3 kWh produced, 2 exported). So far today: 18 kWh used, 33 produced,
 * 22 exported, 7 imported (7.00 PLN at a G11 tariff of 1 PLN/kWh), self-sufficiency 61 %, self-consumption
 * 33 %, half of it on no sub-meter. The dashboard shows the same day in the location's tile.
 */
import { deviceKeyFromMac } from '@kilowatch/core';
import mqtt from 'mqtt';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { devicesEn } from '../src/i18n/locales/devices/en.ts';
import { placesEn } from '../src/i18n/locales/places/en.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  startApi,
} from '../src/testing.ts';
import { callAsPage } from './api-call.ts';
import { explainFailures } from './explain.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`energy e2e skipped: ${skip}`);

const HOUR = 3_600_000;
/** Midnight of 10 June 2026 in Warsaw (UTC+2), and the page's clock: 18:00 that day. */
const MIDNIGHT = Date.UTC(2026, 5, 9, 22);
const NOW = MIDNIGHT + 18 * HOUR;
const sunny = (h: number) => h >= 6 && h < 17;

describe.skipIf(skip !== null)('the Energy view of a location', () => {
  let api: RunningApi;
  let browser: Browser;
  let page: Page;
  let locationId: number;
  const errors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => errors }));

  const call = callAsPage(
    () => page,
    () => api.url,
  );

  type Claimed = { id: number; mac: string; role: string; mqtt: { username: string; password: string } };
  async function publish(meter: Claimed, perHour: (h: number) => Record<string, number>) {
    const total: Record<string, number> = {};
    for (const k of Object.keys(perHour(0))) total[k] = 100;
    const readings = [{ ts: MIDNIGHT, values: { ...total } }];
    for (let h = 0; h < 18; h++) {
      for (const [k, v] of Object.entries(perHour(h))) total[k] = total[k]! + v;
      readings.push({ ts: MIDNIGHT + (h + 1) * HOUR, values: { ...total } });
    }
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${api.mqttPort}`, {
      clientId: `kw-e2e-energy-${meter.id}`,
      username: meter.mqtt.username,
      password: meter.mqtt.password,
    });
    try {
      const topic = `kilowatch/meters/${deviceKeyFromMac(meter.mac)}/readings`;
      await client.publishAsync(topic, JSON.stringify(readings), { qos: 1 });
    } finally {
      await client.endAsync();
    }
  }

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist'), env: { KW_ROLLUP_INTERVAL_MS: '1000' } });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await page.clock.setFixedTime(NOW);
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${api.url}/sign-in`);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);

    const home = await call<{ id: number }>('POST', '/locations', {
      name: 'Solar house',
      timezone: 'Europe/Warsaw',
    });
    expect(home.status).toBe(201);
    locationId = home.body.id;
    const tariff = await call<{ id: number }>('POST', `/locations/${locationId}/tariffs`, {
      name: 'G11 flat',
      group: 'G11',
      zone1Price: 1,
      zone2Price: 1,
      validFrom: '2026-01-01',
    });
    expect(tariff.status).toBe(201);
    expect(
      (
        await call('PUT', `/locations/${locationId}`, {
          name: 'Solar house',
          timezone: 'Europe/Warsaw',
          tariffId: tariff.body.id,
        })
      ).status,
    ).toBe(200);
    const claim = async (mac: string, name: string, typeCode: number, phases: 1 | 3) => {
      const res = await call<Claimed>('POST', '/devices', { mac, name, typeCode, phases, locationId });
      expect(res.status).toBe(201);
      return res.body;
    };
    const grid = await claim('AA:BB:CC:E2:E4:01', 'House connection', 16, 3);
    const pv = await claim('AA:BB:CC:E2:E4:02', 'Roof PV', 10, 3);
    const sub = await claim('AA:BB:CC:E2:E4:03', 'Kitchen', 2, 1);
    expect([grid.role, pv.role, sub.role]).toEqual(['grid', 'production', 'consumer']);
    await publish(grid, (h) => ({ eai1: sunny(h) ? 0 : 1, eae1: sunny(h) ? 2 : 0 }));
    await publish(pv, (h) => ({ eae1: sunny(h) ? 3 : 0 }));
    await publish(sub, () => ({ eai1: 0.5 }));
    const from = new Date(MIDNIGHT).toISOString();
    const to = new Date(NOW).toISOString();
    for (let i = 0; ; i++) {
      const f = await call<{ totals?: { consumption: number | null; subMeters: number | null } }>(
        'GET',
        `/locations/${locationId}/flows?from=${from}&to=${to}&interval=1h`,
      );
      if (f.body.totals?.consumption === 18 && f.body.totals.subMeters === 9) break;
      if (i > 120)
        throw new Error(`the published day never reached the flows: ${JSON.stringify(f.body.totals)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('shows today’s flows, shares and import cost, and the devices’ roles', {
    timeout: 120_000,
  }, async () => {
    const asked = page.waitForRequest((r) => r.url().includes(`/api/locations/${locationId}/flows`));
    await page.goto(`${api.url}/location/view/${locationId}`);
    const url = new URL((await asked).url());
    expect([url.searchParams.get('interval'), url.searchParams.get('from')]).toEqual([
      '1h',
      new Date(MIDNIGHT).toISOString(),
    ]);
    const card = page.getByTestId('location-energy');
    await card.getByTestId('flows-sankey').locator('svg').waitFor({ timeout: 30_000 });
    expect(await card.getByTestId('flows-consumption').textContent()).toBe('18 kWh');
    expect(await card.getByTestId('flows-production').textContent()).toBe('33 kWh');
    expect(await card.getByTestId('flows-self-sufficiency').textContent()).toBe('61%');
    expect(await card.getByTestId('flows-self-consumption').textContent()).toBe('33%');
    expect(await card.getByTestId('flows-untracked').textContent()).toBe('50%');
    expect(await card.getByTestId('flows-cost').textContent()).toMatch(/^PLN\s7\.00$/);
    expect(await card.getByTestId('flows-inconsistent').count()).toBe(0);
    // The diagram joins production, the grid and the home: three flows carried energy today.
    const sankey = card.getByTestId('flows-sankey');
    for (const node of ['node.production', 'node.home', 'node.gridIn', 'node.gridOut'] as const)
      await sankey.getByText(placesEn[`flows.${node}`], { exact: true }).waitFor();
    expect(await sankey.getByText(placesEn['flows.node.batteryIn'], { exact: true }).count()).toBe(0);
    // One bar per hour so far, stacked by source.
    expect(await card.getByTestId('flows-bars').locator('svg rect').count()).toBeGreaterThanOrEqual(18);
    // The devices' roles, by name.
    const roles = await page.getByTestId('location-device-role').allTextContents();
    expect(roles).toEqual([devicesEn['role.grid'], devicesEn['role.production'], devicesEn['role.consumer']]);
    expect(errors).toEqual([]);
  });

  it('asks for this month by days when the period changes, with the same day in it', {
    timeout: 60_000,
  }, async () => {
    const card = page.getByTestId('location-energy');
    const asked = page.waitForResponse((r) => r.url().includes('/flows') && r.url().includes('interval=1d'));
    await card.getByTestId('flows-period').getByText(placesEn['flows.period.month']).click();
    const answer = (await (await asked).json()) as { t: string[]; totals: { consumption: number } };
    expect(answer.t[0]).toBe(new Date(Date.UTC(2026, 4, 31, 22)).toISOString());
    expect(answer.t).toHaveLength(10);
    expect(answer.totals.consumption).toBe(18);
    await expect.poll(() => card.getByTestId('flows-consumption').textContent()).toBe('18 kWh');
  });

  it('shows today’s consumption, self-sufficiency and cost per location on the dashboard', {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${api.url}/dashboard`);
    const tile = page.getByTestId('today-location').filter({ hasText: 'Solar house' });
    await tile.getByTestId('today-consumption').filter({ hasText: 'kWh' }).waitFor({ timeout: 30_000 });
    expect(await tile.getByTestId('today-consumption').textContent()).toBe('18 kWh');
    expect(await tile.getByTestId('today-self-sufficiency').textContent()).toBe('61%');
    expect(await tile.getByTestId('today-cost').textContent()).toMatch(/^PLN\s7\.00$/);
    await tile.getByRole('link', { name: 'Solar house' }).click();
    await page.waitForURL(new RegExp(`/location/view/${locationId}$`));
    expect(errors).toEqual([]);
  });
});
