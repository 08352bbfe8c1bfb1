/**
 * The everyday screens as a new user meets them, against the real API (embedded deployment) in headless
 * Chromium: deleting a device lands on the dashboard, toasts stay clear of a form's actions and leave on
 * their own, the chart table tells readings seconds apart, "Remember me" decides whether the session
 * outlives the tab, the comparison picker offers only what a device measures, a meter sending only its
 * phases shows its totals, and numbers, badges and selects follow the interface language.
 *
 * Every case runs on the one API process and browser started in `beforeAll` (the expensive part).
 */
import { DEVICE_TYPES, detailsPageFor, detailsPathFor } from '@kilowatch/core';
import mqtt from 'mqtt';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bandVolts } from '../src/features/devices/quality.ts';
import { en } from '../src/i18n/locales/en.ts';
import { pl } from '../src/i18n/locales/pl.ts';
import { formatInstant } from '../src/lib/time.ts';
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
if (skip) console.warn(`polish e2e skipped: ${skip}`);

/** The query flag on which the page's storage is cleared before the app starts (`forgetSession`). */
const FORGET = 'kw-e2e-forget';

interface ApiDevice {
  id: number;
  name: string;
  typeCode: number;
  phases?: 1 | 3;
  mac: string;
}

interface Claimed extends ApiDevice {
  mqtt: { host: string; port: number; username?: string; password?: string; topics: { native: string } };
}

type Box = { x: number; y: number; width: number; height: number };
const overlaps = (a: Box, b: Box) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

function randomMac(): string {
  return `02:00:00:${[1, 2, 3]
    .map(() =>
      Math.floor(Math.random() * 256)
        .toString(16)
        .padStart(2, '0'),
    )
    .join(':')}`;
}

describe.skipIf(skip !== null)('the everyday screens, finished', () => {
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
    await page.addInitScript((flag) => {
      if (!location.search.includes(flag)) return;
      localStorage.clear();
      sessionStorage.clear();
      history.replaceState(null, '', location.pathname);
    }, FORGET);
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch: the refusals provoked below (400, 409) and a busy server's 503.
      if (msg.type() === 'error' && !/status of (400|404|409|503)/.test(msg.text()))
        consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  const call = callAsPage(
    () => page,
    () => api.url,
  );

  /**
   * Signs the page out by forgetting its storage before the app's own scripts run (the init script in
   * `beforeAll`), so that no request of the page it leaves goes out without a token (a 401 in the console).
   */
  async function forgetSession() {
    await page.goto(`${api.url}/sign-in?${FORGET}`);
    await page.waitForURL((u) => !u.search.includes(FORGET));
  }

  async function register(prefix: string): Promise<{ email: string; password: string }> {
    const email = `${prefix}-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.test`;
    const password = 'polish-password-1';
    const res = await fetch(`${api.url}/api/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password, fullName: 'Polish Tester' }),
    });
    expect(res.status).toBe(201);
    return { email, password };
  }

  async function signIn(email: string, password: string, remember = true) {
    await page.goto(`${api.url}/sign-in`);
    await page.getByLabel(en['signIn.email']).fill(email);
    await page.locator('input[autocomplete=current-password]').fill(password);
    const box = page.getByLabel(en['signIn.remember']);
    if ((await box.isChecked()) !== remember) await box.click();
    await page.getByRole('button', { name: en['signIn.submit'] }).click();
    await page.waitForURL(/\/dashboard/);
  }

  async function signInDemo() {
    await forgetSession();
    await page.goto(`${api.url}/sign-in`);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);
  }

  async function claim(name: string, typeCode: number = DEVICE_TYPES.threePhase.code): Promise<Claimed> {
    const res = await call<Claimed>('POST', '/devices', { mac: randomMac(), name, typeCode });
    expect(res.status).toBe(201);
    return res.body;
  }

  /** Publishes readings as the claimed meter, on the account its claim answered with. */
  async function publish(device: Claimed, readings: { ts: number; values: Record<string, number> }[]) {
    const { username, password, port } = device.mqtt;
    expect(username && password).toBeTruthy();
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, {
      clientId: `kw-e2e-polish-${Date.now()}`,
      username: username!,
      password: password!,
    });
    try {
      for (const r of readings)
        await client.publishAsync(device.mqtt.topics.native, JSON.stringify(r), { qos: 1 });
    } finally {
      await client.endAsync();
    }
  }

  async function deleteOnScreen(device: ApiDevice, lang: 'en' | 'pl' = 'en') {
    const m = CATALOGUES[lang];
    await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, device.phases ?? 3)}`);
    await page.getByRole('button', { name: m['details.deleteDevice'] }).click();
    const listed = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/devices' && r.request().method() === 'GET',
    );
    await page.getByRole('dialog').getByRole('button', { name: m['common.delete'], exact: true }).click();
    await page.waitForURL(/\/dashboard$/);
    await page.getByText(m['msg.deleted']).first().waitFor();
    // The device list fetched again after the delete: by then a stray request for the deleted device
    // would have sent the page to /404.
    await listed;
    await page.getByTestId('device-search').waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const left = (await call<ApiDevice[]>('GET', '/devices')).body;
    expect(left.map((d) => d.id)).not.toContain(device.id);
  }

  it('deleting a demo device or a claimed one lands on the dashboard (en, pl)', {
    timeout: 120_000,
  }, async () => {
    await signInDemo();
    const demoDevices = (await call<ApiDevice[]>('GET', '/devices')).body;
    const demo = demoDevices.find((d) => d.typeCode === DEVICE_TYPES.threePhase.code) ?? demoDevices[0]!;
    await deleteOnScreen(demo);

    await forgetSession();
    const account = await register('delete');
    await signIn(account.email, account.password);
    const claimed = await claim('Doomed meter');
    await switchLanguage('pl');
    await deleteOnScreen(claimed, 'pl');
  });

  for (const [viewport, lang] of [
    [{ width: 1280, height: 900 }, 'en'],
    [{ width: 390, height: 844 }, 'pl'],
  ] as const)
    it(`keeps toasts off a form's actions and lets them close while hovered (${viewport.width} px, ${lang})`, {
      timeout: 90_000,
    }, async () => {
      await page.setViewportSize(viewport);
      try {
        await signInDemo();
        if (lang !== 'en') await switchLanguage(lang);
        const device = (await call<ApiDevice[]>('GET', '/devices')).body[0]!;
        await page.goto(`${api.url}/edit-device/${device.id}`);
        await page.getByTestId('edit-device-form').waitFor();
        // A name the server refuses: the save fails with a toast.
        await page.getByTestId('edit-name').fill('x'.repeat(101));
        const save = page.getByTestId('edit-save');
        await save.scrollIntoViewIfNeeded();
        await save.click();
        const toast = page
          .locator('.mantine-Notification-root')
          .filter({ hasText: CATALOGUES[lang]['msg.saveFailed'] });
        await toast.first().waitFor();
        await page.waitForTimeout(400); // the toast's entry transition
        const toastBox = (await toast.first().boundingBox())!;
        const saveBox = (await save.boundingBox())!;
        expect(toastBox && saveBox).toBeTruthy();
        expect(overlaps(toastBox, saveBox)).toBe(false);
        // What a click on Save's centre hits is Save itself, not the toast.
        const hit = await page.evaluate(
          ({ x, y }) => document.elementFromPoint(x, y)?.closest('[data-testid=edit-save]') !== null,
          { x: saveBox.x + saveBox.width / 2, y: saveBox.y + saveBox.height / 2 },
        );
        expect(hit).toBe(true);
        // The pointer resting on the toast does not hold it open.
        await page.mouse.move(toastBox.x + toastBox.width / 3, toastBox.y + toastBox.height / 2);
        await toast.first().waitFor({ state: 'detached', timeout: 20_000 });
      } finally {
        await page.setViewportSize({ width: 1280, height: 900 });
      }
    });

  it('shows seconds in the chart table where readings are closer than a minute (en, pl)', {
    timeout: 90_000,
  }, async () => {
    await forgetSession();
    const account = await register('seconds');
    await signIn(account.email, account.password);
    const device = await claim('Fast meter');
    // Six readings 10 s apart, ending a minute before the API's clock, on a whole minute's start.
    const end = Math.floor((Date.now() - 60_000) / 60_000) * 60_000;
    const times = [50, 40, 30, 20, 10, 0].map((s) => end - s * 1000);
    await publish(
      device,
      times.map((ts, i) => ({ ts, values: { vave1: 230 + i, vave2: 231, vave3: 232 } })),
    );
    await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, 3)}`);
    await page.getByText(en['details.view.table'], { exact: true }).first().click();
    const tz = await page.evaluate(() => localStorage.getItem('kw.timezone'));
    const chart = page.getByTestId('chart-voltage');
    await chart
      .getByTestId('table-time')
      .nth(times.length - 1)
      .waitFor({ timeout: 30_000 });
    const shown = await chart.getByTestId('table-time').allTextContents();
    const expected = [...times].reverse().map((ts) => formatInstant(ts, tz ?? 'UTC', 'en', 'second'));
    expect(shown).toEqual(expected);
    expect(new Set(shown).size).toBe(times.length);

    // In Polish: the same six times, written as Polish writes them.
    await switchLanguage('pl');
    await page.getByText(pl['details.view.table'], { exact: true }).first().click();
    const polish = [...times].reverse().map((ts) => formatInstant(ts, tz ?? 'UTC', 'pl', 'second'));
    await chart
      .getByTestId('table-time')
      .filter({ hasText: polish[0]! })
      .first()
      .waitFor({ timeout: 30_000 });
    expect(await chart.getByTestId('table-time').allTextContents()).toEqual(polish);
  });

  it('keeps an unremembered session in its tab only, a remembered one across tabs', {
    timeout: 90_000,
  }, async () => {
    await forgetSession();
    const account = await register('remember');

    await signIn(account.email, account.password, false);
    const stored = await page.evaluate(() => ({
      tab: sessionStorage.getItem('kw.token'),
      local: localStorage.getItem('kw.token'),
      refreshLocal: localStorage.getItem('kw.refreshToken'),
    }));
    expect(stored.tab).toBeTruthy();
    expect(stored.local).toBeNull();
    expect(stored.refreshLocal).toBeNull();
    // A reload of the same tab keeps the session.
    await page.reload();
    await page.getByTestId('device-search').waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    // A new tab (and a restarted browser) starts signed out.
    const other = await context.newPage();
    try {
      await other.goto(`${api.url}/dashboard`);
      await other.waitForURL(/\/sign-in/);
    } finally {
      await other.close();
    }

    await forgetSession();
    await signIn(account.email, account.password, true);
    expect(await page.evaluate(() => sessionStorage.getItem('kw.token'))).toBeNull();
    expect(await page.evaluate(() => localStorage.getItem('kw.token'))).toBeTruthy();
    const remembered = await context.newPage();
    try {
      await remembered.goto(`${api.url}/dashboard`);
      await remembered.getByTestId('device-search').waitFor();
      expect(new URL(remembered.url()).pathname).toBe('/dashboard');
    } finally {
      await remembered.close();
    }
  });

  /** The interface language, as the language menu stores it; the page reloads into it. */
  async function switchLanguage(lang: 'en' | 'pl') {
    await page.evaluate((l) => localStorage.setItem('kw.language', l), lang);
    await page.reload();
  }

  const CATALOGUES = { en, pl } as const;

  for (const lang of ['en', 'pl'] as const)
    it(`offers per device what its type measures, no two options alike (${lang})`, {
      timeout: 90_000,
    }, async () => {
      const m = CATALOGUES[lang];
      await signInDemo();
      await switchLanguage(lang);
      const devices = (await call<ApiDevice[]>('GET', '/devices')).body;
      const meter = devices.find((d) => detailsPageFor(d.typeCode, d.phases ?? 3) === 'three-phase');
      const thermostat = devices.find((d) => detailsPageFor(d.typeCode, d.phases ?? 3) === 'thermostat');
      // The demo's fleet holds both.
      expect(meter).toBeDefined();
      expect(thermostat).toBeDefined();
      await page.goto(`${api.url}/analytics?tab=comparisons`);
      await page.getByTestId('new-comparison').click();
      await page.getByTestId('comparison-form').waitFor();
      await page.getByTestId('comparison-name').fill('Picker check');
      await page.getByTestId('add-member').click();
      await page.getByTestId('member-device').first().waitFor();

      const optionsFor = async (device: ApiDevice) => {
        await page.getByTestId('member-device').first().click();
        await page.getByRole('option', { name: device.name, exact: true }).click();
        await page.getByTestId('member-param').first().click();
        const listbox = page.getByRole('listbox').filter({ visible: true });
        await listbox.getByRole('option').first().waitFor();
        const labels = await listbox.getByRole('option').allTextContents();
        await page.keyboard.press('Escape');
        return labels;
      };

      const meterLabels = await optionsFor(meter!);
      expect(meterLabels.filter((l, i) => meterLabels.indexOf(l) !== i)).toEqual([]);
      expect(meterLabels).toContain(`${m['param.power3phases']} (W)`);
      expect(meterLabels).toContain(`${m['param.sumOfPhases'].replace('{name}', m['param.pave'])} (W)`);
      expect(meterLabels.some((l) => l.startsWith(m['param.tempmain']))).toBe(false);
      expect(meterLabels.some((l) => l.startsWith(m['param.vdc'].replace(' {n}', '')))).toBe(false);
      const thermoLabels = await optionsFor(thermostat!);
      expect(thermoLabels.some((l) => l.startsWith(m['param.tempmain']))).toBe(true);
      expect(thermoLabels.some((l) => l.startsWith(m['param.vave']))).toBe(false);
      expect(thermoLabels.filter((l, i) => thermoLabels.indexOf(l) !== i)).toEqual([]);
      await switchLanguage('en');
    });

  it('shows the total of a meter that sends only its phases, and names its type once (en, pl)', {
    timeout: 90_000,
  }, async () => {
    await forgetSession();
    const account = await register('phases');
    await signIn(account.email, account.password);
    const device = await claim('Phases only');
    // The claim screen's own native example: voltages and powers per phase, no totals.
    await publish(device, [
      {
        ts: Date.now() - 5_000,
        values: { vave1: 230.1, vave2: 229.4, vave3: 231, pave1: 120.5, pave2: 80, pave3: 300 },
      },
    ]);
    for (const lang of ['en', 'pl'] as const) {
      await switchLanguage(lang);
      await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, 3)}`);
      const total = page.getByTestId('live-power3phases');
      await total.waitFor();
      // 500.5 W, written as the language writes it.
      const expected = `${(500.5).toLocaleString(lang === 'pl' ? 'pl-PL' : 'en-US', { maximumFractionDigits: 1 })} W`;
      await page.waitForFunction(
        (text) => document.querySelector('[data-testid=live-power3phases]')?.textContent === text,
        expected,
        { timeout: 20_000, polling: 200 },
      );
      // No model and no location: the subtitle is the type's name, once.
      expect(await page.getByTestId('device-subtitle').textContent()).toBe(CATALOGUES[lang]['devtype.1']);
    }
    await switchLanguage('en');
  });

  it('writes numbers, the status badge and the selects in Polish', { timeout: 120_000 }, async () => {
    await signInDemo();
    await switchLanguage('pl');
    const devices = (await call<ApiDevice[]>('GET', '/devices')).body;
    const meter = devices.find((d) => detailsPageFor(d.typeCode, d.phases ?? 3) === 'three-phase')!;
    const limits = (await call<{ warning: number; critical: number }>('GET', `/devices/${meter.id}/limits`))
      .body;
    await page.goto(`${api.url}${detailsPathFor(meter.id, meter.typeCode, meter.phases ?? 3)}`);

    // The badge in the language.
    const badge = page.locator('[data-status]').first();
    await badge.waitFor();
    const status = (await badge.getAttribute('data-status')) as 'online' | 'offline' | 'weak-signal';
    expect(await badge.textContent()).toBe(pl[`status.${status}`]);
    expect(pl['status.online']).not.toBe(en['status.online']);

    // The voltage bands' limits with a decimal comma, as the measured values are.
    const pln = (x: number) => x.toLocaleString('pl-PL', { maximumFractionDigits: 1, useGrouping: false });
    const band = (percent: number) => {
      const { low, high } = bandVolts(percent);
      return pl['export.quality.band'].replace('{low}', pln(low)).replace('{high}', pln(high));
    };
    const headers = page.locator('th');
    await headers
      .filter({ hasText: band(limits.warning) })
      .first()
      .waitFor({ timeout: 20_000 });
    await headers
      .filter({ hasText: band(limits.critical) })
      .first()
      .waitFor();
    const tableText = (await page.locator('main').textContent()) ?? '';
    expect(tableText).not.toMatch(/\d\.\d+ V/);

    // The interval select shows its value whole, whatever it is set to.
    const interval = page.getByTestId('interval-select');
    const whole = async (input: typeof interval) =>
      input.evaluate((el) => (el as HTMLInputElement).scrollWidth <= (el as HTMLInputElement).clientWidth);
    await interval.click();
    const choices = await page
      .getByRole('listbox')
      .filter({ visible: true })
      .getByRole('option')
      .allTextContents();
    await page.keyboard.press('Escape');
    expect(choices).toContain(pl['details.int.auto']);
    for (const choice of choices) {
      await interval.click();
      await page.getByRole('option', { name: choice, exact: true }).click();
      expect(await interval.inputValue()).toBe(choice);
      expect(await whole(interval), choice).toBe(true);
    }
    // And the billing period select (the demo's meters have billing periods).
    await page.getByTestId('range-presets').getByText(pl['details.range.billing'], { exact: true }).click();
    const billing = page.getByTestId('billing-period');
    await billing.waitFor();
    expect(await billing.inputValue()).toMatch(/\d{2}\.\d{2}\.\d{4} – \d{2}\.\d{2}\.\d{4}/);
    expect(await whole(billing)).toBe(true);
    await switchLanguage('en');
  });

  it("claims a meter whose stock Tasmota name another account's meter holds, once it publishes under its device key", {
    timeout: 120_000,
  }, async () => {
    await forgetSession();
    const alice = await register('stock-alice');
    await signIn(alice.email, alice.password);
    const first = await claim('Alice meter');
    const suffix = first.mac!.split(':').slice(-3).join(':');
    await forgetSession();
    const bob = await register('stock-bob');
    await signIn(bob.email, bob.password);
    await page.goto(`${api.url}/device/add`);
    await page.getByTestId('add-name').fill('Bob meter');
    const twin = `0a:00:00:${suffix}`;
    await page.getByTestId('add-mac').fill(twin);
    await page.getByTestId('add-claim').click();
    // Refused: the form says what to set on the meter, and offers to claim it without the stock topic.
    const taken = page.getByTestId('add-stock-taken');
    await taken.waitFor();
    const key = twin.replace(/:/g, '').toLowerCase();
    expect(await taken.textContent()).toContain(key);
    expect(await page.getByTestId('connect-panel').count()).toBe(0);
    await page.getByTestId('add-own-topic').check();
    await page.getByTestId('add-claim').click();
    await page.getByTestId('connect-panel').waitFor();
    const mine = (await call<ApiDevice[]>('GET', '/devices')).body;
    expect(mine.map((d) => d.name)).toEqual(['Bob meter']);
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
