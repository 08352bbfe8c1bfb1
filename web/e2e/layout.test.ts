/**
 * Layout against the real API (embedded deployment, a demo history of some months) in headless Chromium:
 * every route at 390 px in English and Polish scrolls only downwards, no control or label cuts the text
 * it shows, and a one-year chart draws its last time label whole with a y axis fitted to its lines.
 * Pictures of the changed screens go to e2e/screenshots/ (web/README.md shows copies from web/docs/).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DAY_MS, detailsPathFor, VOLTAGE_QUALITY_MAX_MS } from '@kilowatch/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { en } from '../src/i18n/locales/en.ts';
import { pl } from '../src/i18n/locales/pl.ts';
import { formatInstant } from '../src/lib/time.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  startApi,
  WEB_DIR,
} from '../src/testing.ts';
import { explainFailures } from './explain.ts';
import { answerTo, clickCalendarDays, localDayBefore } from './picking.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`layout e2e skipped: ${skip}`);

const SHOTS = join(WEB_DIR, 'e2e/screenshots');
const PHONE = { width: 390, height: 844 };
const CATALOGUES = { en, pl } as const;
type Lang = keyof typeof CATALOGUES;

interface ApiDevice {
  id: number;
  name: string;
  typeCode: number;
  phases?: 1 | 3;
  locationId?: number | null;
  tariff?: { id: number } | null;
}

interface ApiLocation {
  id: number;
  tariffId?: number | null;
}

/** What a page shows cut: the page scrolling sideways, an input or a one-line label shorter than its text. */
interface Cuts {
  pageWidth: number;
  viewport: number;
  inputs: string[];
  labels: string[];
  outside: string[];
  clipped: string[];
}

describe.skipIf(skip !== null)('layout at 390 px and chart axes', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // A hundred days: the one-year chart has daily buckets whose min..max bands reach far above the lines.
    api = await startApi({
      webDist: inject('webDist'),
      env: { KW_DEMO_HISTORY_DAYS: '100' },
      waitForDemoHistory: true,
      timeoutMs: 600_000,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: PHONE });
    page = await context.newPage();
    page.on('console', (msg) => {
      // A 503 is the API shedding load (the client retries it); a 404 is the /404 route's own check.
      if (msg.type() === 'error' && !/status of (404|503)/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  }, 660_000);

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function get<T>(path: string): Promise<T> {
    const token = await page.evaluate(
      () => sessionStorage.getItem('kw.token') ?? localStorage.getItem('kw.token'),
    );
    const send = () => fetch(`${api.url}/api${path}`, { headers: { Authorization: `Bearer ${token}` } });
    let res = await send();
    for (let i = 0; i < 10 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      res = await send();
    }
    expect(res.status, `GET ${path}`).toBe(200);
    return (await res.json()) as T;
  }

  async function signInDemo(lang: Lang) {
    await page.goto(`${api.url}/sign-in`);
    await page.evaluate((l) => {
      localStorage.clear();
      sessionStorage.clear();
      localStorage.setItem('kw.language', l);
    }, lang);
    await page.reload();
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);
  }

  async function shot(name: string) {
    await page.waitForTimeout(300); // transitions and toasts settle before the picture
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** Waits until the screen has drawn: its heading is there and no skeleton or loader is left. */
  async function settled() {
    await page.locator('h1').first().waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      () =>
        document.querySelectorAll('.mantine-Skeleton-root[data-visible], .mantine-Loader-root').length === 0,
      undefined,
      { timeout: 30_000, polling: 200 },
    );
    // Fonts and the chart's debounced resize to its box.
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    await page.waitForTimeout(400);
  }

  function cuts(): Promise<Cuts> {
    return page.evaluate(() => {
      const visible = (el: Element) => {
        const b = el.getBoundingClientRect();
        return b.width > 0 && b.height > 0 && getComputedStyle(el).visibility !== 'hidden';
      };
      const name = (el: Element) =>
        `${el.tagName.toLowerCase()}[${el.getAttribute('data-testid') ?? el.getAttribute('aria-label') ?? ''}] "${(
          (el as HTMLInputElement).value ?? el.textContent ?? ''
        ).slice(0, 60)}"`;
      const inputs = [...document.querySelectorAll('input, textarea')]
        .filter((el) => {
          const i = el as HTMLInputElement;
          return (
            !['checkbox', 'radio', 'hidden', 'file', 'range', 'color'].includes(i.type) &&
            visible(i) &&
            i.value !== '' &&
            i.scrollWidth > i.clientWidth + 1
          );
        })
        .map((i) => `${name(i)} ${i.scrollWidth} > ${i.clientWidth}`);
      // A label cut with an ellipsis (a badge, a button, a tab): text the user cannot read.
      const leaves = [...document.querySelectorAll('body *')].filter(
        (el) =>
          visible(el) &&
          [...el.childNodes].some((n) => n.nodeType === 3 && (n.textContent ?? '').trim() !== ''),
      );
      const labels = leaves
        .filter((el) => {
          const s = getComputedStyle(el);
          return s.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1;
        })
        .map((el) => `${name(el)} ${el.scrollWidth} > ${el.clientWidth}`);
      // Text beyond the viewport's right edge, outside the table cells that scroll in their own box.
      const outside = leaves
        .filter(
          (el) => !el.closest('td, th, [data-scroll-x]') && el.getBoundingClientRect().right > innerWidth + 1,
        )
        .map((el) => `${name(el)} right ${Math.round(el.getBoundingClientRect().right)}`);
      // Text that reaches past the box of an ancestor that hides overflow (a badge, a card): drawn cut, with
      // no ellipsis to say so. A box that scrolls (a table's) is the user's to scroll, not a cut.
      const clipped = leaves
        .filter((el) => {
          // The text's box and the boxes around it up to the one that clips (a badge's pill inside a card).
          let left = Number.POSITIVE_INFINITY;
          let right = Number.NEGATIVE_INFINITY;
          for (let a: Element | null = el; a && a !== document.body; a = a.parentElement) {
            if (a !== el) {
              const overflow = getComputedStyle(a).overflowX;
              if (overflow === 'auto' || overflow === 'scroll') return false;
              if (overflow === 'hidden' || overflow === 'clip') {
                // It clips at its padding box.
                const r = a.getBoundingClientRect();
                const inner = r.left + a.clientLeft;
                if (right > inner + a.clientWidth + 1 || left < inner - 1) return true;
              }
            }
            const b = a.getBoundingClientRect();
            left = Math.min(left, b.left);
            right = Math.max(right, b.right);
          }
          return false;
        })
        .map((el) => `${name(el)} right ${Math.round(el.getBoundingClientRect().right)}`);
      return {
        pageWidth: document.scrollingElement?.scrollWidth ?? 0,
        viewport: innerWidth,
        inputs,
        labels,
        outside,
        clipped,
      };
    });
  }

  async function expectWhole(what: string) {
    const c = await cuts();
    expect(c.pageWidth, `${what}: the page scrolls sideways`).toBeLessThanOrEqual(c.viewport);
    expect(c.inputs.join(' · '), `${what}: inputs cut`).toBe('');
    expect(c.labels.join(' · '), `${what}: labels cut`).toBe('');
    expect(c.outside.join(' · '), `${what}: text beyond the right edge`).toBe('');
    expect(c.clipped.join(' · '), `${what}: text cut by its box`).toBe('');
  }

  for (const lang of ['en', 'pl'] as const)
    it(`shows every route whole at 390 px (${lang})`, { timeout: 300_000 }, async () => {
      await page.setViewportSize(PHONE);
      await signInDemo(lang);
      const devices = await get<ApiDevice[]>('/devices');
      const locations = await get<ApiLocation[]>('/locations');
      const location = locations.find((l) => l.tariffId) ?? locations[0]!;
      const tariffId = location.tariffId ?? devices.find((d) => d.tariff)?.tariff?.id;
      expect(tariffId).toBeDefined();
      const meter = devices[0]!;
      const routes = [
        '/dashboard',
        // Every details page the demo's fleet has (three-phase, single-phase, solar, heat pump, thermostat...).
        ...devices.map((d) => detailsPathFor(d.id, d.typeCode, d.phases ?? 3)),
        `/device-energy-details/${meter.id}`,
        `/edit-device/${meter.id}`,
        '/device/add',
        '/user/profile',
        `/device/overview/${meter.id}`,
        `/device/data-log?device=${meter.id}`,
        '/analytics',
        '/analytics?tab=comparisons',
        `/stats/tariff/${tariffId}`,
        '/location/index',
        `/location/view/${location.id}`,
        `/location/edit/${location.id}`,
        '/location/edit/new',
        `/location/tariff-edit/${location.id}/${tariffId}`,
        `/location/tariff-edit/${location.id}/new`,
        '/404',
      ];
      for (const route of [...new Set(routes)]) {
        await page.goto(`${api.url}${route}`);
        await settled();
        await expectWhole(`${route} (${lang})`);
      }
      // The tariff statistics (their comparison's sentence and badge) and the device page's period presets.
      await page.goto(`${api.url}/stats/tariff/${tariffId}`);
      await page.getByTestId('comparison-caption').waitFor({ timeout: 30_000 });
      await settled();
      await expectWhole(`tariff statistics (${lang})`);
      await shot(`layout-tariff-stats-390-${lang}`);
      await page.goto(`${api.url}${detailsPathFor(meter.id, meter.typeCode, meter.phases ?? 3)}`);
      await settled();
      const presets = page.getByTestId('range-presets').locator('label');
      const boxes = await presets.evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right));
      expect(boxes.length).toBeGreaterThanOrEqual(6);
      for (const right of boxes) expect(right).toBeLessThanOrEqual(PHONE.width);
      await page
        .getByTestId('range-presets')
        .getByText(CATALOGUES[lang]['details.range.billing'], { exact: true })
        .click();
      await page.getByTestId('billing-period').waitFor();
      await expectWhole(`billing period (${lang})`);
      await shot(`layout-device-390-${lang}`);

      // Signed out: the sign-in page and every view of it (sign up, forgot, the mailed reset link).
      await page.evaluate(() => {
        localStorage.removeItem('kw.token');
        sessionStorage.clear();
      });
      await page.goto(`${api.url}/sign-in`);
      await page.getByTestId('demo').waitFor();
      await expectWhole(`/sign-in (${lang})`);
      for (const route of [
        '/sign-in?view=sign-up',
        '/sign-in?view=forgot',
        '/reset-password?token=a-token-from-the-mail',
        '/sign-in-fox',
      ]) {
        await page.goto(`${api.url}${route}`);
        await page.locator('form').first().waitFor();
        await settled();
        await expectWhole(`${route} (${lang})`);
      }
    });

  for (const [lang, width] of [
    ['en', 1280],
    ['pl', 390],
  ] as const)
    it(`draws a year's last time label whole and fits the y axis to the lines (${lang}, ${width} px)`, {
      timeout: 180_000,
    }, async () => {
      await page.setViewportSize({ width, height: 900 });
      try {
        await signInDemo(lang);
        const m = CATALOGUES[lang];
        const devices = await get<ApiDevice[]>('/devices');
        const meter = devices.find((d) =>
          detailsPathFor(d.id, d.typeCode, d.phases ?? 3).startsWith('/device-details/'),
        );
        expect(meter).toBeDefined();
        await page.goto(`${api.url}${detailsPathFor(meter!.id, meter!.typeCode, meter!.phases ?? 3)}`);
        await settled();
        // The phases summed: one power line, the busiest minutes of each day as its band.
        await page.getByText(m['details.view.summed'], { exact: true }).click();
        const year = answerTo(
          page,
          (u) =>
            u.pathname === `/api/devices/${meter!.id}/series` &&
            (u.searchParams.get('params') ?? '').split(',').includes('pave') &&
            Date.parse(u.searchParams.get('to') ?? '') - Date.parse(u.searchParams.get('from') ?? '') >
              300 * DAY_MS,
          'the series of one year',
        );
        await page.getByTestId('range-presets').getByText(m['details.range.year'], { exact: true }).click();
        const answer = await year;
        const body = (await answer.json()) as {
          from: number;
          to: number;
          tz: string;
          series: Record<string, { avg?: (number | null)[]; max?: (number | null)[] }>;
        };
        const power = body.series.pave;
        const top = (xs: readonly (number | null)[] | undefined) =>
          Math.max(...(xs ?? []).filter((x): x is number => x !== null));
        const lineMax = top(power?.avg);
        const bandMax = top(power?.max);
        expect(lineMax).toBeGreaterThan(0);
        // The case in point: the band reaches far above the line.
        expect(bandMax).toBeGreaterThan(1.5 * lineMax);
        const chart = page.getByTestId('chart-power').locator('.kw-chart');
        // The chart has drawn the year once its y range is the year's (the day's came first); a range that
        // never fits is read below and reported with its value.
        await page
          .waitForFunction(
            ([lo, hi]) => {
              const v = Number(
                document.querySelector('[data-testid=chart-power] .kw-chart')?.getAttribute('data-y-max'),
              );
              return v >= (lo as number) && v <= (hi as number);
            },
            [lineMax, 1.5 * lineMax],
            { timeout: 15_000, polling: 200 },
          )
          .catch(() => undefined);
        await settled();
        const yMax = Number(await chart.getAttribute('data-y-max'));
        expect(yMax).toBeGreaterThanOrEqual(lineMax);
        expect(yMax).toBeLessThanOrEqual(1.5 * lineMax);

        // Every month's label fits in the room right of the plot when centred on its right edge.
        const labels: string[] = [];
        for (let t = body.from; t <= body.to; t += 28 * DAY_MS)
          labels.push(formatInstant(t, body.tz, lang, 'shortMonth'));
        labels.push(formatInstant(body.to, body.tz, lang, 'shortMonth'));
        for (const id of ['chart-power', 'chart-voltage']) {
          const room = await page
            .getByTestId(id)
            .locator('.uplot')
            .evaluate((root, texts) => {
              const canvas = root.querySelector('canvas')!.getBoundingClientRect();
              const over = root.querySelector('.u-over')!.getBoundingClientRect();
              const ctx = document.createElement('canvas').getContext('2d')!;
              // uPlot's axis font.
              ctx.font =
                '12px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
              const widest = Math.max(...texts.map((t) => ctx.measureText(t).width));
              return { right: canvas.right - over.right, half: widest / 2 };
            }, labels);
          expect(room.right, `${id}: room right of the plot for "${labels.at(-1)}"`).toBeGreaterThanOrEqual(
            room.half,
          );
        }
        await shot(`layout-year-${width}-${lang}`);
        // Five years (a custom range; the calendar's labels are English ones): the y axis still fits the
        // line, and the widest time label the axis draws fits right of the plot.
        if (lang === 'en') await fiveYears(meter!.id, body.tz);
      } finally {
        await page.setViewportSize(PHONE);
      }
    });

  /** The device page's power chart over the five years to today: y range and last time label. */
  async function fiveYears(deviceId: number | string, tz: string) {
    const today = localDayBefore(0, tz);
    const from = localDayBefore(5 * 365 + 1, tz);
    await page.getByTestId('range-presets').getByText(en['details.range.custom'], { exact: true }).click();
    await page.getByTestId('range-custom').click();
    const five = answerTo(
      page,
      (u) =>
        u.pathname === `/api/devices/${deviceId}/series` &&
        (u.searchParams.get('params') ?? '').split(',').includes('pave') &&
        Date.parse(u.searchParams.get('to') ?? '') - Date.parse(u.searchParams.get('from') ?? '') >
          5 * 365 * DAY_MS,
      'the series of five years',
    );
    await clickCalendarDays(page, today, [from, today]);
    const body = (await (await five).json()) as { series: Record<string, { avg?: (number | null)[] }> };
    const lineMax = Math.max(...(body.series.pave?.avg ?? []).filter((x): x is number => x !== null));
    expect(lineMax).toBeGreaterThan(0);
    const chart = page.getByTestId('chart-power').locator('.kw-chart');
    await page
      .waitForFunction(
        ([lo, hi]) => {
          const el = document.querySelector('[data-testid=chart-power] .kw-chart') as HTMLElement | null;
          const v = Number(el?.dataset.yMax);
          return v >= (lo as number) && v <= (hi as number) && (el?.dataset.xLabels ?? '').length > 2;
        },
        [lineMax, 1.5 * lineMax],
        { timeout: 15_000, polling: 200 },
      )
      .catch(() => undefined);
    await settled();
    const yMax = Number(await chart.getAttribute('data-y-max'));
    expect(yMax, 'five years: y axis top').toBeGreaterThanOrEqual(lineMax);
    expect(yMax, 'five years: y axis top').toBeLessThanOrEqual(1.5 * lineMax);
    for (const id of ['chart-power', 'chart-voltage']) {
      const room = await page
        .getByTestId(id)
        .locator('.uplot')
        .evaluate((root) => {
          const box = root.closest('.kw-chart') as HTMLElement;
          const labels = JSON.parse(box.dataset.xLabels ?? '[]') as string[];
          const ctx = document.createElement('canvas').getContext('2d')!;
          ctx.font = box.dataset.xFont ?? '';
          const ratio = Number(box.dataset.xPxRatio) || 1;
          let widest = 0;
          for (const l of labels)
            for (const line of l.split('\n')) widest = Math.max(widest, ctx.measureText(line).width / ratio);
          const canvas = root.querySelector('canvas')!.getBoundingClientRect();
          const over = root.querySelector('.u-over')!.getBoundingClientRect();
          return { labels, right: canvas.right - over.right, half: widest / 2 };
        });
      expect(room.labels.length, `${id}: time labels drawn`).toBeGreaterThan(1);
      expect(
        room.right,
        `${id}: room right of the plot for ${room.labels.join(' | ')}`,
      ).toBeGreaterThanOrEqual(room.half);
    }
    // Voltage quality is computed over at most 694 days: the panel says so instead of asking for five years.
    expect(await page.getByTestId('voltage-quality-too-long').textContent()).toBe(
      en['export.quality.tooLong'].replace('{days}', String(Math.floor(VOLTAGE_QUALITY_MAX_MS / DAY_MS))),
    );
    await shot('layout-five-years-1280-en');
  }

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
