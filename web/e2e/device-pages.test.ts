/**
 * Device pages as the demo user sees them, against the real API (embedded deployment) in headless Chromium:
 * the thermostat's chart legend names its series, the heat-pump meter's one chart and its one settings card
 * take the whole row at 1440 px, a meter value given on the single-phase "Garage" is saved and its
 * total follows it after a reload, and on a 390 px phone badges keep their words and the yearly heatmap's
 * week labels do not run together.
 */
import { DEFAULT_TIMEZONE, detailsPathFor } from '@kilowatch/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { en } from '../src/i18n/locales/en.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  startApi,
} from '../src/testing.ts';
import { explainFailures } from './explain.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`device pages e2e skipped: ${skip}`);

interface ApiDevice {
  id: number;
  name: string;
  typeCode: number;
  phases?: 1 | 3;
}

interface Summary {
  tz: string;
  total: { import: number | null } | null;
}

describe.skipIf(skip !== null)('device pages against the embedded API', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let devices: ApiDevice[];
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  /** A read of the API's own answer; a busy server's 503 is asked again (a few times, a second apart). */
  async function call<T>(method: string, path: string): Promise<{ status: number; body: T }> {
    const token = await page.evaluate(() => localStorage.getItem('kw.token'));
    for (let i = 0; ; i++) {
      const res = await fetch(`${api.url}/api${path}`, {
        method,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      const text = await res.text();
      if (res.status !== 503 || i >= 10)
        return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  const device = (pick: (d: ApiDevice) => boolean, what: string): ApiDevice => {
    const d = devices.find(pick);
    if (!d) throw new Error(`the demo has no ${what}: ${devices.map((x) => x.name).join(', ')}`);
    return d;
  };
  const pathOf = (d: ApiDevice) => `${api.url}${detailsPathFor(d.id, d.typeCode, d.phases ?? 3)}`;

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist'), env: { KW_DEMO_HISTORY_DAYS: '2' } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
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
    const listed = await call<ApiDevice[]>('GET', '/devices');
    expect(listed.status).toBe(200);
    devices = listed.body;
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it("names the thermostat's series in its chart legend, without position numbers", async () => {
    const thermostat = device((d) => d.typeCode === 17, 'thermostat');
    await page.goto(pathOf(thermostat));
    const chart = page.getByTestId('chart-temp');
    await chart.locator('canvas').first().waitFor({ timeout: 30_000 });
    // The legend rows shown (the min and max rows of a band are hidden), the time row first.
    const labels = await chart
      .locator('.u-legend .u-series')
      .evaluateAll((rows) =>
        rows
          .filter((r) => getComputedStyle(r).display !== 'none')
          .map((r) => r.querySelector('.u-label')?.textContent ?? ''),
      );
    expect(labels.slice(1)).toEqual([en['param.tempmain'], en['param.tempset']]);
  });

  it("gives the heat-pump meter's lone chart and lone settings card the whole row", async () => {
    const heatPump = device((d) => d.typeCode === 13, 'energy meter');
    await page.goto(pathOf(heatPump));
    const power = page.getByTestId('chart-power');
    await power.locator('canvas').first().waitFor({ timeout: 30_000 });
    const form = page.getByTestId('meter-value');
    await form.waitFor();
    // The energy chart below always spans the content: the power chart and the settings card are as wide.
    const energy = (await page.getByTestId('chart-energy').boundingBox())!;
    const lone = (await power.boundingBox())!;
    const card = (await form.boundingBox())!;
    expect(energy.width).toBeGreaterThan(900);
    expect(lone.width).toBeGreaterThan(energy.width * 0.98);
    expect(card.width).toBeGreaterThan(energy.width * 0.98);
    expect(Math.abs(lone.x - energy.x)).toBeLessThan(2);
    // Only the one settings card: an energy meter without voltages gets no voltage bands.
    expect(await page.getByText(en['details.limits'], { exact: true }).count()).toBe(0);
  });

  it('saves a meter value on the single-phase Garage and shows the total following it after a reload', {
    timeout: 90_000,
  }, async () => {
    const garage = device((d) => d.name === 'Garage', 'Garage');
    const before = (await call<Summary>('GET', `/devices/${garage.id}/energy/summary`)).body;
    const VALUE = 54_321;
    expect(before.total?.import ?? 0).toBeLessThan(VALUE - 1000);

    await page.goto(pathOf(garage));
    const form = page.getByTestId('meter-value');
    await form.waitFor();
    // The register offered first is the one the meter has (a single-phase meter has no three-phase total).
    const register = page.getByTestId('meter-value-register');
    await page.waitForFunction(
      () => (document.querySelector('[data-testid=meter-value-register]') as HTMLInputElement)?.value,
    );
    expect(await register.inputValue()).toBe(`${en['param.eai']} L1 (kWh)`);
    await form.getByLabel(en['details.value']).fill(String(VALUE));

    // The time: today 00:00 on the picker (its day is today already), in the user's zone.
    await page.getByTestId('meter-value-at').click();
    const hours = page.getByRole('spinbutton').first();
    await hours.waitFor();
    await hours.click();
    await page.keyboard.type('00');
    await page.keyboard.type('00');
    await page.locator('.mantine-Popover-dropdown button:has(svg)').last().click();
    const shown = (await page.getByTestId('meter-value-at').textContent()) ?? '';
    expect(shown).toMatch(/ 00:00$/);

    const saved = page.waitForResponse((r) => r.url().endsWith(`/api/devices/${garage.id}/meter-value`));
    await form.getByRole('button', { name: en['common.save'] }).click();
    const answer = await saved;
    expect(answer.status()).toBe(200);
    const sent = answer.request().postDataJSON() as { param: string; value: number; at: string };
    // Sent as that minute of the day shown (en: MM/DD/YYYY), in the zone the page shows times in.
    const tz = (await page.evaluate(() => localStorage.getItem('kw.timezone'))) || DEFAULT_TIMEZONE;
    const [month, day, year] = shown.split(' ')[0]!.split('/');
    const inZone = new Intl.DateTimeFormat('sv-SE', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(sent.at));
    expect(inZone).toBe(`${year}-${month}-${day} 00:00`);
    expect({ param: sent.param, value: sent.value }).toEqual({ param: 'eai1', value: VALUE });
    await page.getByText(en['msg.saved']).first().waitFor();

    // After a reload the total is the value given plus what the meter counted since (under a day's worth).
    await page.reload();
    const total = page.getByTestId('energy-details.total');
    await total.waitFor({ timeout: 30_000 });
    const after = (await call<Summary>('GET', `/devices/${garage.id}/energy/summary`)).body;
    const kwh = after.total?.import ?? 0;
    expect(kwh).toBeGreaterThanOrEqual(VALUE);
    expect(kwh).toBeLessThan(VALUE + 100);
    // The card rounds kWh above 1,000 to whole units; the meter keeps counting between the page's answer and ours.
    const shownTotal = await page.waitForFunction(() => {
      const text = document.querySelector('[data-testid="energy-details.total"]')?.textContent ?? '';
      const m = /(\d+(?:[.,]\d+)?) kWh/.exec(text);
      return m ? Number(m[1]!.replace(',', '.')) : false;
    });
    expect(Math.abs(((await shownTotal.jsonValue()) as number) - kwh)).toBeLessThan(1);
  });

  it("keeps badges' words whole and the yearly heatmap's week labels apart on a 390 px phone", {
    timeout: 90_000,
  }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      // A badge whose word is cut ("ON…") has a label wider than the room it is given.
      const cutBadges = () =>
        page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>('.mantine-Badge-root')]
            .filter((b) => b.offsetParent !== null)
            .map((b) => b.querySelector<HTMLElement>('.mantine-Badge-label'))
            .filter((l): l is HTMLElement => l !== null && l.scrollWidth > l.clientWidth)
            .map((l) => l.textContent),
        );
      await page.goto(`${api.url}/dashboard`);
      await page.locator('[data-testid=device-row] [data-status]').first().waitFor();
      expect(await cutBadges()).toEqual([]);
      const meter = device((d) => d.typeCode === 1 && d.phases !== 1, 'three-phase meter');
      await page.goto(pathOf(meter));
      await page.getByTestId('quality-met').first().waitFor({ timeout: 30_000 });
      expect(await cutBadges()).toEqual([]);

      // The yearly heatmap: 53 weeks on some 250 px; each label it draws stands clear of the next.
      await page.goto(`${api.url}/analytics?tab=heatmap&device=${meter.id}&kind=yearly`);
      const chart = page.getByTestId('heatmap-canvas');
      await chart.locator('canvas').waitFor({ timeout: 30_000 });
      const ticks = JSON.parse((await chart.getAttribute('data-x-ticks')) ?? '[]') as [number, string][];
      const columns = Number(await chart.getAttribute('data-columns'));
      expect(columns).toBeGreaterThanOrEqual(52);
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      const box = (await chart.boundingBox())!;
      const column = (box.width - 76 - 8) / columns;
      // Measured as nivo draws them: 11 px sans-serif.
      const widths = await page.evaluate(
        (labels) => {
          const ctx = document.createElement('canvas').getContext('2d')!;
          ctx.font = '11px sans-serif';
          return labels.map((l) => ctx.measureText(l).width);
        },
        ticks.map(([, label]) => label),
      );
      const gaps = ticks
        .slice(1)
        .map(([at], i) => (at - ticks[i]![0]) * column - (widths[i]! + widths[i + 1]!) / 2);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(8);
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
    }
  });

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
