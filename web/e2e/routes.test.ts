/**
 * Every route of docs/spec.md §2 for the demo user, in headless Chromium against the real API: each renders
 * its title with a clean console and no serious or critical accessibility violation; `/` and unknown
 * paths redirect; phones (375 px) and the mobile breakpoint (576 px) never scroll sideways; and the main
 * screens are photographed in light and dark theme into e2e/screenshots/ for reviewers.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { detailsPathFor } from '@kilowatch/core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kindFromPath } from '../src/features/devices/chartGroups.ts';
import { en } from '../src/i18n/locales/en.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  seriousViolations,
  startApi,
  unforgivenErrors,
} from '../src/testing.ts';
import { explainFailures } from './explain.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`web e2e (routes) skipped: ${skip}`);

const SCREENSHOTS = join(dirname(fileURLToPath(import.meta.url)), 'screenshots');
const text = (id: string) => (en as Record<string, string>)[id] ?? id;

interface ApiDevice {
  id: number;
  name: string;
  typeCode: number;
  phases?: 1 | 3;
}
interface ApiLocation {
  id: number;
  name: string;
  tariffId: number | null;
}
interface ApiTariff {
  id: number;
  name: string;
}

interface RouteCase {
  path: string;
  /** The page's main heading contains one of these (a screen title, or the name of what it shows). */
  title: string[];
}

describe.skipIf(skip !== null)('every route for the demo user', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const routes: RouteCase[] = [];
  let consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));
  let shed = 0;
  let detailsPath = '';

  const token = () => page.evaluate(() => localStorage.getItem('kw.token'));
  async function get<T>(path: string): Promise<T> {
    const res = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${await token()}` } });
    expect(res.status, `GET ${path}`).toBe(200);
    return (await res.json()) as T;
  }

  /** The visible main heading once it has text, and the page has settled (no spinner in the main area). */
  async function heading(): Promise<string> {
    const h1 = page.locator('h1').filter({ visible: true }).first();
    await h1.waitFor();
    await page.waitForFunction(
      () => {
        const h = [...document.querySelectorAll('h1')].find((e) => (e as HTMLElement).offsetParent !== null);
        return Boolean(h?.textContent?.trim()) && !document.querySelector('main .mantine-Loader-root');
      },
      undefined,
      { timeout: 30_000, polling: 100 },
    );
    return ((await h1.textContent()) ?? '').trim();
  }

  beforeAll(async () => {
    api = await startApi({
      webDist: inject('webDist'),
      env: { KW_DEMO_HISTORY_DAYS: '40' },
      waitForDemoHistory: true,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch; the 404 of the unknown path is provoked on purpose.
      if (msg.type() === 'error' && !/status of (401|404)/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
    // A loaded machine makes the API shed work with 503 + Retry-After (the client retries those); Chromium
    // logs each one. They are counted here and only that many 503 lines are forgiven.
    page.on('response', (r) => {
      if (r.status() === 503 && r.headers()['retry-after'] && r.url().includes('/api/')) shed++;
    });

    await page.goto(`${api.url}/sign-in`);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/dashboard/);

    const devices = await get<ApiDevice[]>('/api/devices');
    const locations = await get<ApiLocation[]>('/api/locations');
    expect(devices.length).toBeGreaterThan(0);
    expect(locations.length).toBeGreaterThan(0);
    const location = locations.find((l) => l.tariffId !== null) ?? locations[0]!;
    const tariffs = await get<ApiTariff[]>(`/api/locations/${location.id}/tariffs`);
    expect(tariffs.length, 'the demo location has a tariff').toBeGreaterThan(0);
    const tariff = tariffs.find((t) => t.id === location.tariffId) ?? tariffs[0]!;

    // One device of every details page the demo has.
    const byKind = new Map<string, ApiDevice>();
    for (const d of devices) {
      const kind = kindFromPath(detailsPathFor(d.id, d.typeCode, d.phases ?? 3));
      if (!byKind.has(kind)) byKind.set(kind, d);
    }
    const first = devices[0]!;
    detailsPath = detailsPathFor(first.id, first.typeCode, first.phases ?? 3);
    routes.push(
      { path: '/dashboard', title: [text('dashboard.title'), text('nav.dashboard')] },
      ...[...byKind.values()].map((d) => ({
        path: detailsPathFor(d.id, d.typeCode, d.phases ?? 3),
        title: [d.name],
      })),
      { path: `/edit-device/${first.id}`, title: [text('edit.title'), first.name] },
      { path: '/user/profile', title: [text('page.profile')] },
      { path: `/device/overview/${first.id}`, title: [text('overview.title'), first.name] },
      { path: '/device/data-log', title: [text('log.title')] },
      { path: '/analytics', title: [text('page.analytics')] },
      { path: `/stats/tariff/${tariff.id}`, title: [text('page.tariffStats'), tariff.name] },
      { path: '/location/index', title: [text('page.locations')] },
      { path: `/location/view/${location.id}`, title: [text('page.location'), location.name] },
      { path: `/location/edit/${location.id}`, title: [text('page.locationEdit'), location.name] },
      {
        path: `/location/tariff-edit/${location.id}/${tariff.id}`,
        title: [text('page.tariffEdit'), tariff.name],
      },
      { path: '/404', title: [text('notFound.title')] },
    );
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('covers every route of docs/spec.md §2', () => {
    const patterns = routes.map((r) => (r.path === '/404' ? r.path : r.path.replace(/\/\d+/g, '/{id}')));
    for (const p of [
      '/dashboard',
      '/device-details/{id}',
      '/edit-device/{id}',
      '/user/profile',
      '/device/overview/{id}',
      '/device/data-log',
      '/analytics',
      '/stats/tariff/{id}',
      '/location/index',
      '/location/view/{id}',
      '/location/edit/{id}',
      '/location/tariff-edit/{id}/{id}',
      '/404',
    ]) {
      expect(patterns, p).toContain(p);
    }
    // The demo's meters cover the other details pages; each one found is visited.
    expect(patterns.filter((p) => /details\/\{id\}$/.test(p)).length).toBeGreaterThanOrEqual(2);
  });

  it('renders each route with its title, a clean console and no serious accessibility violation', {
    timeout: 600_000,
  }, async () => {
    const failures: string[] = [];
    for (const route of routes) {
      consoleErrors = [];
      shed = 0;
      await page.goto(`${api.url}${route.path}`);
      const title = await heading();
      const where = new URL(page.url()).pathname;
      if (where !== route.path) failures.push(`${route.path}: ended at ${where}`);
      if (!route.title.some((t) => title.includes(t)))
        failures.push(`${route.path}: heading "${title}" names none of ${JSON.stringify(route.title)}`);
      const violations = await seriousViolations(page);
      if (violations.length) failures.push(`${route.path}: axe ${violations.join('; ')}`);
      const errors = unforgivenErrors(consoleErrors, shed);
      if (errors.length) failures.push(`${route.path}: console ${errors.join('; ')}`);
    }
    expect(failures).toEqual([]);
  });

  it('renders both sign-in pages, in their own layout, to a visitor', async () => {
    const visitor = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const p = await visitor.newPage();
      const errors: string[] = [];
      p.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(msg.text());
      });
      p.on('pageerror', (err) => errors.push(err.message));
      for (const [path, title] of [
        ['/sign-in', text('signIn.title')],
        ['/sign-in-fox', text('signIn.companion')],
      ] as const) {
        await p.goto(`${api.url}${path}`);
        const h1 = p.locator('h1').filter({ visible: true }).first();
        await h1.waitFor();
        expect((await h1.textContent())?.trim(), path).toBe(title);
        expect(new URL(p.url()).pathname).toBe(path);
        expect(await seriousViolations(p), path).toEqual([]);
      }
      expect(errors).toEqual([]);
    } finally {
      await visitor.close();
    }
  });

  it('redirects / to /dashboard, and an unknown path or tariff to /404', async () => {
    await page.goto(`${api.url}/`);
    await page.waitForURL(/\/dashboard$/);
    expect(await heading()).toContain(text('dashboard.title'));
    await page.goto(`${api.url}/no/such/route`);
    await page.waitForURL(/\/404$/);
    expect(await heading()).toContain(text('notFound.title'));
    // A tariff that does not exist, as a device that does not exist.
    // The address turns to /404 as soon as the tariff's 404 arrives; the not-found screen (its own chunk)
    // replaces the stats screen's heading a moment later.
    await page.goto(`${api.url}/stats/tariff/999999`);
    await page.waitForURL(/\/404$/);
    await expect.poll(heading, { timeout: 20_000 }).toContain(text('notFound.title'));
  });

  it.each([375, 576])('never scrolls sideways at %i px', { timeout: 180_000 }, async (width) => {
    await page.setViewportSize({ width, height: 800 });
    try {
      for (const path of ['/dashboard', detailsPath]) {
        await page.goto(`${api.url}${path}`);
        await heading();
        // Charts size themselves after the first frame.
        await page.waitForTimeout(300);
        const { scroll, inner } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          inner: window.innerWidth,
        }));
        expect(scroll, `${path} at ${width} px`).toBeLessThanOrEqual(inner);
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('photographs the main screens in light and dark theme', { timeout: 300_000 }, async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const screens: [string, string][] = [
      ['dashboard', '/dashboard'],
      ['details', detailsPath],
      ['data-log', '/device/data-log'],
      ['analytics', '/analytics'],
      ['locations', '/location/index'],
      ['profile', '/user/profile'],
    ];
    for (const theme of ['light', 'dark'] as const) {
      await page.evaluate((t) => localStorage.setItem('kw.themeMode', t), theme);
      for (const [name, path] of screens) {
        await page.goto(`${api.url}${path}`);
        await heading();
        expect(
          await page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme')),
        ).toBe(theme);
        await page.waitForTimeout(300);
        await page.screenshot({ path: join(SCREENSHOTS, `${name}-${theme}.png`), fullPage: true });
      }
    }
    await page.evaluate(() => localStorage.removeItem('kw.themeMode'));
  });
});
