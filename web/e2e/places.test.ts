/**
 * Locations, tariffs, tariff stats and the profile against the real API (embedded deployment with the
 * demo account), in headless Chromium: every screen renders with no console error and no serious axe
 * finding, a location and a tariff are edited and saved (and survive a reload), the week × 24 h
 * preview shows the G12 zones of docs/domain.md, the six groups are compared cheapest first under the
 * simulation label, the profile switches the interface language, and everything fits 375 and 576 px.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  seriousViolations,
  startApi,
  WEB_DIR,
} from '../src/testing.ts';
import { explainFailures } from './explain.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`places e2e skipped: ${skip}`);

const SHOTS = join(WEB_DIR, 'e2e/screenshots');

interface ApiLocation {
  id: number;
  name: string;
  city: string;
  code: string;
  timezone: string;
  tariffId: number | null;
}

interface ApiTariff {
  id: number;
  name: string;
  group: string;
  zone2Price: number;
  validTo: string | null;
}

describe.skipIf(skip !== null)('places screens against the embedded API', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let home: ApiLocation;
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    api = await startApi({
      webDist: inject('webDist'),
      env: { KW_DEMO_HISTORY_DAYS: '40' },
      waitForDemoHistory: true,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch; while the demo history is written in the background the API
      // sheds work with 503 (the client tries reads and saves again), which is expected here.
      if (msg.type() === 'error' && !/status of 503/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function get<T>(path: string): Promise<T> {
    const token = await page.evaluate(() => localStorage.getItem('kw.token'));
    const res = await fetch(`${api.url}/api${path}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status, `GET ${path}`).toBe(200);
    return (await res.json()) as T;
  }

  async function setTheme(mode: 'Light' | 'Dark') {
    await page.getByTestId('theme-switch').filter({ visible: true }).getByText(mode).click();
    await page.waitForFunction(
      (m) => document.documentElement.getAttribute('data-mantine-color-scheme') === m,
      mode.toLowerCase(),
    );
  }

  async function shot(name: string) {
    // Let notifications and transitions settle before the picture.
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** Picks an option of a Mantine select, typing first when it is searchable. */
  async function choose(testId: string, option: string | RegExp, type?: string) {
    const input = page.getByTestId(testId);
    await input.click();
    if (type !== undefined) await input.fill(type);
    await page.getByRole('option', { name: option }).first().click();
  }

  it('signs in to the demo and lists the locations', async () => {
    await page.goto(`${api.url}/location/index`);
    await page.waitForURL(/\/sign-in/);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/location\/index/);
    const locations = await get<ApiLocation[]>('/locations');
    expect(locations.length).toBeGreaterThanOrEqual(2);
    home = locations.find((l) => l.name === 'Home') ?? locations[0]!;
    await page.getByTestId('location-row').first().waitFor();
    const names = await page.getByTestId('location-row').locator('td:first-child a').allTextContents();
    expect(names.sort()).toEqual(locations.map((l) => l.name).sort());
    // The current tariff's name is shown once each location's versions have loaded.
    await page
      .getByTestId('location-row')
      .filter({ hasText: home.name })
      .getByRole('link', { name: /G12w/ })
      .waitFor();
    await page.getByRole('heading', { name: 'Locations', level: 1 }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await setTheme('Light');
    await shot('locations-light');
    await setTheme('Dark');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('locations-dark');
    await setTheme('Light');
  });

  it('shows a location with its tariffs and devices', async () => {
    await page
      .getByTestId('location-row')
      .filter({ hasText: home.name })
      .getByRole('link', { name: home.name, exact: true })
      .click();
    await page.waitForURL(new RegExp(`/location/view/${home.id}$`));
    await page.getByTestId('tariff-row').first().waitFor();
    const devices = await get<{ location: { id: number } | null }[]>('/devices');
    const here = devices.filter((d) => d.location?.id === home.id).length;
    expect(here).toBeGreaterThan(0);
    await page.getByTestId('location-device').first().waitFor();
    expect(await page.getByTestId('location-device').count()).toBe(here);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("shows the location's prosumer settlement per billing period", async () => {
    // The demo Home settles under net-metering at 8 kW (0.8 of the export banked).
    const card = page.getByTestId('location-settlement');
    await card.getByRole('heading', { name: /Net-metering/ }).waitFor();
    await card.getByTestId('settlement-caption').filter({ hasText: '80%' }).waitFor();
    const table = card.getByTestId('settlement-table');
    await table.waitFor();
    expect(await table.locator('tbody tr').count()).toBeGreaterThan(0);
    expect(await table.locator('thead th').allTextContents()).toEqual([
      'Billing period',
      'Credited',
      'Used',
      'To pay',
      'Left',
      'Expiring next period',
    ]);
    expect(await seriousViolations(page)).toEqual([]);

    // Settled since 2021: an earlier year is chosen, and its billing periods are asked for and shown.
    const years = card.getByTestId('settlement-year');
    const thisYear = Number(await years.inputValue());
    const asked = page.waitForResponse((r) => r.url().includes(`/api/locations/${home.id}/settlement`));
    await years.click();
    await page.getByRole('option', { name: String(thisYear - 1), exact: true }).click();
    const url = new URL((await asked).url());
    // That year in Warsaw: from its new year's midnight (CET, 23:00 UTC the day before) to the next one's.
    expect(url.searchParams.get('from')).toBe(`${thisYear - 2}-12-31T23:00:00.000Z`);
    expect(url.searchParams.get('to')).toBe(`${thisYear - 1}-12-31T23:00:00.000Z`);
    await table
      .locator('tbody tr')
      .last()
      .filter({ hasText: `12/31/${thisYear - 1}` })
      .waitFor();
  });

  it('uploads market prices as CSV: a bad row is named and nothing is stored, a good file is stored', async () => {
    const card = page.getByTestId('location-prices');
    const input = card.locator('input[type=file]');
    const bad = page.waitForResponse((r) => r.request().method() === 'PUT' && r.url().includes('/prices'));
    await input.setInputFiles({
      name: 'bad.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('start,price\nyesterday,0.5\n'),
    });
    expect((await bad).status()).toBe(400);
    await card
      .getByTestId('prices-refused')
      .getByText(/prices\.0\.start/)
      .waitFor();
    // Chromium logs the refused upload's 400 as a console error: it is the answer this case asked for.
    const expected = consoleErrors.findIndex((e) => /status of 400/.test(e));
    expect(expected).toBeGreaterThanOrEqual(0);
    consoleErrors.splice(expected, 1);
    // Three hours before the page's own now: the upload and the "last 30 days" count use one clock.
    const hour = 3_600_000;
    const now = await page.evaluate(() => Date.now());
    const starts = [3, 2, 1].map((k) => new Date(Math.floor(now / hour) * hour - k * hour).toISOString());
    const good = page.waitForResponse(
      (r) => r.request().method() === 'PUT' && r.url().includes('/prices') && r.status() !== 503,
    );
    await input.setInputFiles({
      name: 'rce.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(`start,price\n${starts.map((t, i) => `${t},0.${i + 3}`).join('\n')}\n`),
    });
    expect((await good).status()).toBe(200);
    await page
      .getByText(/Stored 3 prices/)
      .first()
      .waitFor();
    await card
      .getByTestId('prices-held')
      .filter({ hasText: /Prices in the last 30 days: 3,/ })
      .waitFor();
    expect(await card.getByTestId('prices-refused').count()).toBe(0);
    const held = await get<{ prices: { start: string; price: number }[] }>(
      `/locations/${home.id}/prices?from=${starts[0]}&to=${new Date(now + hour).toISOString()}`,
    );
    expect(held.prices.map((p) => p.price)).toEqual([0.3, 0.4, 0.5]);
    expect(await seriousViolations(page)).toEqual([]);
    // The later cases compare tariffs on the demo's own data: the prices go again.
    const token = await page.evaluate(() => localStorage.getItem('kw.token'));
    const del = await fetch(
      `${api.url}/api/locations/${home.id}/prices?from=${starts[0]}&to=${new Date(now + hour).toISOString()}`,
      { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } },
    );
    expect(del.status).toBe(204);
  });

  it('edits a location, checks the form and keeps the change across a reload', async () => {
    await page.getByTestId('edit-location').click();
    await page.waitForURL(new RegExp(`/location/edit/${home.id}$`));
    const name = page.getByTestId('location-name');
    await name.fill('');
    await name.blur();
    await page.getByText('Field cannot be empty.').waitFor();
    await page.getByTestId('save-location').click();
    await page.getByText('Unable to save data. Check form.').waitFor();
    await name.fill(home.name);
    await page.getByTestId('location-city').fill('Sopot');
    await page.getByTestId('location-code').fill('SOP-01');
    await choose('location-timezone', 'Europe/Warsaw', 'Warsaw');
    // The settlement as stored: net-metering at 8 kW; leaving it as it is keeps it.
    expect(await page.getByTestId('location-installed-kw').inputValue()).toBe('8');
    expect(await seriousViolations(page)).toEqual([]);
    const answer = page.waitForResponse(
      (r) =>
        r.request().method() === 'PUT' && r.url().endsWith(`/api/locations/${home.id}`) && r.status() !== 503,
    );
    await page.getByTestId('save-location').click();
    const res = await answer;
    expect(res.status(), await res.text()).toBe(200);
    await page.getByText('Data has been successfully saved.').first().waitFor();
    await page.waitForURL(new RegExp(`/location/view/${home.id}$`));
    await page.reload();
    await page.getByText('Sopot').first().waitFor();
    await page.getByText('SOP-01').first().waitFor();
    const saved = await get<ApiLocation>(`/locations/${home.id}`);
    expect({ city: saved.city, code: saved.code, timezone: saved.timezone }).toEqual({
      city: 'Sopot',
      code: 'SOP-01',
      timezone: 'Europe/Warsaw',
    });
  });

  it('creates a location and deletes it after confirming', async () => {
    await page.goto(`${api.url}/location/index`);
    await page.getByTestId('new-location').click();
    await page.waitForURL(/\/location\/edit\/new$/);
    await page.getByTestId('location-name').fill('Workshop');
    await page.getByTestId('location-city').fill('Gdynia');
    await page.getByTestId('save-location').click();
    await page.waitForURL(/\/location\/view\/\d+$/);
    await page.getByRole('heading', { name: 'Location: Workshop', level: 1 }).waitFor();
    const created = (await get<ApiLocation[]>('/locations')).find((l) => l.name === 'Workshop');
    expect(created?.timezone).toBe('Europe/Warsaw');
    await page.goto(`${api.url}/location/index`);
    const row = page.getByTestId('location-row').filter({ hasText: 'Workshop' });
    await row.getByRole('button', { name: 'Delete: Workshop' }).click();
    await page.getByText('Delete the location “Workshop” and all its tariffs? Its devices stay.').waitFor();
    await page.getByTestId('confirm-delete').click();
    await page.getByText('Location deleted').waitFor();
    await row.waitFor({ state: 'detached' });
    expect((await get<ApiLocation[]>('/locations')).map((l) => l.name)).not.toContain('Workshop');
  });

  it('edits a tariff: preview follows the group, a bad end date is refused, then it saves', async () => {
    const tariffId = home.tariffId!;
    await page.goto(`${api.url}/location/tariff-edit/${home.id}/${tariffId}`);
    const grid = page.getByTestId('schedule-grid');
    await grid.waitFor();
    const zonesOf = (day: string) =>
      grid
        .locator(`tr[data-day=${day}] td`)
        .evaluateAll((tds) => tds.map((td) => Number(td.getAttribute('data-zone'))));
    // The demo's Home tariff is G12w: the weekend is zone 2 all day.
    expect(await zonesOf('sat')).toEqual(Array(24).fill(2));
    // …and so are public holidays, shown as their own row.
    expect(await zonesOf('holiday')).toEqual(Array(24).fill(2));
    await choose('tariff-group', /^G12 —/);
    // docs/domain.md §Tariffs: G12 is cheaper 13:00–15:00 and 22:00–06:00, every day.
    const g12 = Array.from({ length: 24 }, (_, h) => (h < 6 || h === 13 || h === 14 || h >= 22 ? 2 : 1));
    await page.waitForFunction(
      () =>
        document
          .querySelector('[data-testid=schedule-grid] tr[data-day=sat] td[data-hour="12"]')
          ?.getAttribute('data-zone') === '1',
    );
    for (const day of ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'])
      expect(await zonesOf(day)).toEqual(g12);
    await page.getByTestId('legend-zone-2').waitFor();
    expect(await grid.locator('tr[data-day=holiday]').count()).toBe(0);
    // G11 has one price: the grid is zone 1 everywhere and only one price is asked.
    await choose('tariff-group', /^G11 —/);
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid=schedule-grid] td[data-zone="2"]').length === 0,
    );
    expect(await page.getByTestId('tariff-zone2Price').count()).toBe(0);
    await choose('tariff-group', /^G12 —/);
    await page.getByTestId('tariff-zone2Price').waitFor();

    await page.getByTestId('tariff-validTo').fill('2025-06-30');
    // The open calendar passes axe too: its month button is named by what it shows (WCAG 2.5.3).
    const calendar = page.locator('.mantine-DateInput-calendarHeaderLevel', { hasText: 'June 2025' });
    await calendar.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('tariff-validTo').blur();
    await calendar.waitFor({ state: 'detached' });
    await page.getByText('The end date must be later than the start date.').waitFor();
    await page.getByTestId('tariff-zone2Price').fill('abc');
    await page.getByTestId('tariff-zone2Price').blur();
    await page.getByText('Must be a valid number.').waitFor();
    await page.getByTestId('save-tariff').click();
    await page.getByText('Unable to save data. Check form.').first().waitFor();
    expect((await get<ApiTariff>(`/locations/${home.id}/tariffs/${tariffId}`)).group).toBe('G12w');

    await page.getByTestId('tariff-validTo').fill('');
    await page.getByTestId('tariff-zone2Price').fill('0,55');
    // Emptying the end date opened its calendar again; leaving the field closes it.
    await page.locator('.mantine-DateInput-calendarHeaderLevel').waitFor({ state: 'detached' });
    expect(await seriousViolations(page)).toEqual([]);
    await shot('tariff-edit-light');
    await setTheme('Dark');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('tariff-edit-dark');
    await setTheme('Light');
    await page.getByTestId('save-tariff').click();
    await page.waitForURL(new RegExp(`/location/view/${home.id}$`));
    await page.getByText('Data has been successfully saved.').first().waitFor();
    const saved = await get<ApiTariff>(`/locations/${home.id}/tariffs/${tariffId}`);
    expect({ group: saved.group, zone2Price: saved.zone2Price, validTo: saved.validTo }).toEqual({
      group: 'G12',
      zone2Price: 0.55,
      validTo: null,
    });
    await page.reload();
    await page.getByTestId('tariff-row').filter({ hasText: 'G12' }).filter({ hasText: '0.55' }).waitFor();
  });

  it('adds a tariff version through the new-tariff form', async () => {
    await page.goto(`${api.url}/location/tariff-edit/${home.id}/new`);
    await page.getByTestId('tariff-name').fill('G12as 2027');
    await choose('tariff-group', /^G12as —/);
    await page.getByTestId('tariff-zone1Price').fill('1.1');
    await page.getByTestId('tariff-zone2Price').fill('0.5');
    await page.getByTestId('tariff-validFrom').fill('2027-01-01');
    await page.getByTestId('save-tariff').click();
    await page.waitForURL(new RegExp(`/location/view/${home.id}$`));
    const tariffs = await get<ApiTariff[]>(`/locations/${home.id}/tariffs`);
    expect(tariffs.map((t) => t.name)).toContain('G12as 2027');
    await page.getByTestId('tariff-row').filter({ hasText: 'G12as 2027' }).waitFor();
  });

  it('prices the tariff per zone and month and compares all six groups, cheapest first', {
    timeout: 300_000,
  }, async () => {
    const tariffId = home.tariffId!;
    const devices = await get<{ id: number; tariff: { id: number } | null }[]>('/devices');
    const device = devices.find((d) => d.tariff?.id === tariffId)!;
    // The demo history is written in the background: wait (bounded) until the device has energy.
    const to = new Date().toISOString();
    const from = new Date(Date.now() - 30 * 86_400_000).toISOString();
    let energy = 0;
    for (let i = 0; i < 90 && energy <= 0; i++) {
      energy = (await get<{ energy: number }>(`/tariffs/compare?deviceId=${device.id}&from=${from}&to=${to}`))
        .energy;
      if (energy <= 0) await new Promise((r) => setTimeout(r, 2000));
    }
    expect(energy).toBeGreaterThan(0);
    await page.goto(`${api.url}/stats/tariff/${tariffId}`);
    await page.getByTestId('simulated-label').waitFor();
    await page.getByTestId('compare-simulated').waitFor();
    await page.getByTestId('stats-table').waitFor();
    await page.getByTestId('stats-bars').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=comparison-row]').length === 6);
    const rows = await page.getByTestId('comparison-row').evaluateAll((trs) =>
      trs.map((tr) => ({
        group: tr.getAttribute('data-group'),
        cost: Number(tr.querySelector('[data-cost]')?.getAttribute('data-cost')),
      })),
    );
    expect(rows.map((r) => r.group).sort()).toEqual(['G11', 'G12', 'G12as', 'G12n', 'G12r', 'G12w']);
    const costs = rows.map((r) => r.cost);
    expect(costs).toEqual([...costs].sort((a, b) => a - b));
    expect(costs[0]!).toBeLessThan(costs[5]!);
    await page.getByText('not a basis for claims').first().waitFor();
    const total = await page.getByTestId('stats-total-cost').textContent();
    expect(total).toMatch(/\d/);
    expect(await seriousViolations(page)).toEqual([]);
    await shot('tariff-stats-light');
  });

  it('switches the interface language from the profile, then back', async () => {
    await page.goto(`${api.url}/user/profile`);
    await page.getByRole('heading', { name: 'User profile', level: 1 }).waitFor();
    expect(await page.getByTestId('profile-email').inputValue()).toMatch(/@/);
    expect(await page.getByTestId('profile-email').getAttribute('readonly')).not.toBeNull();
    // docs/spec.md §5: country and time zone are required.
    await page.getByTestId('profile-country').fill('');
    await page.getByTestId('profile-country').blur();
    await page.getByText('Country is required.').waitFor();
    await page.getByTestId('save-profile').click();
    await page.getByText('Unable to save data. Check form.').first().waitFor();
    await choose('profile-country', 'Poland (PL)', 'Poland');
    expect(await seriousViolations(page)).toEqual([]);
    await shot('profile-light');

    await choose('profile-language', 'Polski');
    await page.getByTestId('save-profile').click();
    await page.getByRole('heading', { name: 'Profil użytkownika', level: 1 }).waitFor();
    await page.getByText('Dane zostały zapisane.').first().waitFor();
    await page.getByRole('button', { name: 'Zapisz' }).waitFor();
    await page.getByText('Kraj').first().waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('pl');

    await choose('profile-language', 'Türkçe');
    await page.getByTestId('save-profile').click();
    await page.getByRole('heading', { name: 'Kullanıcı profili', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Kaydet' }).waitFor();
    await page.getByText('Ülke').first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${api.url}/location/index`);
    await page.getByRole('heading', { name: 'Konumlar', level: 1 }).waitFor();

    await page.goto(`${api.url}/user/profile`);
    await choose('profile-language', 'English');
    await page.getByTestId('save-profile').click();
    await page.getByRole('heading', { name: 'User profile', level: 1 }).waitFor();
    expect((await get<{ language: string }>('/account/userInfo')).language).toBe('en');
  });

  it('applies a saved time zone at once', async () => {
    await choose('profile-timezone', 'Europe/Istanbul', 'Istanbul');
    await page.getByTestId('save-profile').click();
    await page.getByText('Data has been successfully saved.').first().waitFor();
    await page.waitForFunction(() => localStorage.getItem('kw.timezone') === 'Europe/Istanbul');
    await choose('profile-timezone', 'Europe/Warsaw', 'Warsaw');
    await page.getByTestId('save-profile').click();
    await page.waitForFunction(() => localStorage.getItem('kw.timezone') === 'Europe/Warsaw');
    expect((await get<{ timezone: string }>('/account/userInfo')).timezone).toBe('Europe/Warsaw');
  });

  it('fits 375 and 576 px wide on every screen (wide tables scroll in their own box)', {
    timeout: 180_000,
  }, async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    const paths = [
      '/location/index',
      `/location/view/${home.id}`,
      `/location/edit/${home.id}`,
      '/location/edit/new',
      `/location/tariff-edit/${home.id}/${home.tariffId}`,
      `/location/tariff-edit/${home.id}/new`,
      `/stats/tariff/${home.tariffId}`,
      '/user/profile',
    ];
    for (const path of paths) {
      await page.goto(`${api.url}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      // Loaded: no skeleton left.
      await page.waitForFunction(() => document.querySelectorAll('.mantine-Skeleton-root').length === 0);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
      expect(await seriousViolations(page), path).toEqual([]);
    }
    // The mobile breakpoint (docs/spec.md §9): still no sideways scroll of the page.
    await page.setViewportSize({ width: 576, height: 800 });
    for (const path of paths) {
      await page.goto(`${api.url}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForFunction(() => document.querySelectorAll('.mantine-Skeleton-root').length === 0);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${path} at 576 px`).toBeLessThanOrEqual(0);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
