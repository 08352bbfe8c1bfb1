/**
 * The client against the real API in its embedded deployment, in headless Chromium: demo sign-in,
 * dashboard, every device type's details page drawing real data, a live MQTT reading, a transparent
 * token refresh, the 404 page, preferences across a reload, accessibility and a clean console.
 *
 * Over 500 lines on purpose: the cases are one visit in order — one API process with its demo history,
 * one browser page signed in by the first case and signed out by the last, its console checked after all
 * of them. Split, each file would start the API and Chromium again and lose the one session they follow.
 */
import { DAY_MS, DEFAULT_TIMEZONE, detailsPathFor, deviceKeyFromMac, startOfLocalDay } from '@kilowatch/core';
import mqtt from 'mqtt';
import type { Browser, BrowserContext, Page, WebSocket } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatValue } from '../src/charts/options.ts';
import { chartGroups, kindFromPath } from '../src/features/devices/chartGroups.ts';
import { en } from '../src/i18n/locales/en.ts';
import { formatInstant } from '../src/lib/time.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  seriousViolations,
  startApi,
} from '../src/testing.ts';
import { explainFailures } from './explain.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`web e2e skipped: ${skip}`);

interface ApiDevice {
  id: string | number;
  name: string;
  typeCode: number;
  mac: string;
  phases?: 1 | 3;
}

describe.skipIf(skip !== null)('web client against the embedded API', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let devices: ApiDevice[] = [];
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist') });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch; the 401 and 404 answers provoked below are expected.
      if (msg.type() === 'error' && !/status of (401|404)/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  const token = () => page.evaluate(() => localStorage.getItem('kw.token'));

  const meterLogins = new Map<string, { username: string; password: string }>();
  /**
   * The meter's MQTT account: the broker refuses anonymous clients, and only the API knows a password.
   * The demo's simulated meters belong to the simulator (a workspace cannot change their account), so the
   * test claims a meter of its own in the demo workspace, like the simulated three-phase one, and gets its
   * account from the claim's answer.
   */
  let ownMeter: ApiDevice | undefined;
  async function meterOfOwn(like: ApiDevice): Promise<ApiDevice> {
    if (ownMeter) return ownMeter;
    const res = await fetch(`${api.url}/api/devices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        mac: 'AA:BB:CC:E2:E0:01',
        name: 'Test meter',
        typeCode: like.typeCode,
        phases: like.phases ?? 3,
      }),
    });
    expect(res.status).toBe(201);
    const claimed = (await res.json()) as ApiDevice & { mqtt: { username: string; password: string } };
    meterLogins.set(String(claimed.id), { username: claimed.mqtt.username, password: claimed.mqtt.password });
    ownMeter = claimed;
    return claimed;
  }
  /**
   * Resolves when the hub has told the page's socket that its subscribe naming the device is in force
   * (`{type:"subscribed"}`; 15 s at most): from then on every reading of the device reaches the page.
   */
  function hubSubscribed(deviceId: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        page.off('websocket', onSocket);
        reject(new Error(`the hub never confirmed the page's subscription to device ${deviceId}`));
      }, 15_000);
      const onSocket = (ws: WebSocket) => {
        ws.on('framereceived', (f) => {
          let m: { type?: unknown; deviceIds?: unknown };
          try {
            m = JSON.parse(String(f.payload)) as typeof m;
          } catch {
            return;
          }
          if (m.type !== 'subscribed' || !Array.isArray(m.deviceIds) || !m.deviceIds.includes(deviceId))
            return;
          clearTimeout(timer);
          page.off('websocket', onSocket);
          resolve();
        });
      };
      page.on('websocket', onSocket);
    });
  }
  function meterLogin(d: ApiDevice): { username: string; password: string } {
    const login = meterLogins.get(String(d.id));
    if (!login) throw new Error(`no MQTT account known for device ${d.id}`);
    return login;
  }

  /** A reading of phase 1's voltage (the others at 230 V) over MQTT, acknowledged once stored. */
  async function publishVoltage(d: ApiDevice, vave1: number): Promise<void> {
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${api.mqttPort}`, {
      clientId: `kw-e2e-voltage-${Date.now()}`,
      ...meterLogin(d),
    });
    try {
      await client.publishAsync(
        `kilowatch/meters/${deviceKeyFromMac(d.mac)}/readings`,
        JSON.stringify({ ts: Date.now(), values: { vave1, vave2: 230, vave3: 230 } }),
        { qos: 1 },
      );
    } finally {
      await client.endAsync();
    }
  }

  /**
   * Leaves the first refreshes unanswered, one per entry of `answers` (503 load shed, 429 rate limit, a
   * dropped connection), then lets them reach the API. `done` removes the route and the console errors
   * those answers caused on purpose; any other error stays.
   */
  async function unansweredRefreshes(answers: readonly ('503' | '429' | 'drop')[]) {
    const times: number[] = [];
    let shed = 0;
    const loggedBefore = consoleErrors.length;
    await page.route('**/api/account/refreshtoken', async (route) => {
      const answer = answers[times.length];
      times.push(Date.now());
      if (answer === undefined) return route.continue();
      shed++;
      if (answer === 'drop') return route.abort('connectionreset');
      await route.fulfill({
        status: Number(answer),
        headers: { 'retry-after': '10', 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'The server is busy. Try again later.' }),
      });
    });
    return {
      times,
      /** Refreshes left unanswered so far. */
      get shed() {
        return shed;
      },
      async done() {
        await page.unroute('**/api/account/refreshtoken');
        const logged = consoleErrors.splice(loggedBefore);
        consoleErrors.push(...logged.filter((m) => !/status of (503|429)|ERR_CONNECTION_RESET/.test(m)));
      },
    };
  }

  /**
   * The demo's history is written in the background after the API reports healthy; wait (bounded)
   * until the last seven days of `param` have data (the view the test selects).
   */
  async function waitForWeekData(id: string | number, param: string): Promise<void> {
    const tz = (await page.evaluate(() => localStorage.getItem('kw.timezone'))) || DEFAULT_TIMEZONE;
    const from = startOfLocalDay(Date.now(), tz) - 6 * DAY_MS;
    const q = `params=${param}&from=${new Date(from).toISOString()}&to=${new Date(from + 7 * DAY_MS).toISOString()}&interval=15m`;
    for (let i = 0; i < 120; i++) {
      const res = await fetch(`${api.url}/api/devices/${id}/series?${q}`, {
        headers: { Authorization: `Bearer ${await token()}` },
      });
      if (res.ok) {
        const body = (await res.json()) as { series: Record<string, { avg?: (number | null)[] }> };
        // A day's worth of 15-minute buckets: the history is in and rolled up.
        if ((body.series[param]?.avg ?? []).filter((v) => v !== null).length >= 96) return;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
    throw new Error(
      `the API has not a day of ${param} history for device ${id} in the last 7 days after 240 s`,
    );
  }

  it('signs in to the demo and lists the demo devices', async () => {
    await page.goto(`${api.url}/dashboard`);
    await page.waitForURL(/\/sign-in/);
    await page.getByTestId('demo').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);
    await page.getByText('You have successfully logged in!').waitFor();
    const res = await fetch(`${api.url}/api/devices`, {
      headers: { Authorization: `Bearer ${await token()}` },
    });
    devices = (await res.json()) as ApiDevice[];
    expect(devices.length).toBeGreaterThan(0);
    await page.getByTestId('device-row').first().waitFor();
    const names = await page.getByTestId('device-row').locator('td:first-child a').allTextContents();
    expect(names.sort()).toEqual(devices.map((d) => d.name).sort());
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('searches from two characters and clears when emptied', async () => {
    const search = page.getByTestId('device-search');
    const first = devices[0]!.name;
    await search.fill(first.slice(0, 1));
    await search.press('Enter');
    expect(await page.getByTestId('device-row').count()).toBe(devices.length);
    await search.fill(first);
    await search.press('Enter');
    const shown = await page.getByTestId('device-row').locator('td:first-child a').allTextContents();
    expect(shown).toContain(first);
    await search.fill('');
    await page.waitForFunction(
      (n) => document.querySelectorAll('[data-testid=device-row]').length === n,
      devices.length,
    );
  });

  it("draws every device type's charts from the API's data", { timeout: 600_000 }, async () => {
    const byKind = new Map<string, ApiDevice>();
    for (const d of devices) {
      const path = detailsPathFor(d.id, d.typeCode, d.phases ?? 3);
      const kind = kindFromPath(path);
      if (!byKind.has(kind)) byKind.set(kind, d);
    }
    expect(byKind.size).toBeGreaterThan(0);
    for (const [kind, d] of byKind) {
      const path = detailsPathFor(d.id, d.typeCode, d.phases ?? 3);
      const group = chartGroups(kind as Parameters<typeof chartGroups>[0], 'phase')[0]!;
      await waitForWeekData(d.id, group.params[0]!);
      await page.goto(`${api.url}${path}`);
      await page.getByTestId('device-title').waitFor();
      // The seven-day view: the same charts over a longer period.
      const seriesAnswer = page.waitForResponse((r) => {
        if (!r.url().includes(`/api/devices/${d.id}/series`) || !r.url().includes('stats=') || !r.ok())
          return false;
        // The seven-day answer, not a one-day request still in flight from the page's first view.
        const q = new URL(r.url()).searchParams;
        return Date.parse(q.get('to') ?? '') - Date.parse(q.get('from') ?? '') > 2 * DAY_MS;
      });
      await page.getByText('7 days', { exact: true }).click();
      // The same request again from here: the browser may have let go of the body already.
      const seriesUrl = (await seriesAnswer).url();
      const body = (await (
        await fetch(seriesUrl, { headers: { Authorization: `Bearer ${await token()}` } })
      ).json()) as {
        t: number[];
        series: Record<string, { avg?: (number | null)[] }>;
      };
      expect(body.t.length, `${kind}: series points`).toBeGreaterThan(0);
      const chart = page.getByTestId(`chart-${group.id}`);
      await chart.locator('canvas').waitFor();
      // Pixels of the series' colours prove the lines were drawn, not just the axes. Every phase counts:
      // on the voltage chart the phases lie on top of each other and the last one drawn covers the first.
      const colors = group.specs.map((s) => s.color);
      const countPixels = () =>
        chart.locator('canvas').evaluate((c: HTMLCanvasElement, hexes: string[]) => {
          const rgb = hexes.map((hex) => {
            const n = Number.parseInt(hex.slice(1), 16);
            return [(n >> 16) & 255, (n >> 8) & 255, n & 255] as const;
          });
          const img = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
          let hits = 0;
          for (let i = 0; i < img.length; i += 4) {
            if (img[i + 3]! <= 200) continue;
            for (const [r, g, b] of rgb) {
              if (
                Math.abs(img[i]! - r) < 24 &&
                Math.abs(img[i + 1]! - g) < 24 &&
                Math.abs(img[i + 2]! - b) < 24
              ) {
                hits++;
                break;
              }
            }
          }
          return hits;
        }, colors);
      // The new period's data replaces the previous one in place; poll (bounded) until it is drawn.
      let drawn = 0;
      for (let i = 0; i < 40 && drawn <= 20; i++) {
        drawn = await countPixels();
        if (drawn <= 20) await page.waitForTimeout(250);
      }
      expect(drawn, `${kind}: pixels of the series`).toBeGreaterThan(20);
      // The legend at the cursor shows the value the API returned there, with its unit.
      const param = group.params[0]!;
      const avg = body.series[param]?.avg ?? [];
      // The middle of the longest run of filled buckets: a pixel of rounding cannot land on a gap, and a
      // settled bucket (the newest one may still change).
      let run = { start: 0, length: 0 };
      for (let i = 0, start = 0; i <= avg.length; i++) {
        if (i < avg.length && avg[i] !== null) continue;
        if (i - start > run.length) run = { start, length: i - start };
        start = i + 1;
      }
      expect(run.length, `${kind}: ${param} has values`).toBeGreaterThan(0);
      const last = run.start + Math.floor(run.length / 2);
      const over = chart.locator('.u-over');
      const box = (await over.boundingBox())!;
      const fraction = avg.length > 1 ? last / (avg.length - 1) : 0.5;
      await page.mouse.move(box.x + 1 + (box.width - 2) * fraction, box.y + box.height * 0.5);
      const legend = (
        await chart.locator('.u-legend .u-series').nth(1).locator('.u-value').textContent()
      )?.trim();
      const legendTime = (
        await chart.locator('.u-legend .u-series').nth(0).locator('.u-value').textContent()
      )?.trim();
      // The legend shows the API's value at the time it shows ("–" where the API has no value).
      const tz = (await page.evaluate(() => localStorage.getItem('kw.timezone'))) || DEFAULT_TIMEZONE;
      // Written as the interface language (English here) writes an instant: 03/10/2026, 14:30.
      const label = (ts: number) => formatInstant(ts, tz, 'en');
      const at = body.t.findIndex((ts) => label(ts) === legendTime);
      expect(
        at,
        `${kind}: legend time "${legendTime}" is a bucket of the API's answer`,
      ).toBeGreaterThanOrEqual(0);
      const apiValue = avg[at];
      expect(legend, `${kind}: legend of ${param} at ${legendTime}`).toBe(
        apiValue === null || apiValue === undefined ? '–' : formatValue(apiValue, group.specs[0]!.unit),
      );
      if (kind === 'three-phase') expect(await seriousViolations(page)).toEqual([]);
    }
  });

  it("opens the data log on a thermostat with the thermostat's own parameters", async () => {
    const d = devices.find(
      (x) => kindFromPath(detailsPathFor(x.id, x.typeCode, x.phases ?? 3)) === 'thermostat',
    );
    expect(d, 'the demo has a thermostat').toBeDefined();
    await page.goto(`${api.url}/device/data-log?device=${d!.id}`);
    // Chips by human name and unit, never the catalogue code.
    const pill = (name: string) =>
      page
        .locator('.mantine-MultiSelect-pill')
        .filter({ hasText: new RegExp(`^${name.replace(/[()]/g, '\\$&')}$`) });
    await pill(`${en['param.tempmain']} (°C)`).waitFor({ timeout: 10_000 });
    expect(
      await page
        .locator('.mantine-MultiSelect-pill')
        .filter({ hasText: /Voltage/ })
        .count(),
    ).toBe(0);
    await page.getByRole('button', { name: en['log.show'] }).click();
    const header = page.locator('table thead th[data-param=tempmain]');
    await header.first().waitFor({ timeout: 15_000 });
    expect(await page.getByTestId('log-count').textContent()).toMatch(/[1-9]/);
  });

  it('shows a live reading published over MQTT within 5 s', async () => {
    const d = await meterOfOwn(
      devices.find((x) => kindFromPath(detailsPathFor(x.id, x.typeCode, x.phases ?? 3)) === 'three-phase') ??
        devices[0]!,
    );
    const path = detailsPathFor(d.id, d.typeCode, d.phases ?? 3);
    const subscribed = hubSubscribed(Number(d.id));
    await page.goto(`${api.url}${path}`);
    await page
      .getByTestId('hub-status')
      .and(page.locator('[data-state=connected]'))
      .waitFor({ timeout: 15_000 });
    // The 5 s run from a reading sent once the hub has confirmed the page's subscription.
    await subscribed;
    const key = deviceKeyFromMac(d.mac);
    expect(key).not.toBeNull();
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${api.mqttPort}`, {
      clientId: `kw-e2e-${Date.now()}`,
      ...meterLogin(d),
    });
    try {
      const value = 212.34;
      const published = Date.now();
      await client.publishAsync(
        `kilowatch/meters/${key}/readings`,
        JSON.stringify({ ts: Date.now(), values: { vave1: value, vave2: value, vave3: value } }),
        { qos: 1 },
      );
      await page.waitForFunction(
        (text) => document.querySelector('[data-testid=live-vave1]')?.textContent === text,
        formatValue(value, 'V'),
        // The page must show it within 5 s of the publish (the PUBACK above already waited for the commit).
        { timeout: Math.max(1, 5_000 - (Date.now() - published)), polling: 50 },
      );
    } finally {
      await client.endAsync();
    }
  });

  it('tells of a voltage alert at once and keeps it under the bell, unread until opened', async () => {
    const d = await meterOfOwn(
      devices.find((x) => kindFromPath(detailsPathFor(x.id, x.typeCode, x.phases ?? 3)) === 'three-phase') ??
        devices[0]!,
    );
    const path = detailsPathFor(d.id, d.typeCode, d.phases ?? 3);
    const headers = { Authorization: `Bearer ${await token()}`, 'content-type': 'application/json' };
    // Voltage alerts for the meter, set on its edit page as a user would.
    await page.goto(`${api.url}/edit-device/${d.id}`);
    const form = page.getByTestId('notification-settings');
    await form.waitFor();
    const enabled = page.getByTestId('notif-enabled');
    if (!(await enabled.isChecked())) await enabled.check({ force: true });
    await page.getByTestId('notif-voltageDrop').fill('207');
    await page.getByTestId('notif-voltageRise').fill('253');
    await page.getByTestId('notif-interval').fill('1');
    const night = page.getByTestId('notif-disableAtNight');
    if (await night.isChecked()) await night.uncheck({ force: true });
    const mute = page.getByTestId('notif-muteAll');
    if (await mute.isChecked()) await mute.uncheck({ force: true });
    const saved = page.waitForResponse(
      (r) => r.url().endsWith(`/api/devices/${d.id}/notifications`) && r.request().method() === 'PUT',
    );
    await page.getByTestId('notif-save').click();
    expect((await saved).status()).toBe(200);
    const stored = (await (
      await fetch(`${api.url}/api/devices/${d.id}/notifications`, { headers })
    ).json()) as {
      enabled: boolean;
      voltageDrop: number;
      interval: number;
      disableAtNight: boolean;
      muteAll: boolean;
    };
    expect(stored).toMatchObject({
      enabled: true,
      voltageDrop: 207,
      interval: 1,
      disableAtNight: false,
      muteAll: false,
    });
    await page.goto(`${api.url}/dashboard`);
    await page
      .getByTestId('hub-status')
      .and(page.locator('[data-state=connected]'))
      .waitFor({ timeout: 15_000 });
    /** The bell counts at least one unread notification. */
    const unreadShown = () =>
      page.waitForFunction(
        () =>
          Number(document.querySelector('[data-testid=notifications-bell]')?.getAttribute('data-unread')) > 0,
        undefined,
        { timeout: 10_000 },
      );
    /** The newest stored notification of this kind for the meter, as the API gives it. */
    const storedAlert = async (kind: string) => {
      const history = (await (await fetch(`${api.url}/api/notifications`, { headers })).json()) as {
        items: { deviceId: number; kind: string; read: boolean }[];
      };
      return history.items.find((n) => n.deviceId === Number(d.id) && n.kind === kind);
    };
    await publishVoltage(d, 190.5);
    const title = `${en['alerts.kind.voltage-drop']} · ${d.name}`;
    // The toast, titled in the user's language.
    await page
      .locator('.mantine-Notification-root')
      .filter({ hasText: en['alerts.kind.voltage-drop'] })
      .first()
      .waitFor({ timeout: 10_000 });
    const bell = page.getByTestId('notifications-bell');
    await unreadShown();
    await bell.click();
    const item = page.getByTestId('notification-item').filter({ hasText: title }).first();
    await item.waitFor();
    expect(await item.getAttribute('data-read')).toBe('false');
    expect(await item.textContent()).toContain('190.5');
    await item.click();
    await page.waitForURL(new RegExp(`${path}$`));
    // Read on the server too (the page marks it as it opens the device), and so after a reload.
    await expect.poll(async () => (await storedAlert('voltage-drop'))?.read, { timeout: 10_000 }).toBe(true);
    await page.reload();
    await bell.click();
    expect(
      await page
        .getByTestId('notification-item')
        .filter({ hasText: title })
        .first()
        .getAttribute('data-read'),
    ).toBe('true');
    // Escape closes the list with the focus still on the bell.
    await page.keyboard.press('Escape');
    await page.getByTestId('notifications-list').waitFor({ state: 'hidden' });

    // A rise (a kind of its own, so not held back by the drop's interval), then "Mark all as read".
    await publishVoltage(d, 262.5);
    const rise = `${en['alerts.kind.voltage-rise']} · ${d.name}`;
    await unreadShown();
    await bell.click();
    const riseItem = page.getByTestId('notification-item').filter({ hasText: rise }).first();
    await riseItem.waitFor();
    expect(await riseItem.getAttribute('data-read')).toBe('false');
    await page.getByTestId('notifications-read-all').click();
    // Read on the server, and in the list, which stays open: the button goes with the last unread
    // notification, and the focus moves to the list instead of falling to the page.
    await expect.poll(async () => (await storedAlert('voltage-rise'))?.read, { timeout: 10_000 }).toBe(true);
    await page.getByTestId('notifications-read-all').waitFor({ state: 'detached' });
    expect(await page.getByTestId('notifications-list').isVisible()).toBe(true);
    expect(
      await page.evaluate(() =>
        document.querySelector('[data-testid=notifications-list]')?.contains(document.activeElement),
      ),
    ).toBe(true);
    await page.waitForFunction(
      (text) =>
        [...document.querySelectorAll('[data-testid=notification-item]')].some(
          (el) => el.textContent?.includes(text) && el.getAttribute('data-read') === 'true',
        ),
      rise,
      { timeout: 10_000 },
    );
    expect(await page.getByTestId('notifications-list').isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await page.getByTestId('notifications-list').waitFor({ state: 'hidden' });
  });

  it('saves the phase, offline, daily and email alert settings and shows them again after a reload', async () => {
    const d = await meterOfOwn(devices[0]!);
    const headers = { Authorization: `Bearer ${await token()}`, 'content-type': 'application/json' };
    await page.goto(`${api.url}/edit-device/${d.id}`);
    await page.getByTestId('notification-settings').waitFor();
    const enabled = page.getByTestId('notif-enabled');
    if (!(await enabled.isChecked())) await enabled.check({ force: true });
    const fill = async (k: string, v: string) => page.getByTestId(`notif-${k}`).fill(v);
    const on = async (k: string) => {
      const sw = page.getByTestId(`notif-${k}`);
      if (!(await sw.isChecked())) await sw.check({ force: true });
    };
    await fill('fuseA', '25');
    await fill('overloadShare', '85');
    await fill('overloadSeconds', '30');
    // Empty: the imbalance check off.
    await fill('imbalanceShare', '');
    await on('offline');
    await fill('offlineFactor', '4');
    await on('baseLoad');
    await fill('baseLoadShare', '25');
    await on('unusual');
    await fill('unusualShare', '60');
    await on('solar');
    await fill('solarShare', '35');
    await on('email');
    const saved = page.waitForResponse(
      (r) => r.url().endsWith(`/api/devices/${d.id}/notifications`) && r.request().method() === 'PUT',
    );
    await page.getByTestId('notif-save').click();
    expect((await saved).status()).toBe(200);
    // Stored as the API gives them: shares as fractions, the empty imbalance share as null.
    const url = `${api.url}/api/devices/${d.id}/notifications`;
    const stored = (await (await fetch(url, { headers })).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({
      enabled: true,
      fuseA: 25,
      overloadShare: 0.85,
      overloadSeconds: 30,
      imbalanceShare: null,
      offline: true,
      offlineFactor: 4,
      baseLoad: true,
      baseLoadShare: 0.25,
      unusual: true,
      unusualShare: 0.6,
      solar: true,
      solarShare: 0.35,
      email: true,
    });
    await page.reload();
    await page.getByTestId('notification-settings').waitFor();
    const value = (k: string) => page.getByTestId(`notif-${k}`).inputValue();
    const checked = (k: string) => page.getByTestId(`notif-${k}`).isChecked();
    expect({
      fuseA: await value('fuseA'),
      overloadShare: await value('overloadShare'),
      overloadSeconds: await value('overloadSeconds'),
      imbalanceShare: await value('imbalanceShare'),
      offlineFactor: await value('offlineFactor'),
      baseLoadShare: await value('baseLoadShare'),
      unusualShare: await value('unusualShare'),
      solarShare: await value('solarShare'),
    }).toEqual({
      fuseA: '25',
      overloadShare: '85',
      overloadSeconds: '30',
      imbalanceShare: '',
      offlineFactor: '4',
      baseLoadShare: '25',
      unusualShare: '60',
      solarShare: '35',
    });
    for (const k of ['offline', 'baseLoad', 'unusual', 'solar', 'email']) expect(await checked(k)).toBe(true);
    // The labels are the catalogue's.
    expect(await page.getByTestId('notification-settings').textContent()).toContain(en['notif.baseLoad']);
    // Back to quiet for the cases after this one: no offline alert, no mail.
    const put = await fetch(url, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ ...stored, offline: false, email: false }),
    });
    expect(put.status).toBe(200);
  });

  it('refreshes an expired token once, transparently', async () => {
    const refreshes: string[] = [];
    const onRequest = (r: { url: () => string }) => {
      if (r.url().includes('/api/account/refreshtoken')) refreshes.push(r.url());
    };
    page.on('request', onRequest);
    await page.evaluate(() => localStorage.setItem('kw.token', 'expired.token.value'));
    await page.goto(`${api.url}/dashboard`);
    await page.getByTestId('device-row').first().waitFor();
    page.off('request', onRequest);
    expect(page.url()).toMatch(/\/dashboard$/);
    expect(refreshes).toHaveLength(1);
    expect(await token()).not.toBe('expired.token.value');
  });

  it('keeps the session when the server is too busy to refresh it at first', async () => {
    // The API sheds load with 503 + Retry-After (api/src/plugins/pressure.ts); here the first two
    // refreshes get that answer, the third reaches the API.
    const shed = await unansweredRefreshes(['503', '503']);
    const refreshes = shed.times;
    try {
      await page.evaluate(() => localStorage.setItem('kw.token', 'expired.token.value'));
      await page.goto(`${api.url}/dashboard`);
      await page.getByTestId('device-row').first().waitFor();
      expect(page.url()).toMatch(/\/dashboard$/);
      expect(refreshes).toHaveLength(3);
      // Asked again after a pause (1 s, then 2 s), not at once.
      expect(refreshes[2]! - refreshes[0]!).toBeGreaterThanOrEqual(2900);
      expect(await token()).not.toBe('expired.token.value');
      expect(await token()).not.toBeNull();
    } finally {
      await shed.done();
    }
  });

  it('stays signed in while refreshes go unanswered (503, 429, dropped) for longer than the client waits', async () => {
    // Five refreshes go unanswered (the client's first try and its waits of 1, 2, 4 and 8 s): the refresh
    // gives up, which must not end the session; the next one reaches the API.
    const seen: string[] = [];
    const onNavigated = (frame: { url: () => string }) => seen.push(frame.url());
    page.on('framenavigated', onNavigated);
    // Each kind of no-answer the client waits out: load shed (503), rate limit (429), a dropped connection.
    const unanswered = await unansweredRefreshes(['503', '429', 'drop', '503', 'drop']);
    try {
      await page.evaluate(() => localStorage.setItem('kw.token', 'expired.token.value'));
      await page.goto(`${api.url}/dashboard`);
      await page.getByTestId('device-row').first().waitFor({ timeout: 45_000 });
      expect(unanswered.shed).toBe(5);
      expect(seen.filter((u) => u.includes('/sign-in'))).toEqual([]);
      expect(page.url()).toMatch(/\/dashboard$/);
      expect(await token()).not.toBe('expired.token.value');
      expect(await token()).not.toBeNull();
    } finally {
      page.off('framenavigated', onNavigated);
      await unanswered.done();
    }
  }, 90_000);

  it('stays signed in when the token check itself fails (500)', async () => {
    // The check before a route change is about the token; a server error there says nothing about it.
    const before = await token();
    const loggedBefore = consoleErrors.length;
    let failed = 0;
    await page.route('**/api/account/verifytoken', async (route) => {
      failed++;
      await route.fulfill({
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'Internal server error' }),
      });
    });
    try {
      await page.goto(`${api.url}/dashboard`);
      await page.getByTestId('device-row').first().waitFor();
      expect(failed).toBeGreaterThanOrEqual(1);
      expect(page.url()).toMatch(/\/dashboard$/);
      expect(await token()).toBe(before);
    } finally {
      await page.unroute('**/api/account/verifytoken');
      const logged = consoleErrors.splice(loggedBefore);
      consoleErrors.push(...logged.filter((m) => !/status of 500/.test(m)));
    }
  });

  it('shows the not-found page for an unknown path', async () => {
    await page.goto(`${api.url}/no/such/page`);
    await page.waitForURL(/\/404$/);
    await page.getByText('Seems there is nothing here').waitFor();
  });

  it('keeps theme and language across a reload', async () => {
    await page.goto(`${api.url}/dashboard`);
    await page.getByTestId('theme-switch').filter({ visible: true }).getByText('Dark').click();
    await page.getByTestId('language-select').filter({ visible: true }).click();
    await page.getByRole('option', { name: 'Polski' }).click();
    await page.getByRole('heading', { name: 'Urządzenia' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Urządzenia' }).waitFor();
    expect(
      await page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme')),
    ).toBe('dark');
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('pl');
  });

  it('signs out, clearing the session even so', async () => {
    await page.getByRole('button', { name: /@/ }).filter({ visible: true }).click();
    await page.getByTestId('sign-out').click();
    await page.waitForURL(/\/sign-in/);
    expect(await token()).toBeNull();
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
