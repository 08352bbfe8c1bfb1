/**
 * The profile screen's API keys against the real API (embedded deployment with the demo account), in
 * headless Chromium: a key is created by name and shown once with its warning, it opens `/grafana/` and a
 * read route as `Authorization: Bearer <key>`, it is listed with its dates and never shown again, a blank
 * name is refused in the form, and after revocation in the screen the same calls get 401.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
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
if (skip) console.warn(`api-keys e2e skipped: ${skip}`);

describe.skipIf(skip !== null)('API keys on the profile screen against the embedded API', () => {
  let api: RunningApi;
  let browser: Browser;
  let page: Page;
  let secret = '';
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist') });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch; the demo history written in the background sheds work with 503.
      if (msg.type() === 'error' && !/status of (503|409)/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  /** A call from outside the browser, as Grafana or a script makes it. */
  const withKey = (path: string, key: string) =>
    fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });

  it('signs in to the demo and shows the empty API keys section', async () => {
    await page.goto(`${api.url}/user/profile`);
    await page.waitForURL(/\/sign-in/);
    await page.getByTestId('demo').click();
    await page.waitForURL(/\/user\/profile/);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByTestId('api-keys-empty').waitFor();
  });

  it('refuses a blank name without calling the server', async () => {
    await page.getByTestId('api-key-name').fill('   ');
    await page.getByTestId('api-key-create').click();
    await page.getByText('Field cannot be empty.').waitFor();
    expect(await page.getByTestId('api-key-row').count()).toBe(0);
  });

  it('creates a named key and shows it once with the warning', async () => {
    await page.getByTestId('api-key-name').fill('Grafana at home');
    await page.getByTestId('api-key-create').click();
    await page.getByTestId('api-key-new').waitFor();
    const box = page.getByTestId('api-key-new');
    expect(await box.textContent()).toContain('shown only this once');
    secret = ((await page.getByTestId('api-key-secret').textContent()) ?? '').trim();
    expect(secret.length).toBeGreaterThan(20);
    const row = page.getByTestId('api-key-row').filter({ hasText: 'Grafana at home' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Never');
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('the shown key opens /grafana/ and the read routes, and is then listed as used', async () => {
    expect((await withKey('/grafana/', secret)).status).toBe(200);
    const devices = await withKey('/api/devices', secret);
    expect(devices.status).toBe(200);
    expect(((await devices.json()) as unknown[]).length).toBeGreaterThan(0);
    // Keys never open account routes.
    expect((await withKey('/api/account/api-keys', secret)).status).toBe(401);

    // The key is never shown again: not after dismissing it, not after a reload.
    await page.getByTestId('api-key-dismiss').click();
    await page.reload();
    const row = page.getByTestId('api-key-row').filter({ hasText: 'Grafana at home' });
    await row.waitFor();
    expect(await page.getByTestId('api-key-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    // Its last use is listed instead of "Never".
    await page.waitForFunction(
      () =>
        !document.querySelector('[data-testid="api-key-row"]')?.textContent?.includes('Never') &&
        document.querySelector('[data-testid="api-key-row"]') !== null,
    );
  });

  it('revokes the key after a confirmation; the same calls then get 401', async () => {
    const row = page.getByTestId('api-key-row').filter({ hasText: 'Grafana at home' });
    await row.getByTestId('api-key-revoke').click();
    await page.getByRole('dialog').getByText('Anything using it stops working at once').waitFor();
    await page.getByTestId('confirm-delete').click();
    await page.getByText('The key has been revoked.').waitFor();
    await page.getByTestId('api-keys-empty').waitFor();
    expect((await withKey('/grafana/', secret)).status).toBe(401);
    expect((await withKey('/api/devices', secret)).status).toBe(401);
    expect(consoleErrors).toEqual([]);
  });

  it('says so clearly when the account already holds the most keys it may', async () => {
    const token = await page.evaluate(() => localStorage.getItem('kw.token'));
    for (let i = 1; i <= 20; i++) {
      const res = await fetch(`${api.url}/api/account/api-keys`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: `script ${i}` }),
      });
      expect(res.status).toBe(201);
    }
    await page.reload();
    await page.getByTestId('api-key-row').nth(19).waitFor();
    await page.getByTestId('api-key-name').fill('one too many');
    await page.getByTestId('api-key-create').click();
    const error = page.getByTestId('api-key-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('You already have 20 keys. Revoke one before creating another.');
    expect(await page.getByTestId('api-key-new').count()).toBe(0);
    expect(await page.getByTestId('api-key-row').count()).toBe(20);
  });
});
