/**
 * One session in two tabs of the same browser, against the real API in headless Chromium: the tabs share
 * one refresh token, so when both need a refresh at once only one of them spends it and the other takes
 * the tokens it stored (a replayed refresh token would end the whole session). And sign-out on a busy
 * page cancels what is in flight: no 401 reaches the console.
 */
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  startApi,
} from '../src/testing.ts';
import { explainFailures } from './explain.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`web e2e skipped: ${skip}`);

describe.skipIf(skip !== null)('one session in two tabs', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let first: Page;
  let second: Page;
  /** Console errors and page errors per tab. */
  const errors = new Map<Page, string[]>();
  explainFailures(() => ({ page: first, api, notes: () => [...errors.values()].flat() }));

  function watch(page: Page): Page {
    const list: string[] = [];
    errors.set(page, list);
    page.on('console', (msg) => {
      if (msg.type() === 'error') list.push(msg.text());
    });
    page.on('pageerror', (err) => list.push(err.message));
    return page;
  }

  /** Refresh requests sent by any tab of the browser while `fn` runs. */
  async function refreshesDuring(fn: () => Promise<void>): Promise<number> {
    let n = 0;
    const onRequest = (r: Request) => {
      if (r.url().includes('/api/account/refreshtoken')) n++;
    };
    context.on('request', onRequest);
    try {
      await fn();
    } finally {
      context.off('request', onRequest);
    }
    return n;
  }

  const stored = (page: Page, key: string) => page.evaluate((k) => localStorage.getItem(k), key);

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist'), env: { KW_DEMO_HISTORY_DAYS: '2' } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    first = watch(await context.newPage());
    await first.goto(`${api.url}/sign-in`);
    await first.getByTestId('demo').click();
    await first.waitForURL(/\/dashboard/);
    await first.getByTestId('device-row').first().waitFor({ timeout: 60_000 });
    second = watch(await context.newPage());
    await second.goto(`${api.url}/dashboard`);
    await second.getByTestId('device-row').first().waitFor();
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('refreshes once when both tabs find the access token expired at the same time', async () => {
    // Both tabs hold an access token the server no longer takes, and the same refresh token.
    await first.evaluate(() => localStorage.setItem('kw.token', 'expired.token.value'));
    const refreshToken = await stored(first, 'kw.refreshToken');
    const n = await refreshesDuring(async () => {
      await Promise.all([first.reload(), second.reload()]);
      await Promise.all([
        first.getByTestId('device-row').first().waitFor(),
        second.getByTestId('device-row').first().waitFor(),
      ]);
    });
    expect(n).toBe(1);
    expect(first.url()).toMatch(/\/dashboard$/);
    expect(second.url()).toMatch(/\/dashboard$/);
    const token = await stored(second, 'kw.token');
    expect(token).not.toBe('expired.token.value');
    expect(await stored(first, 'kw.refreshToken')).not.toBe(refreshToken);
    // The one session both tabs now hold is good on the server.
    const me = await fetch(`${api.url}/api/account/userInfo`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(me.status).toBe(200);
  });

  it("takes the other tab's refreshed tokens without refreshing again", async () => {
    for (const list of errors.values()) list.length = 0;
    await first.evaluate(() => localStorage.setItem('kw.token', 'expired.token.value'));
    /** The bearer tokens the second tab sends after the first one refreshed. */
    const sent = new Set<string>();
    const onRequest = (r: Request) => {
      const auth = r.headers().authorization;
      if (r.url().includes('/api/') && auth) sent.add(auth.replace(/^Bearer /, ''));
    };
    const n = await refreshesDuring(async () => {
      await first.reload();
      await first.getByTestId('device-row').first().waitFor();
      second.on('request', onRequest);
      // The second tab never reloads: it follows the storage and its next requests use the new token.
      await second.getByTestId('device-row').locator('a').first().click();
      await second.waitForURL(/-details\/\d+/);
      await second.waitForLoadState('networkidle');
    });
    second.off('request', onRequest);
    expect(n).toBe(1);
    expect(second.url()).not.toMatch(/sign-in/);
    // Only the token the first tab stored: the second follows the shared storage, not a copy of its own.
    expect([...sent]).toEqual([await stored(first, 'kw.token')]);
    // A 401 to the token planted above is expected (in either tab); nothing else is.
    for (const page of [first, second])
      expect(errors.get(page)?.filter((m) => !/status of 401/.test(m))).toEqual([]);
  });

  it('signs out of a busy page with no 401 in the console', async () => {
    await second.close();
    const device = first.getByTestId('device-row').locator('a').first();
    await first.goto(`${api.url}/dashboard`);
    await device.waitFor();
    const before = errors.get(first)!.length;
    // Every telemetry read of the device page is held on its way to the API, so plenty is in flight
    // when the user signs out.
    const held: Promise<void>[] = [];
    await first.route(/\/api\/devices\/\d+\/(series|latest|energy|readings)/, (route) => {
      held.push(
        new Promise<void>((resolve) => setTimeout(resolve, 1500))
          .then(() => route.continue())
          .catch(() => {}),
      );
    });
    await device.click();
    await first.waitForURL(/-details\/\d+/);
    await expect.poll(() => held.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await first.getByRole('button', { name: /@/ }).filter({ visible: true }).click();
    await first.getByTestId('sign-out').click();
    await first.waitForURL(/\/sign-in/);
    await Promise.all(held);
    // What was held would have come back 401 by now; give stragglers a moment to show in the console.
    await first.waitForTimeout(1500);
    await first.unroute(/\/api\/devices\//);
    expect(await stored(first, 'kw.token')).toBeNull();
    expect(first.url()).toMatch(/\/sign-in/);
    expect(errors.get(first)!.slice(before)).toEqual([]);
  });
});
