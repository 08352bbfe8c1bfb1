/**
 * New passwords in headless Chromium against the real API: the strength meter of docs/spec.md §5 on the
 * sign-up and reset screens moves with what is typed (the share of lowercase, uppercase, digit and
 * special character, held low until 8 characters), and a commonly used password is refused on its field
 * (docs/api.md §Account) while a better one then goes through. The reset screen says that a new password
 * ends every session and API key.
 */
import type { Browser, Locator, Page } from 'playwright-core';
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
if (skip) console.warn(`web e2e skipped: ${skip}`);

describe.skipIf(skip !== null)('new passwords on the sign-up and reset screens', () => {
  let api: RunningApi;
  let browser: Browser;
  let page: Page;
  /** Answers of the API to register and reset calls, in order (`POST /api/register 400`). */
  const answers: string[] = [];
  explainFailures(() => ({ page, api, notes: () => answers }));

  beforeAll(async () => {
    // No demo: these screens need nothing but the API.
    api = await startApi({ webDist: inject('webDist'), env: { KW_DEMO: 'off' } });
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('response', (r) => {
      const path = new URL(r.url()).pathname;
      if (path === '/api/register' || path === '/api/reset_password') {
        answers.push(`${r.request().method()} ${path} ${r.status()}`);
      }
    });
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  const meter = () => page.getByRole('progressbar', { name: en['password.strength'] });

  /** Types `password` into `field` and waits until the meter shows `value`. */
  async function typeAndRead(field: Locator, password: string, value: number): Promise<void> {
    await field.fill(password);
    await expect.poll(() => meter().getAttribute('aria-valuenow'), { timeout: 10_000 }).toBe(String(value));
  }

  it('the sign-up meter moves with the password, and a common password is refused on its field', async () => {
    await page.goto(`${api.url}/sign-in?view=sign-up`);
    await page.getByRole('heading', { name: en['signUp.title'] }).waitFor();
    const email = `passwords-${Date.now()}@example.test`;
    await page.getByLabel(en['signUp.fullName']).fill('Meter Tester');
    await page.getByLabel(en['signIn.email']).fill(email);
    // The label reads "Password *" (required); "Repeat password" must not match.
    const password = page.getByLabel(new RegExp(`^${en['signIn.password']}\\W*$`));
    const confirm = page.getByLabel(en['signUp.confirm']);

    expect(await meter().getAttribute('aria-valuenow')).toBe('0');
    // Under 8 characters the meter stays at one check's share, however many checks are met.
    await typeAndRead(password, 'aB1!', 25);
    await typeAndRead(password, 'abcdefgh', 25);
    await typeAndRead(password, 'abcdEFGH', 50);
    await typeAndRead(password, 'abcdEF12', 75);
    await typeAndRead(password, 'abcD1!xy', 100);

    // A common password, however strong it looks to the meter's checks, is refused by the server.
    await typeAndRead(password, 'Password1', 75);
    await confirm.fill('Password1');
    await page.getByRole('button', { name: en['signUp.submit'] }).click();
    await page.getByText(en['val.passwordCommon']).waitFor();
    expect(answers.at(-1)).toBe('POST /api/register 400');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    const refused = await fetch(`${api.url}/api/account/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: 'Password1' }),
    });
    expect(refused.status).toBe(400);

    // A better one goes through and signs the new account in.
    await typeAndRead(password, 'Meter-tester-7', 100);
    await confirm.fill('Meter-tester-7');
    await page.getByRole('button', { name: en['signUp.submit'] }).click();
    await page.waitForURL(/\/dashboard/, { timeout: 30_000 });
    expect(answers.at(-1)).toBe('POST /api/register 201');
  });

  it('the reset screen says what a new password ends, shows the meter and refuses a common one', async () => {
    await page.evaluate(() => localStorage.clear());
    const email = `reset-meter-${Date.now()}@example.test`;
    const registered = await fetch(`${api.url}/api/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: 'first-password-1', fullName: 'Reset Meter' }),
    });
    expect(registered.status).toBe(201);
    const forgot = await fetch(`${api.url}/api/forgot_password`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    expect(forgot.status).toBe(202);
    // Without a mailer the API writes the mail to its log (docs/configuration.md): the link is read there.
    let link: string | undefined;
    for (let i = 0; i < 100 && !link; i++) {
      const mail = api
        .output()
        .split('\n')
        .filter((l) => l.includes(email) && l.includes('reset-password'))
        .pop();
      link = mail?.match(/https?:\/\/[^\s"\\]+\/reset-password\?token=[\w-]+/)?.[0];
      if (!link) await new Promise((r) => setTimeout(r, 200));
    }
    expect(link, 'the reset link in the API log').toBeTruthy();

    await page.goto(link!);
    await page.getByRole('heading', { name: en['reset.title'] }).waitFor();
    expect(await page.getByTestId('reset-ends-access').textContent()).toBe(en['reset.endsAccess']);
    const field = page.getByLabel(en['reset.newPassword']);
    await typeAndRead(field, 'iloveyou', 25);
    await page.getByRole('button', { name: en['reset.setPassword'] }).click();
    await page.getByText(en['val.passwordCommon']).waitFor();
    expect(answers.at(-1)).toBe('POST /api/reset_password 400');

    // The link was not spent by the refusal: a better password sets it.
    await typeAndRead(field, 'Second-password-2', 100);
    await page.getByRole('button', { name: en['reset.setPassword'] }).click();
    await page.getByText(en['reset.done']).waitFor();
    expect(answers.at(-1)).toBe('POST /api/reset_password 204');
  });
});
