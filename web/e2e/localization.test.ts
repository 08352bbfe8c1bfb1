/**
 * Dates and numbers in the interface language, and the heatmap's day still filling, against the real API
 * (embedded deployment) in headless Chromium. A meter of the test's own publishes ten days of energy over
 * MQTT (1 to 10 March 2026, Europe/Warsaw), and the page's clock is held at 10 March 2026 10:30 there, so
 * nothing depends on the day the test runs.
 *
 * - In pl and tr, the date fields of the heatmap, the consumption table, the edit-device form and the export
 *   dialog show and take days as dd.mm.yyyy (their calendars name the month in the language), and numbers
 *   use the decimal comma.
 * - So do a tariff's validity days (saved as the days they name) and the tariff price comparison's range.
 * - Dates shown as text (the consumption table's days, the device's last reading, a tariff's validity on
 *   its location) are written the same way, never as ISO.
 * - On the heatmap, today (10 March, ten and a half hours of it) is left out of the colour scale and drawn
 *   hatched, its tooltip saying "today so far".
 */
import { deviceKeyFromMac } from '@kilowatch/core';
import mqtt from 'mqtt';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatKwh } from '../src/features/analytics/consumptionTable.ts';
import { analyticsEn } from '../src/i18n/locales/analytics/en.ts';
import { devicesPl } from '../src/i18n/locales/devices/pl.ts';
import { devicesTr } from '../src/i18n/locales/devices/tr.ts';
import { pl } from '../src/i18n/locales/pl.ts';
import { tr } from '../src/i18n/locales/tr.ts';
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
if (skip) console.warn(`localization e2e skipped: ${skip}`);

const TZ = 'Europe/Warsaw';
/** The page's clock: 10 March 2026, 10:30 in Warsaw (UTC+1). */
const NOW = Date.UTC(2026, 2, 10, 9, 30);
const HOUR = 3_600_000;
const QUARTER = HOUR / 4;
/** Midnight of 28 February 2026 in Warsaw: the meter's first reading. */
const FIRST = Date.UTC(2026, 1, 27, 23);
/** Energy per hour on day `d` of March (the day before: 1 kWh/h): 1.1 kWh/h on the 1st … 1.9 on the 9th, 2 today. */
const rateOn = (ts: number) => {
  const day = Math.floor((ts - Date.UTC(2026, 1, 28, 23)) / (24 * HOUR)) + 1;
  return day < 1 ? 1 : day >= 10 ? 2 : 1 + day / 10;
};

const LANGS = [
  { lang: 'pl', name: 'Polski', march: 'marzec 2026', threePhase: devicesPl['devtype.1'] },
  { lang: 'tr', name: 'Türkçe', march: 'Mart 2026', threePhase: devicesTr['devtype.1'] },
] as const;

interface ApiDevice {
  id: number;
  name: string;
  typeCode: number;
  phases?: 1 | 3;
  billingStart?: string;
}

describe.skipIf(skip !== null)('dates and numbers in the interface language', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let meter: ApiDevice;
  let homeId: number;
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  const call = callAsPage(
    () => page,
    () => api.url,
  );

  beforeAll(async () => {
    // Rollups refreshed every second, so the history published below is in the heatmap soon after.
    api = await startApi({
      webDist: inject('webDist'),
      env: { KW_DEMO_HISTORY_DAYS: '2', KW_ROLLUP_INTERVAL_MS: '1000' },
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    await page.clock.setFixedTime(NOW);
    page.on('console', (msg) => {
      // A busy server's 503; a server without meter connection state answers that endpoint 404.
      const connection = /\/api\/devices\/\d+\/connection$/.test(msg.location().url);
      if (msg.type() === 'error' && !/status of 503/.test(msg.text()) && !connection)
        consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));

    await page.goto(`${api.url}/sign-in`);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);
    const home = await call<{ id: number }>('POST', '/locations', { name: 'Kraków flat', timezone: TZ });
    expect(home.status).toBe(201);
    homeId = home.body.id;
    const claimed = await call<ApiDevice & { mac: string; mqtt: { username: string; password: string } }>(
      'POST',
      '/devices',
      { mac: 'AA:BB:CC:E2:E1:01', name: 'Flat meter', typeCode: 1, phases: 3, locationId: home.body.id },
    );
    expect(claimed.status).toBe(201);
    meter = claimed.body;

    // 28 February to 10 March 10:30, a reading every quarter hour.
    const readings: { ts: number; values: Record<string, number> }[] = [];
    let counter = 1000;
    for (let ts = FIRST; ts <= NOW; ts += QUARTER) {
      if (ts > FIRST) counter += rateOn(ts - 1) / 4;
      readings.push({ ts, values: { energy3phases_import: counter, vave1: 231, vave2: 230, vave3: 229 } });
    }
    const client = await mqtt.connectAsync(`mqtt://127.0.0.1:${api.mqttPort}`, {
      clientId: 'kw-e2e-localization',
      username: claimed.body.mqtt.username,
      password: claimed.body.mqtt.password,
    });
    try {
      const topic = `kilowatch/meters/${deviceKeyFromMac(claimed.body.mac)}/readings`;
      for (let i = 0; i < readings.length; i += 96)
        await client.publishAsync(topic, JSON.stringify(readings.slice(i, i + 96)), { qos: 1 });
    } finally {
      await client.endAsync();
    }
    // Written and rolled up: the monthly heatmap has its first and its last day.
    const from = new Date(Date.UTC(2026, 1, 28, 23)).toISOString();
    const to = new Date(Date.UTC(2026, 2, 10, 23)).toISOString();
    for (let i = 0; ; i++) {
      const map = await call<{ rows: { data: { x: number; y: number | null }[] }[] }>(
        'GET',
        `/devices/${meter.id}/heatmap?param=energy3phases_import&kind=monthly&from=${from}&to=${to}`,
      );
      const days = map.body.rows?.[0]?.data ?? [];
      const near = (y: number | null | undefined, want: number) => y != null && Math.abs(y - want) < 0.01;
      if (near(days[0]?.y, 26.4) && near(days[8]?.y, 45.6) && near(days[9]?.y, 21)) break;
      if (i > 120) throw new Error(`the published history never reached the heatmap: ${JSON.stringify(map)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function chooseLanguage(name: string) {
    await page.goto(`${api.url}/dashboard`);
    await page.getByTestId('language-select').filter({ visible: true }).click();
    await page.getByRole('option', { name }).click();
  }

  /** An open calendar's header naming its month in the language (its button is named "choose a month"). */
  const calendarMonth = (month: string) => page.locator('button', { hasText: month }).first();

  const heatmapUrl = () =>
    `${api.url}/analytics?tab=heatmap&device=${meter.id}&param=energy3phases_import&kind=monthly&from=2026-03-01&to=2026-03-10`;

  for (const { lang, name, march, threePhase } of LANGS) {
    it(`shows and takes dates as dd.mm.yyyy and numbers with a decimal comma in ${lang}`, {
      timeout: 120_000,
    }, async () => {
      await chooseLanguage(name);
      await page.waitForFunction((l) => document.documentElement.lang === l, lang);

      // The heatmap: its days, its calendar's month name, its legend's numbers.
      await page.goto(heatmapUrl());
      await page.getByTestId('heatmap-canvas').locator('canvas').waitFor({ timeout: 30_000 });
      expect(await page.getByTestId('heatmap-from').inputValue()).toBe('01.03.2026');
      expect(await page.getByTestId('heatmap-to').inputValue()).toBe('10.03.2026');
      const ticks = await page.getByTestId('heatmap-tick').allTextContents();
      expect(ticks[0]).toBe('26,4');
      expect(ticks.join(' ')).not.toMatch(/\d\.\d/);
      await page.getByTestId('heatmap-from').click();
      await calendarMonth(march).waitFor();
      // A day typed in the language's format is taken.
      await page.getByTestId('heatmap-from').fill('02.03.2026');
      await page.getByTestId('heatmap-from').blur();
      await page.waitForURL((u) => u.searchParams.get('from') === '2026-03-02');
      // The field shows the day it took once the page has rendered the new address (the blur shows the
      // day it held until then).
      await expect
        .poll(() => page.getByTestId('heatmap-from').inputValue(), { timeout: 10_000 })
        .toBe('02.03.2026');

      // The consumption table: its days and its kWh.
      const answer = page.waitForResponse((r) => r.url().includes('/api/analytics/consumption') && r.ok());
      await page.goto(
        `${api.url}/analytics?tab=consumption&devices=${meter.id}&cfrom=2026-03-01&cto=2026-03-10&interval=1d`,
      );
      // The meter's history is fixed, so the API answers the page's question the same way again.
      const asked = (await answer).url().split('/api')[1]!;
      const rows = (await call<{ rows: { import: number | null }[] }>('GET', asked)).body.rows;
      await page.getByTestId('consumption-totals').waitFor();
      expect(await page.getByTestId('consumption-from').inputValue()).toBe('01.03.2026');
      expect(await page.getByTestId('consumption-to').inputValue()).toBe('10.03.2026');
      const total = rows.reduce((a, r) => a + (r.import ?? 0), 0);
      expect(total).toBeGreaterThan(300);
      const shown = await page.getByTestId(`total-${meter.id}-import`).textContent();
      expect(shown).toBe(formatKwh(total, lang));
      expect(shown).toMatch(/^\d+,\d{3}$/);
      const days = await page.getByTestId('consumption-row').locator('td:first-child').allTextContents();
      expect(days).toContain('01.03.2026');
      expect(days).toContain('10.03.2026');
      expect(days.join(' ')).not.toMatch(/\d{4}-\d{2}/);

      // The edit-device form: the billing start shown and typed as dd.mm.yyyy, saved as the day it names.
      await page.goto(`${api.url}/edit-device/${meter.id}`);
      const billing = page.getByTestId('edit-billing-start');
      await billing.waitFor();
      const day = lang === 'pl' ? '15.01.2026' : '20.02.2026';
      await billing.fill(day);
      await billing.blur();
      expect(await billing.inputValue()).toBe(day);
      await page.getByTestId('edit-save').click();
      await page.waitForURL((u) => !u.pathname.startsWith('/edit-device'));
      const saved = (await call<ApiDevice>('GET', `/devices/${meter.id}`)).body;
      expect(saved.billingStart).toBe(lang === 'pl' ? '2026-01-15' : '2026-02-20');
      await page.goto(`${api.url}/edit-device/${meter.id}`);
      await billing.waitFor();
      expect(await billing.inputValue()).toBe(day);

      // The device page: the meter value's time, and the export dialog's last seven days up to today.
      await page.goto(`${api.url}/device-details/${meter.id}`);
      expect(await page.getByTestId('meter-value-at').textContent()).toMatch(/^10\.03\.2026 \d{2}:30$/);
      // The current billing period (one month from the billing start just saved), named by its days.
      await page
        .getByTestId('range-presets')
        .getByText((lang === 'pl' ? pl : tr)['details.range.billing'], { exact: true })
        .click();
      expect(await page.getByTestId('billing-period').inputValue()).toBe(
        lang === 'pl' ? '15.02.2026 – 14.03.2026' : '20.02.2026 – 19.03.2026',
      );
      // The last reading (10:30 in Warsaw), as the language writes an instant (pl "10.03.2026, 10:30:00").
      await page
        .getByTestId('live-time')
        .filter({ hasText: lang === 'pl' ? '10.03.2026, 10:30:00' : '10.03.2026 10:30:00' })
        .waitFor();
      // The device's type is named in the language too.
      await page.getByText(`${threePhase} · `).first().waitFor();
      await page.getByTestId('export-button').click();
      const dialog = page.getByRole('dialog');
      await dialog.getByTestId('export-from').waitFor();
      expect(await dialog.getByTestId('export-from').inputValue()).toBe('04.03.2026');
      expect(await dialog.getByTestId('export-to').inputValue()).toBe('10.03.2026');
      await dialog.getByTestId('export-to').click();
      await calendarMonth(march).waitFor();
      await page.keyboard.press('Escape');

      // A new tariff: its validity opens on today, both days typed as dd.mm.yyyy and saved as the days they name.
      await page.goto(`${api.url}/location/tariff-edit/${homeId}/new`);
      const validFrom = page.getByTestId('tariff-validFrom');
      await validFrom.waitFor();
      expect(await validFrom.inputValue()).toBe('10.03.2026');
      const tariffName = `Taryfa ${lang}`;
      await page.getByTestId('tariff-name').fill(tariffName);
      await page.getByTestId('tariff-zone1Price').fill('0,9');
      const [from, to] = lang === 'pl' ? ['01.02.2026', '31.12.2026'] : ['15.02.2026', '30.11.2026'];
      await validFrom.fill(from);
      await validFrom.blur();
      await page.getByTestId('tariff-validTo').click();
      await calendarMonth(march).waitFor();
      await page.getByTestId('tariff-validTo').fill(to);
      await page.getByTestId('tariff-validTo').blur();
      expect(await validFrom.inputValue()).toBe(from);
      expect(await page.getByTestId('tariff-validTo').inputValue()).toBe(to);
      await page.getByTestId('save-tariff').click();
      await page.waitForURL((u) => u.pathname === `/location/view/${homeId}`);
      await page
        .getByTestId('tariff-row')
        .filter({ hasText: tariffName })
        .filter({ hasText: `${from} – ${to}` })
        .filter({ hasText: '0,90' })
        .waitFor();
      const tariffs = (
        await call<{ id: number; name: string; validFrom: string; validTo: string | null }[]>(
          'GET',
          `/locations/${homeId}/tariffs`,
        )
      ).body;
      const tariff = tariffs.find((x) => x.name === tariffName);
      expect({ validFrom: tariff?.validFrom, validTo: tariff?.validTo }).toEqual(
        lang === 'pl'
          ? { validFrom: '2026-02-01', validTo: '2026-12-31' }
          : { validFrom: '2026-02-15', validTo: '2026-11-30' },
      );
      await page.goto(`${api.url}/location/tariff-edit/${homeId}/${tariff!.id}`);
      await validFrom.waitFor();
      expect(await validFrom.inputValue()).toBe(from);
      expect(await page.getByTestId('tariff-validTo').inputValue()).toBe(to);

      // Its price comparison: the range shown as dd.mm.yyyy, and a typed first day asked from its local midnight.
      await page.goto(`${api.url}/stats/tariff/${tariff!.id}`);
      const statsFrom = page.getByTestId('stats-from');
      await statsFrom.waitFor();
      expect(await statsFrom.inputValue()).toBe('01.01.2026');
      expect(await page.getByTestId('stats-to').inputValue()).toBe('10.03.2026');
      const statsAsked = page.waitForResponse(
        (r) =>
          r.url().includes(`/api/tariffs/${tariff!.id}/stats`) &&
          new URL(r.url()).searchParams.get('from') === '2026-03-01T23:00:00.000Z',
      );
      await statsFrom.fill('02.03.2026');
      await statsFrom.blur();
      expect((await statsAsked).ok()).toBe(true);
      expect(await statsFrom.inputValue()).toBe('02.03.2026');
    });
  }

  it('leaves today out of the heatmap’s colour scale and draws it hatched, "today so far"', {
    timeout: 120_000,
  }, async () => {
    await chooseLanguage('English');
    await page.goto(heatmapUrl());
    const chart = page.getByTestId('heatmap-canvas');
    const canvas = chart.locator('canvas');
    await canvas.waitFor({ timeout: 30_000 });
    // 10 March is still filling: 21 kWh so far, below every whole day (26.4 kWh on the 1st).
    expect(await chart.getAttribute('data-partial')).toBe('2026-03|10');
    const ticks = await page.getByTestId('heatmap-tick').allTextContents();
    expect(ticks[0]).toBe('26.4');
    expect(ticks[ticks.length - 1]).toBe('45.6');
    expect(await page.getByTestId('heatmap-partial-legend').textContent()).toBe(
      analyticsEn['analytics.partialLegend'],
    );

    // One row of 31 days: the 10th is the tenth band of the chart's inner width (margins 76 and 8 px).
    const box = (await canvas.boundingBox())!;
    const step = (box.width - 84) / (31 - 0.04);
    const cellAt = (day: number) => ({ x: box.x + 76 + (day - 1) * step + step / 2, y: box.y + 28 + 14 });
    const tip = page.getByTestId('heatmap-tooltip');
    await page.mouse.move(cellAt(10).x, cellAt(10).y);
    await tip.waitFor();
    expect(await tip.textContent()).toContain(analyticsEn['analytics.partialDay']);
    expect(await tip.textContent()).toContain('21 kWh');
    await page.mouse.move(cellAt(9).x, cellAt(9).y);
    await page.waitForFunction(() => !document.querySelector('[data-testid=heatmap-tooltip-partial]'));
    expect(await tip.textContent()).toContain('45.6 kWh');

    // Hatched: the cell holds the stripes' dark colour and the page's white, not one colour of the scale.
    const colours = await canvas.evaluate(
      (c: HTMLCanvasElement, at) => {
        const ctx = c.getContext('2d')!;
        const r = c.width / c.getBoundingClientRect().width;
        const px = ctx.getImageData(Math.round((at.x - 8) * r), Math.round((at.y - 6) * r), 16 * r, 12 * r);
        const seen = new Set<string>();
        for (let i = 0; i < px.data.length; i += 4)
          seen.add(`${px.data[i]},${px.data[i + 1]},${px.data[i + 2]}`);
        return [...seen];
      },
      { x: cellAt(10).x - box.x, y: cellAt(10).y - box.y },
    );
    expect(colours).toContain('255,255,255');
    expect(colours.length).toBeGreaterThan(2);

    // A range that ends before today has no cell still filling.
    await page.goto(
      `${api.url}/analytics?tab=heatmap&device=${meter.id}&param=energy3phases_import&kind=monthly&from=2026-03-01&to=2026-03-09`,
    );
    await canvas.waitFor();
    await page.getByTestId('heatmap-tick').first().waitFor();
    expect(await chart.getAttribute('data-partial')).toBeNull();
    expect(await page.getByTestId('heatmap-partial-legend').count()).toBe(0);

    // Live values say which are a phase's and which are totals.
    await page.goto(`${api.url}/device-details/${meter.id}`);
    const live = page.getByTestId('live-values');
    await live.waitFor();
    expect(await live.textContent()).toContain('Voltage L1');
    expect(await live.textContent()).toContain('Power, total');
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
