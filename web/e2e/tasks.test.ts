/**
 * Everyday tasks finished in the browser against the real API (embedded deployment), in headless
 * Chromium: a device is edited (renamed, moved to a location) and the dashboard shows the change, a
 * server refusal lands on its field, the mailed password-reset link opens a form that sets a new
 * password that signs in, and a fresh account adds a meter whose first reading, published over MQTT
 * with the settings the screen showed, appears live.
 *
 * Over 500 lines on purpose: every task runs on the one API process and the one browser page started in
 * `beforeAll` (the most expensive part of the run), and the last case checks that page's console across
 * all of them. Split, each file would start the API and Chromium again.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  COMBINED_PARAMS,
  DEFAULT_TIMEZONE,
  detailsPageFor,
  detailsPathFor,
  METER_PASSWORD_PATTERN,
  PARAM_NAMES,
} from '@kilowatch/core';
import mqtt from 'mqtt';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatValue } from '../src/charts/options.ts';
import { TABLE_MAX_DAYS } from '../src/features/analytics/consumptionTable.ts';
import { en } from '../src/i18n/locales/en.ts';
import { formatDay } from '../src/lib/time.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  startApi,
  WEB_DIR,
} from '../src/testing.ts';
import { callAsPage } from './api-call.ts';
import { explainFailures } from './explain.ts';
import { answerTo, asksRange, clickCalendarDays, localDayBefore, localDayStart } from './picking.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`tasks e2e skipped: ${skip}`);

const SHOTS = join(WEB_DIR, 'e2e/screenshots');

/** The whole local days a request's `from`–`to` spans (a DST day's hour either way rounds off). */
const spanDays = (u: URL) =>
  Math.round(
    (Date.parse(u.searchParams.get('to') ?? '') - Date.parse(u.searchParams.get('from') ?? '')) / 86_400_000,
  );

interface ApiDevice {
  id: number;
  name: string;
  location: { id: number; name: string } | null;
  billingStart?: string;
}

describe.skipIf(skip !== null)('user tasks against the embedded API', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist'), env: { KW_DEMO_HISTORY_DAYS: '2' } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch: the refusals provoked below (400) and a busy server's 503.
      if (msg.type() === 'error' && !/status of (400|404|503)/.test(msg.text()))
        consoleErrors.push(msg.text());
    });
    // A server without meter connection state answers its endpoint 404 (the screen then waits on the hub);
    // any other 404 is an error.
    page.on('response', (res) => {
      if (res.status() === 404 && !/\/api\/devices\/\d+\/connection$/.test(new URL(res.url()).pathname))
        consoleErrors.push(`404 ${res.url()}`);
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  /** The zone the signed-in profile shows times in (the calendar's days are its local days). */
  async function profileZone(): Promise<string> {
    return (await page.evaluate(() => localStorage.getItem('kw.timezone'))) || DEFAULT_TIMEZONE;
  }

  const call = callAsPage(
    () => page,
    () => api.url,
  );

  /** Starts signed out (the page must be on the app's origin to reach its storage). */
  async function forgetSession() {
    if (!page.url().startsWith(api.url)) await page.goto(`${api.url}/sign-in`);
    await page.evaluate(() => localStorage.clear());
  }

  async function shot(name: string) {
    mkdirSync(SHOTS, { recursive: true });
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  async function signIn(email: string, password: string) {
    await page.goto(`${api.url}/sign-in`);
    await page.getByLabel(en['signIn.email']).fill(email);
    await page.locator('input[autocomplete=current-password]').fill(password);
    await page.getByRole('button', { name: en['signIn.submit'] }).click();
    await page.waitForURL(/\/dashboard/);
  }

  it('edits a device: renamed and moved to a location, the dashboard shows it', async () => {
    await page.goto(`${api.url}/sign-in`);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);
    const devices = (await call<ApiDevice[]>('GET', '/devices')).body;
    const locations = (await call<{ id: number; name: string }[]>('GET', '/locations')).body;
    const device = devices[0]!;
    const target = locations.find((l) => l.id !== device.location?.id) ?? locations[0]!;

    await page.goto(`${api.url}/edit-device/${device.id}`);
    const form = page.getByTestId('edit-device-form');
    await form.waitFor();
    // A name the server refuses (too long): its message shows on the name field, not only in a toast.
    await page.getByTestId('edit-name').fill('x'.repeat(101));
    await page.getByTestId('edit-save').click();
    const nameField = page.getByTestId('edit-name');
    await page.waitForFunction(
      () => document.querySelector('[data-testid=edit-name]')?.getAttribute('aria-invalid') === 'true',
    );
    const described = await nameField.getAttribute('aria-describedby');
    expect(described).toBeTruthy();
    expect(
      await page.locator(`[id="${described?.split(' ').find((id) => id.endsWith('error'))}"]`).textContent(),
    ).toMatch(/\S/);

    const newName = `Renamed ${Date.now() % 100000}`;
    await page.getByTestId('edit-name').fill(newName);
    await page.getByTestId('edit-location').click();
    await page.getByRole('option', { name: target.name, exact: true }).click();
    // Typed as a day (ISO is read in every language); the calendar below the field closes when it is left.
    await page.getByTestId('edit-billing-start').fill('2026-01-01');
    await page.getByTestId('edit-billing-start').blur();
    await page.getByTestId('edit-save').click();
    await page.getByText(en['msg.saved']).first().waitFor();
    await page.waitForURL((u) => !u.pathname.startsWith('/edit-device'));

    const saved = (await call<ApiDevice>('GET', `/devices/${device.id}`)).body;
    expect(saved.name).toBe(newName);
    expect(saved.location?.id).toBe(target.id);
    expect(saved.billingStart).toBe('2026-01-01');

    await page.goto(`${api.url}/dashboard`);
    const row = page.getByTestId('device-row').filter({ hasText: newName });
    await row.waitFor();
    expect(await row.textContent()).toContain(target.name);
  });

  it('draws a comparison over a year (daily bands) and over a custom range, named in words', {
    timeout: 120_000,
  }, async () => {
    const devices = (await call<(ApiDevice & { typeCode: number; phases?: number })[]>('GET', '/devices'))
      .body;
    const meter = devices.find((d) => d.typeCode === 1 && d.phases !== 1) ?? devices[0]!;
    const created = await call<{ id: number }>('POST', '/comparisons', {
      name: 'Year view',
      members: [
        { deviceId: meter.id, param: 'vave1' },
        { deviceId: meter.id, param: 'power3phases' },
      ],
      grouped: false,
    });
    expect(created.status).toBe(201);
    await page.goto(`${api.url}/analytics?tab=comparisons&cmp=${created.body.id}`);
    const view = page.getByTestId('comparison-view');
    await view.getByTestId('comparison-data').waitFor();

    const yearAnswer = answerTo(
      page,
      (u) => u.pathname.endsWith(`/comparisons/${created.body.id}/data`) && spanDays(u) >= 364,
      "the comparison's year",
    );
    await view.getByTestId('range-presets').getByText(en['range.year'], { exact: true }).click();
    const answer = (await (await yearAnswer).json()) as {
      interval: string;
      blocks: { data: { t: number[]; series: Record<string, { min?: unknown[]; max?: unknown[] }> } }[];
    };
    // A year is 365 daily buckets with each day's min and max, not 35,000 raw points.
    expect(answer.interval).toBe('1d');
    expect(answer.blocks[0]!.data.t.length).toBeGreaterThanOrEqual(365);
    expect(answer.blocks[0]!.data.t.length).toBeLessThanOrEqual(367);
    expect(Object.values(answer.blocks[0]!.data.series)[0]?.max).toBeDefined();
    await view.locator('[data-testid=comparison-data][data-interval="1d"]').waitFor();
    expect(await view.locator('canvas').count()).toBeGreaterThanOrEqual(2);
    const text = (await view.textContent()) ?? '';
    expect(text).toContain('Voltage L1');
    expect(text).toContain('Power, total');
    expect(text).not.toMatch(/\b(vave1|power3phases)\b/);
    await shot('comparison-year');

    // Yesterday and today, picked on the calendar (a month back first on the 1st of a month).
    const tz = await profileZone();
    const [yesterday, today] = [localDayBefore(1, tz), localDayBefore(0, tz)];
    const range = [localDayStart(yesterday, tz), localDayStart(localDayBefore(-1, tz), tz)] as const;
    await view.getByTestId('range-presets').getByText(en['range.custom'], { exact: true }).click();
    await view.getByTestId('range-custom').click();
    const customAnswer = answerTo(
      page,
      (u) => u.pathname.endsWith(`/comparisons/${created.body.id}/data`) && asksRange(u, ...range),
      `the comparison's data from ${yesterday} to the end of ${today}`,
    );
    await clickCalendarDays(page, today, [yesterday, today]);
    expect((await customAnswer).ok()).toBe(true);
    await view.getByTestId('comparison-data').waitFor();
    expect(await view.locator('canvas').count()).toBeGreaterThanOrEqual(2);
  });

  it('draws a device chart over a year (daily bands, interval chosen for it) and over a custom range, with a loading cue between', {
    timeout: 120_000,
  }, async () => {
    const devices = (await call<(ApiDevice & { typeCode: number; phases?: 1 | 3 })[]>('GET', '/devices'))
      .body;
    const meter = devices.find((d) => d.typeCode === 1 && d.phases !== 1) ?? devices[0]!;
    const seriesOver = (minDays: number, what: string) =>
      answerTo(
        page,
        (u) => u.pathname.endsWith(`/api/devices/${meter.id}/series`) && spanDays(u) >= minDays,
        what,
      );
    await page.goto(`${api.url}${detailsPathFor(meter.id, meter.typeCode, meter.phases ?? 3)}`);
    const voltage = page.getByTestId('chart-voltage');
    await voltage.locator('canvas').first().waitFor({ timeout: 20_000 });

    // A year: no interval asked, so the API picks daily buckets with each day's min and max.
    const yearAnswer = seriesOver(364, "the meter's year");
    await page.getByTestId('range-presets').getByText(en['details.range.year'], { exact: true }).click();
    const year = await yearAnswer;
    expect(new URL(year.url()).searchParams.get('interval')).toBeNull();
    const body = (await year.json()) as {
      interval: string;
      t: number[];
      series: Record<string, { min?: unknown[]; max?: unknown[] }>;
    };
    expect(body.interval).toBe('1d');
    expect(body.t.length).toBeGreaterThanOrEqual(365);
    expect(body.t.length).toBeLessThanOrEqual(367);
    expect(body.series.vave1?.min).toBeDefined();
    expect(body.series.vave1?.max).toBeDefined();
    await voltage.locator('[data-testid=chart-interval][data-interval="1d"]').waitFor();
    expect(await voltage.locator('canvas').count()).toBeGreaterThanOrEqual(1);
    expect(await voltage.getByTestId('chart-interval').textContent()).toBe(en['details.int.1d']);

    // Another range: while its answer is on the way, the charts show a loading cue, not the year's data.
    let release: () => void = () => undefined;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const pattern = `**/api/devices/${meter.id}/series?**`;
    await page.route(pattern, async (route) => {
      await held;
      await route.continue();
    });
    const quarterAnswer = seriesOver(89, "the meter's quarter");
    await page.getByTestId('range-presets').getByText(en['details.range.quarter'], { exact: true }).click();
    await voltage.getByTestId('chart-loading').waitFor();
    expect(await voltage.locator('canvas').count()).toBe(0);
    release();
    await quarterAnswer;
    await page.unroute(pattern);
    await voltage.locator('canvas').first().waitFor();
    expect(await voltage.getByTestId('chart-loading').count()).toBe(0);

    // A custom range picked on the calendar draws too.
    await page.getByTestId('range-presets').getByText(en['details.range.custom'], { exact: true }).click();
    await page.getByTestId('range-incomplete').waitFor();
    // Yesterday and today: a range no preset has loaded (a month back first on the 1st of a month).
    const tz = await profileZone();
    const [yesterday, today] = [localDayBefore(1, tz), localDayBefore(0, tz)];
    const range = [localDayStart(yesterday, tz), localDayStart(localDayBefore(-1, tz), tz)] as const;
    await page.getByTestId('range-custom').click();
    const customAnswer = answerTo(
      page,
      (u) => u.pathname.endsWith(`/api/devices/${meter.id}/series`) && asksRange(u, ...range),
      `the series from ${yesterday} to the end of ${today}`,
    );
    await clickCalendarDays(page, today, [yesterday, today]);
    expect((await customAnswer).ok()).toBe(true);
    await page.keyboard.press('Escape');
    await voltage.locator('canvas').first().waitFor();
  });

  it('shows the data log over a preset range and a custom one', { timeout: 60_000 }, async () => {
    const devices = (await call<(ApiDevice & { typeCode: number; phases?: 1 | 3 })[]>('GET', '/devices'))
      .body;
    const meter = devices.find((d) => d.typeCode === 1 && d.phases !== 1) ?? devices[0]!;
    await page.goto(`${api.url}/device/data-log?device=${meter.id}`);
    await page.locator('.mantine-MultiSelect-pill').first().waitFor({ timeout: 10_000 });
    const monthAnswer = answerTo(
      page,
      (u) => u.pathname.endsWith(`/api/devices/${meter.id}/readings`),
      "the month's readings",
    );
    await page.getByTestId('range-presets').getByText(en['range.month'], { exact: true }).click();
    await page.getByRole('button', { name: en['log.show'] }).click();
    const url = new URL((await monthAnswer).url());
    const span = Date.parse(url.searchParams.get('to')!) - Date.parse(url.searchParams.get('from')!);
    // 30 local days: 720 hours, one more or less across a DST change.
    expect(Math.abs(span - 30 * 86_400_000)).toBeLessThanOrEqual(3_600_000);
    expect(await page.getByTestId('log-count').textContent()).toMatch(/[1-9]/);
    // Each reading's time in the user's zone, written as English writes it (03/10/2026, 14:30:00), not ISO.
    await page.getByTestId('log-time').first().waitFor();
    expect(await page.getByTestId('log-time').first().textContent()).toMatch(
      /^\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}:\d{2}$/,
    );

    // A custom range lacking its last day is refused with the reason; both days given, it shows.
    await page.getByTestId('range-presets').getByText(en['range.custom'], { exact: true }).click();
    await page.getByRole('button', { name: en['log.show'] }).click();
    expect(await page.getByTestId('log-range-error').textContent()).toBe(en['val.dateRange']);
    // Yesterday alone (its first and last day): a closed day, a month back on the 1st of a month.
    const tz = await profileZone();
    const [yesterday, today] = [localDayBefore(1, tz), localDayBefore(0, tz)];
    await page.getByTestId('range-custom').click();
    await clickCalendarDays(page, today, [yesterday, yesterday]);
    await page.keyboard.press('Escape');
    const from = localDayStart(yesterday, tz);
    const to = localDayStart(today, tz);
    const dayAnswer = answerTo(
      page,
      (u) => u.pathname.endsWith(`/api/devices/${meter.id}/readings`) && asksRange(u, from, to),
      `the readings of ${yesterday}`,
    );
    await page.getByRole('button', { name: en['log.show'] }).click();
    expect((await dayAnswer).ok()).toBe(true);
    // One local day: 23, 24 or 25 hours, never a fixed 86,400,000 ms past a DST change.
    expect(to - from).toBeGreaterThanOrEqual(23 * 3_600_000);
    expect(to - from).toBeLessThanOrEqual(25 * 3_600_000);
    expect(await page.getByTestId('log-range-error').count()).toBe(0);
  });

  /**
   * Catalogue codes visible on the page: in its text, in the values of its visible inputs and in any open
   * option list. `alarm` and `balance` are English words as well as codes, so they are not looked for.
   */
  async function rawCodesShown(): Promise<string[]> {
    const codes = [...new Set([...PARAM_NAMES, ...COMBINED_PARAMS.map((p) => p.name)])].filter(
      (c) => c !== 'alarm' && c !== 'balance',
    );
    return page.evaluate((codes) => {
      const inputs = [...document.querySelectorAll('input')]
        .filter((i) => i.offsetParent !== null && i.type !== 'hidden')
        .map((i) => i.value);
      // biome-ignore lint/performance/useDomNodeTextContent: only rendered (visible) text counts here
      const text = [document.body.innerText, ...inputs].join('\n');
      return codes.filter((c) => new RegExp(`(?<![A-Za-z0-9_])${c}(?![A-Za-z0-9_])`).test(text));
    }, codes);
  }

  it('shows no raw catalogue code on the device pages, the data log, the heatmap and a comparison', {
    timeout: 180_000,
  }, async () => {
    const devices = (await call<(ApiDevice & { typeCode: number; phases?: 1 | 3 })[]>('GET', '/devices'))
      .body;
    const shown: string[] = [];
    const look = async (where: string) => {
      for (const code of await rawCodesShown()) shown.push(`${where}: ${code}`);
    };

    for (const d of devices) {
      await page.goto(`${api.url}${detailsPathFor(d.id, d.typeCode, d.phases ?? 3)}`);
      await page.getByTestId('live-values').waitFor();
      await page.locator('canvas').first().waitFor({ timeout: 20_000 });
      await page.waitForLoadState('networkidle');
      await look(`device ${d.name}`);
      // Voltage bands only where there is a voltage.
      const page_ = detailsPageFor(d.typeCode, d.phases ?? 3);
      if (page_ === 'thermostat' || page_ === 'three-phase' || page_ === 'single-phase')
        expect(await page.getByText(en['details.limits'], { exact: true }).count(), d.name).toBe(
          page_ === 'thermostat' ? 0 : 1,
        );
      // The billing start is a date on the overview (in English: 01/31/2026), never the instant of its UTC
      // midnight.
      if (d.billingStart) {
        await page.goto(`${api.url}/device/overview/${d.id}`);
        await page.getByText(formatDay(d.billingStart, 'en'), { exact: true }).first().waitFor();
        await page.goBack();
        await page.getByTestId('live-values').waitFor();
      }
      // "Provide meter value" offers only registers the device reports, by name.
      const latest = (await call<{ values: Record<string, unknown> }>('GET', `/devices/${d.id}/latest`)).body;
      const register = page.getByTestId('meter-value-register');
      if (await register.count()) {
        await register.click();
        await page.getByRole('option').first().waitFor();
        const options = await page.getByRole('option').allTextContents();
        await look(`device ${d.name}, registers`);
        await page.keyboard.press('Escape');
        const registers = [
          'energy3phases_import',
          'energy3phases_export',
          'eai1',
          'eai2',
          'eai3',
          'eae1',
          'eae2',
          'eae3',
        ];
        expect(options.length).toBe(registers.filter((r) => r in latest.values).length);
      }
    }

    // The data log: chips, columns and the parameter list.
    const meter = devices.find((d) => d.typeCode === 1 && d.phases !== 1) ?? devices[0]!;
    await page.goto(`${api.url}/device/data-log?device=${meter.id}`);
    await page.locator('.mantine-MultiSelect-pill').first().waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: en['log.show'] }).click();
    await page.locator('table thead th').nth(1).waitFor({ timeout: 15_000 });
    expect(await page.locator('table thead th').nth(1).textContent()).toMatch(/^[A-Z].* \(\S+\)$/);
    await look('data log');
    await page.getByRole('combobox', { name: en['log.params'] }).click();
    await page.getByRole('option').first().waitFor();
    await look('data log, parameter list');
    await page.keyboard.press('Escape');

    // The heatmap: its title and parameter list; a PV installation opens on its production (export).
    const solar = devices.find((d) => detailsPageFor(d.typeCode, d.phases ?? 3) === 'solar');
    if (solar) {
      const heatmapAnswer = page.waitForResponse((r) => r.url().includes(`/api/devices/${solar.id}/heatmap`));
      await page.goto(`${api.url}/analytics?tab=heatmap&device=${solar.id}`);
      const asked = new URL((await heatmapAnswer).url()).searchParams.get('param');
      expect(asked).toBe('eae');
      await page.getByTestId('heatmap-card').waitFor();
      expect(await page.getByTestId('heatmap-card').textContent()).toContain(
        `${en['param.eae']}, total of ${solar.name}`,
      );
    } else {
      await page.goto(`${api.url}/analytics?tab=heatmap&device=${meter.id}`);
    }
    await page.waitForLoadState('networkidle');
    await look('heatmap');
    await page.getByTestId('heatmap-param').click();
    await page.getByRole('option').first().waitFor();
    await look('heatmap, parameter list');
    await page.keyboard.press('Escape');

    // A comparison of a phase voltage and the total power.
    const created = await call<{ id: number }>('POST', '/comparisons', {
      name: 'Codes check',
      members: [
        { deviceId: meter.id, param: 'vave1' },
        { deviceId: meter.id, param: 'power3phases' },
      ],
      grouped: true,
    });
    expect(created.status).toBe(201);
    await page.goto(`${api.url}/analytics?tab=comparisons&cmp=${created.body.id}`);
    await page.getByTestId('comparison-data').waitFor();
    await look('comparison');

    expect(shown).toEqual([]);

    // A consumption table from 2020 by day says the range is too long instead of thousands of empty rows.
    await page.goto(`${api.url}/analytics?tab=consumption&devices=${meter.id}&cfrom=2020-01-01&interval=1d`);
    expect(await page.getByTestId('consumption-too-long').textContent()).toBe(
      en['analytics.tableTooLong.day'].replace('{max}', String(TABLE_MAX_DAYS['1d'])),
    );
    expect(await page.getByTestId('consumption-table').count()).toBe(0);
  });

  it('never scrolls sideways on a 390 px phone', { timeout: 180_000 }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const devices = (await call<(ApiDevice & { typeCode: number; phases?: 1 | 3 })[]>('GET', '/devices'))
      .body;
    const locations = (await call<{ id: number }[]>('GET', '/locations')).body;
    const comparisons = (await call<{ id: number }[]>('GET', '/comparisons')).body;
    const paths = [
      '/dashboard',
      ...devices.map((d) => detailsPathFor(d.id, d.typeCode, d.phases ?? 3)),
      '/analytics?tab=heatmap',
      '/analytics?tab=consumption',
      `/analytics?tab=comparisons${comparisons[0] ? `&cmp=${comparisons[0].id}` : ''}`,
      '/location/index',
      ...locations.map((l) => `/location/view/${l.id}`),
      '/device/data-log',
      '/device/add',
    ];
    const wide: string[] = [];
    for (const path of paths) {
      await page.goto(`${api.url}${path}`);
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await page.waitForLoadState('networkidle');
      await page.waitForTimeout(300);
      const sizes = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
      }));
      if (sizes.scroll > sizes.viewport) wide.push(`${path}: ${sizes.scroll} > ${sizes.viewport}`);
      if (path === '/dashboard') await shot('phone-dashboard');
      if (path.startsWith('/device-details')) await shot('phone-device');
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(wide).toEqual([]);
  });

  it("shows 'Try again!' once however often it fails, clears it on success, and keeps the search box free", async () => {
    await forgetSession();
    const email = `toasts-${Date.now()}@example.test`;
    const registered = await fetch(`${api.url}/api/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: 'right-password-1', fullName: 'Toast Tester' }),
    });
    expect(registered.status).toBe(201);
    await page.goto(`${api.url}/sign-in`);
    const toasts = page.locator('.mantine-Notification-root');
    const failed = toasts.filter({ hasText: en['msg.loginFailed'] });
    await page.getByLabel(en['signIn.email']).fill(email);
    await page.locator('input[autocomplete=current-password]').fill('wrong-password-1');
    for (let i = 0; i < 3; i++) {
      const answered = page.waitForResponse((r) => r.url().includes('/api/account/login'));
      await page.getByRole('button', { name: en['signIn.submit'] }).click();
      await answered;
      await failed.first().waitFor();
    }
    expect(await failed.count()).toBe(1);

    await page.locator('input[autocomplete=current-password]').fill('right-password-1');
    await page.getByRole('button', { name: en['signIn.submit'] }).click();
    await page.waitForURL(/\/dashboard/);
    const success = toasts.filter({ hasText: en['msg.loginSuccess'] });
    await success.first().waitFor();
    await failed.first().waitFor({ state: 'detached' });
    // The toast and the dashboard's search box do not overlap.
    const search = await page.getByTestId('device-search').boundingBox();
    const toast = await success.first().boundingBox();
    expect(search && toast).toBeTruthy();
    const overlap =
      search!.x < toast!.x + toast!.width &&
      toast!.x < search!.x + search!.width &&
      search!.y < toast!.y + toast!.height &&
      toast!.y < search!.y + search!.height;
    expect(overlap).toBe(false);
  });

  it('opens the mailed reset link on a reset form, and the new password signs in', async () => {
    await forgetSession();
    const email = `reset-${Date.now()}@example.test`;
    const registered = await fetch(`${api.url}/api/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: 'first-password-1', fullName: 'Reset Tester' }),
    });
    expect(registered.status).toBe(201);

    await page.goto(`${api.url}/sign-in?view=forgot`);
    await page.getByLabel(en['signIn.email']).fill(email);
    await page.getByRole('button', { name: en['reset.send'] }).click();
    await page.getByText(en['reset.sent']).waitFor();

    // Without a mailer the API writes the mail to its log (docs/configuration.md): the link is read there.
    let link: string | undefined;
    for (let i = 0; i < 50 && !link; i++) {
      const mail = api
        .output()
        .split('\n')
        .filter((l) => l.includes(email) && l.includes('reset-password'))
        .pop();
      link = mail?.match(/https?:\/\/[^\s"\\]+\/reset-password\?token=[\w-]+/)?.[0];
      if (!link) await new Promise((r) => setTimeout(r, 200));
    }
    expect(link, 'the reset link in the API log').toBeTruthy();
    expect(new URL(link!).origin).toBe(api.url);

    await page.goto(link!);
    await page.getByRole('heading', { name: en['reset.title'] }).waitFor();
    expect(new URL(page.url()).searchParams.get('token')).toBe(new URL(link!).searchParams.get('token'));
    await page.getByLabel(en['reset.newPassword']).fill('second-password-2');
    await page.getByRole('button', { name: en['reset.setPassword'] }).click();
    await page.getByText(en['reset.done']).waitFor();

    // The link works once: opened again, the form says the token is no good.
    await page.goto(link!);
    await page.getByLabel(en['reset.newPassword']).fill('third-password-3');
    await page.getByRole('button', { name: en['reset.setPassword'] }).click();
    await page.getByRole('alert').waitFor();

    await signIn(email, 'second-password-2');
    await page.getByTestId('devices-empty').waitFor();
  });

  it('adds a meter through the screens; a reading published with the shown settings shows live', {
    timeout: 180_000,
  }, async () => {
    await forgetSession();
    const email = `meter-${Date.now()}@example.test`;
    const password = 'meter-password-1';
    const registered = await fetch(`${api.url}/api/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password, fullName: 'New Meter Owner' }),
    });
    expect(registered.status).toBe(201);
    await signIn(email, password);
    await page.getByTestId('devices-empty').waitFor();
    const home = await call<{ id: number; name: string }>('POST', '/locations', {
      name: 'Cottage',
      timezone: 'Europe/Warsaw',
    });
    expect(home.status).toBe(201);

    // The analytics page's "claim a meter" leads to the same flow as the dashboard's button.
    await page.goto(`${api.url}/analytics`);
    await page.getByTestId('analytics-add-device').click();
    await page.waitForURL(/\/device\/add$/);
    await page.goto(`${api.url}/dashboard`);
    await page.getByTestId('add-device').click();
    await page.waitForURL(/\/device\/add$/);

    const mac = `02:00:00:${[1, 2, 3]
      .map(() =>
        Math.floor(Math.random() * 256)
          .toString(16)
          .padStart(2, '0'),
      )
      .join(':')}`;
    const key = mac.replace(/:/g, '');
    // A bad MAC is refused on its field before anything is sent.
    await page.getByTestId('add-name').fill('Workshop meter');
    await page.getByTestId('add-mac').fill('12:34');
    await page.getByTestId('add-claim').click();
    await page.getByText(en['add.val.mac']).waitFor();
    await page.getByTestId('add-mac').fill(mac);
    await page.getByTestId('add-location').click();
    await page.getByRole('option', { name: 'Cottage', exact: true }).click();
    await page.getByTestId('add-claim').click();
    await page.getByTestId('connect-panel').waitFor();
    await page.getByTestId('add-waiting').waitFor();
    await shot('add-device-connect');

    const shown = async (id: string) =>
      (await page.getByTestId(id).count()) > 0 ? ((await page.getByTestId(id).textContent()) ?? '') : null;
    const host = await shown('conn-host');
    const port = Number(await shown('conn-port'));
    const username = await shown('conn-username');
    const secret = await shown('conn-password');
    const topic = await shown('conn-topic');
    expect(host).toBe('127.0.0.1');
    expect(topic).toBe(`kilowatch/meters/${key}/readings`);
    const devices = (await call<(ApiDevice & { mac: string; typeCode: number })[]>('GET', '/devices')).body;
    const claimed = devices.find((d) => d.mac.replace(/:/g, '').toLowerCase() === key);
    expect(claimed?.name).toBe('Workshop meter');
    expect(claimed?.location?.name).toBe('Cottage');

    // The meter's own broker account, as the screen showed it: its device key and a new random password.
    expect(username).toBe(key);
    expect(secret).toMatch(METER_PASSWORD_PATTERN);
    const client = await mqtt.connectAsync(`mqtt://${host}:${port}`, {
      clientId: `kw-e2e-add-${Date.now()}`,
      username: username!,
      password: secret!,
    });
    try {
      // The example payload as shown, stamped now.
      const example = JSON.parse((await shown('conn-native-payload')) ?? '{}') as {
        values: Record<string, number>;
      };
      expect(Object.keys(example.values)).toContain('vave1');
      await client.publishAsync(topic!, JSON.stringify({ ts: Date.now(), values: example.values }), {
        qos: 1,
      });
      await page.getByTestId('add-arrived').waitFor({ timeout: 20_000 });
      await page.getByTestId('first-vave1').waitFor();
      expect(await page.getByTestId('first-vave1').textContent()).toContain('Voltage L1');
      await shot('add-device-arrived');

      await page.getByTestId('add-open-device').click();
      await page.waitForURL(new RegExp(`/device-details/${claimed?.id}$`));
      await page
        .getByTestId('hub-status')
        .and(page.locator('[data-state=connected]'))
        .waitFor({ timeout: 15_000 });
      const value = 219.87;
      // A meter sends a reading every few seconds; so does this one until the page shows it (the page's
      // live subscription may be answered after the first one went out on a busy machine).
      const send = () =>
        client.publishAsync(
          topic!,
          JSON.stringify({ ts: Date.now(), values: { vave1: value, vave2: 230, vave3: 230 } }),
          { qos: 1 },
        );
      await send();
      const resend = setInterval(() => void send().catch(() => {}), 3000);
      try {
        await page.waitForFunction(
          (text) => document.querySelector('[data-testid=live-vave1]')?.textContent === text,
          formatValue(value, 'V'),
          { timeout: 30_000, polling: 100 },
        );
      } finally {
        clearInterval(resend);
      }
    } finally {
      await client.endAsync();
    }
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
