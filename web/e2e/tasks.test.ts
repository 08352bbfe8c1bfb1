/**
 * Everyday tasks finished in the browser against the real API (embedded deployment), in headless
 * Chromium: a device is edited (renamed, moved to a location) and the dashboard shows the change, a
 * server refusal lands on its field, and the mailed password-reset link opens a form that sets a new
 * password that signs in.
 */
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
if (skip) console.warn(`tasks e2e skipped: ${skip}`);

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
      if (msg.type() === 'error' && !/status of (400|503)/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function call<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const token = await page.evaluate(() => localStorage.getItem('kw.token'));
    const res = await fetch(`${api.url}/api${path}`, {
      method,
      headers: {
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
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
    await page.getByTestId('edit-billing-start').fill('2026-01-01');
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

  it('opens the mailed reset link on a reset form, and the new password signs in', async () => {
    await page.evaluate(() => localStorage.clear());
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

    // Without a mailer the API writes the mail to its log (API.md §Configuration): the link is read there.
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

  it('logged no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });
});
