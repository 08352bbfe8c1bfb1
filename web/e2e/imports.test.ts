/**
 * Importing history through the screen against the real API (embedded deployment), in headless Chromium:
 * a fresh account claims a meter of its own (the demo's simulated meters refuse imports), drops a
 * crafted Kilowatch export on the device's "Import history" screen, sees its first rows and the
 * readings they give, watches the import run to its counts, finds it among past imports and undoes it.
 * In Polish, a semicolon/decimal-comma file of hourly kWh is mapped on the screen, imported twice (the
 * second time every reading is a duplicate), the duplicate import's undo is refused with the server's
 * reason in Polish, and the first is undone. Every stamp is on a fixed past day, never today's.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { en } from '../src/i18n/locales/en.ts';
import { pl } from '../src/i18n/locales/pl.ts';
import {
  apiUnavailable,
  chromiumUnavailable,
  launchChromium,
  type RunningApi,
  seriousViolations,
  startApi,
  WEB_DIR,
} from '../src/testing.ts';
import { callAsPage } from './api-call.ts';
import { explainFailures } from './explain.ts';
import { answerTo } from './picking.ts';

const skip = chromiumUnavailable() ?? apiUnavailable();
if (skip) console.warn(`imports e2e skipped: ${skip}`);

const SHOTS = join(WEB_DIR, 'e2e/screenshots');
/** A fixed day long before any clock the suite runs under (CI fakes 2026-12 to 2027-03). */
const DAY = Date.UTC(2026, 0, 10);
const MINUTE = 60_000;
const KILOWATCH_ROWS = 30;

/** Kilowatch's own CSV export of one device: its two header lines, then a reading a minute. */
function kilowatchExport(): string {
  const iso = (ts: number) => new Date(ts).toISOString().slice(0, 19).replace('T', ' ');
  const rows = Array.from({ length: KILOWATCH_ROWS }, (_, i) => {
    const ts = DAY + i * MINUTE;
    return `${iso(ts)},${iso(ts)},Old meter,${(230 + (i % 5) / 10).toFixed(1)},${(1000 + i * 0.25).toFixed(2)}`;
  });
  return [
    'Time (UTC),Local time (UTC),Device,Voltage L1 (V),"Active energy import, total (kWh)"',
    'timestamp_utc,timestamp_local (UTC),device,vave1,energy3phases_import',
    ...rows,
  ]
    .map((l) => `${l}\r\n`)
    .join('');
}

const HOURS = [0.5, 1.25, 0.25, 0.75, 1, 0.5];
/** A Polish utility portal's hourly energy: `;` between cells, a decimal comma, stamps at each hour's end. */
function polishHourly(): string {
  const lines = HOURS.map(
    (kwh, i) => `10.01.2026 ${String(i + 1).padStart(2, '0')}:00;${String(kwh).replace('.', ',')}`,
  );
  return ['Czas;Zużycie [kWh]', ...lines].map((l) => `${l}\r\n`).join('');
}

interface ApiImport {
  id: number;
  state: string;
  rowsRead: number;
  accepted: number;
  duplicates: number;
  rejected: number;
}

describe.skipIf(skip !== null)('history import against the embedded API', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let deviceId = 0;
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));

  const call = callAsPage(
    () => page,
    () => api.url,
  );

  async function shot(name: string) {
    mkdirSync(SHOTS, { recursive: true });
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  /** Nothing on the page is wider than the window (a 390 px phone must not scroll sideways). */
  async function sidewaysOverflow(): Promise<number> {
    return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  }

  /** Arms a watch for the progress bar before the import starts: a small file may show it for a moment. */
  async function watchProgress() {
    await page.evaluate(() => {
      const w = window as unknown as { sawProgress: boolean };
      w.sawProgress = false;
      const look = () => {
        if (document.querySelector('[data-testid=import-progress] [role=progressbar]')) w.sawProgress = true;
      };
      new MutationObserver(look).observe(document.body, { childList: true, subtree: true });
    });
  }

  beforeAll(async () => {
    api = await startApi({ webDist: inject('webDist'), env: { KW_DEMO_HISTORY_DAYS: '1' } });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch: the refused undo below answers 409 on purpose.
      if (msg.type() === 'error' && !/status of (409|503)/.test(msg.text())) consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => consoleErrors.push(err.message));

    const email = `importer-${Date.now()}@example.test`;
    const password = 'importer-password-1';
    const registered = await fetch(`${api.url}/api/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password, fullName: 'History Importer' }),
    });
    expect(registered.status).toBe(201);
    await page.goto(`${api.url}/sign-in`);
    await page.getByLabel(en['signIn.email']).fill(email);
    await page.locator('input[autocomplete=current-password]').fill(password);
    await page.getByRole('button', { name: en['signIn.submit'] }).click();
    await page.waitForURL(/\/dashboard/);

    const mac = `02:00:00:${[1, 2, 3]
      .map(() =>
        Math.floor(Math.random() * 256)
          .toString(16)
          .padStart(2, '0'),
      )
      .join(':')}`;
    const claimed = await call<{ id: number }>('POST', '/devices', {
      mac,
      name: 'Imported meter',
      typeCode: 1,
      phases: 3,
      locationId: null,
    });
    expect(claimed.status).toBe(201);
    deviceId = claimed.body.id;
  });

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  it('imports a Kilowatch export through the screen: preview, progress, counts, past imports, undo', async () => {
    // The device page leads to the screen.
    const device = (await call<{ typeCode: number; phases: number }>('GET', `/devices/${deviceId}`)).body;
    expect(device.typeCode).toBe(1);
    await page.goto(`${api.url}/device-details/${deviceId}`);
    await page.getByTestId('device-import').click();
    await page.waitForURL(new RegExp(`/device/import/${deviceId}$`));
    expect(await page.getByTestId('import-title').textContent()).toBe(en['imports.title']);
    await page.getByTestId('import-history-empty').waitFor();

    await page.getByTestId('import-file').setInputFiles({
      name: 'old-meter.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(kilowatchExport()),
    });
    // Recognised as a Kilowatch export; its first 20 rows under the columns it names.
    expect(await page.getByTestId('import-format-kilowatch').isChecked()).toBe(true);
    expect(await page.getByTestId('import-preview-row').count()).toBe(20);
    const columns = (await page.getByTestId('import-columns').textContent()) ?? '';
    expect(columns).toContain('energy3phases_import');
    // The readings they give, by the parameters' names and units, never their codes.
    const parsed = page.getByTestId('import-preview-parsed');
    expect(await parsed.getByTestId('import-parsed-row').count()).toBe(20);
    const head = (await parsed.locator('thead').textContent()) ?? '';
    expect(head).toContain('Voltage L1 (V)');
    expect(head).not.toContain('vave1');
    expect(await page.getByTestId('import-source-device').count()).toBe(0);
    await shot('import-preview-en');
    expect(await seriousViolations(page)).toEqual([]);

    await watchProgress();
    const posted = answerTo(
      page,
      (u) => u.pathname === `/api/devices/${deviceId}/imports`,
      'the import POST',
    );
    await page.getByTestId('import-start').click();
    const answer = await posted;
    expect(answer.status()).toBe(202);
    const { id } = (await answer.json()) as { id: number };

    const result = page.getByTestId('import-result');
    await result.waitFor({ timeout: 30_000 });
    expect(await result.getAttribute('data-state')).toBe('done');
    expect(await page.evaluate(() => (window as unknown as { sawProgress: boolean }).sawProgress)).toBe(true);
    const count = async (name: string) =>
      Number((await page.getByTestId(`import-count-${name}`).textContent())?.replace(/\D/g, ''));
    expect(await count('rows')).toBe(KILOWATCH_ROWS);
    expect(await count('accepted')).toBe(KILOWATCH_ROWS);
    expect(await count('duplicates')).toBe(0);
    expect(await count('rejected')).toBe(0);
    const record = (await call<ApiImport>('GET', `/imports/${id}`)).body;
    expect(record).toMatchObject({ state: 'done', rowsRead: KILOWATCH_ROWS, accepted: KILOWATCH_ROWS });

    const row = page.locator(`[data-testid=import-row][data-id="${id}"]`);
    // The list shows it running until the summaries are refreshed, then finished.
    await page.locator(`[data-testid=import-row][data-id="${id}"][data-state=done]`).waitFor();
    expect(await row.getByTestId('import-row-state').textContent()).toBe(en['imports.state.done']);
    await shot('import-result-en');

    const undone = answerTo(page, (u) => u.pathname === `/api/imports/${id}`, 'the undo');
    await row.getByTestId('import-undo').click();
    expect((await undone).status()).toBe(200);
    await page.locator(`[data-testid=import-row][data-id="${id}"][data-state=undone]`).waitFor();
    expect(await row.getByTestId('import-row-state').textContent()).toBe(en['imports.state.undone']);
    expect(await row.getByTestId('import-undo').count()).toBe(0);
    expect((await call<ApiImport>('GET', `/imports/${id}`)).body.state).toBe('undone');
    await page.locator('[data-testid=import-result][data-state=undone]').waitFor();
  });

  it('in Polish, on a phone: maps an hourly-kWh CSV, imports it twice, shows a refused undo, undoes it', {
    timeout: 120_000,
  }, async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => localStorage.setItem('kw.language', 'pl'));
    await page.goto(`${api.url}/device/import/${deviceId}`);
    await page.getByTestId('import-title').waitFor();
    expect(await page.getByTestId('import-title').textContent()).toBe(pl['imports.title']);

    await page.getByTestId('import-file').setInputFiles({
      name: 'zuzycie.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(polishHourly()),
    });
    expect(await page.getByTestId('import-format-csv').isChecked()).toBe(true);
    expect(await page.getByTestId('import-preview-row').count()).toBe(HOURS.length);
    // The guesses: the stamp column and its format, the semicolon and the decimal comma.
    expect(await page.getByTestId('import-timestamp-column').inputValue()).toBe('Czas');
    expect(await page.getByTestId('import-stamp-format').inputValue()).toBe('DD.MM.YYYY HH:mm[:ss]');
    expect(await page.getByTestId('import-preview-none').textContent()).toBe(pl['imports.preview.none']);

    // The value column → total active energy import, as energy per hour in kWh.
    const energy = `${pl['param.energy3phases_import']} (kWh)`;
    await page.getByTestId('import-value-0-param').click();
    await page.getByRole('option', { name: energy, exact: true }).click();
    await page.getByTestId('import-value-0-reading').click();
    await page.getByRole('option', { name: pl['imports.mapping.reading.interval-kWh'], exact: true }).click();
    await page.getByTestId('import-interval').waitFor();
    // Each hour's end is a reading, after one at the first hour's start.
    const parsed = page.getByTestId('import-preview-parsed');
    await parsed.waitFor();
    expect(await parsed.getByTestId('import-parsed-row').count()).toBe(HOURS.length + 1);
    expect(await sidewaysOverflow()).toBeLessThanOrEqual(0);
    await shot('import-mapping-390-pl');
    expect(await seriousViolations(page)).toEqual([]);

    const runOnce = async () => {
      const posted = answerTo(
        page,
        (u) => u.pathname === `/api/devices/${deviceId}/imports`,
        'the import POST',
      );
      await page.getByTestId('import-start').click();
      const answer = await posted;
      expect(answer.status()).toBe(202);
      const { id } = (await answer.json()) as { id: number };
      await page.locator('[data-testid=import-result][data-state=done]').waitFor({ timeout: 30_000 });
      await page.locator(`[data-testid=import-row][data-id="${id}"][data-state=done]`).waitFor();
      return id;
    };
    const count = async (name: string) =>
      Number((await page.getByTestId(`import-count-${name}`).textContent())?.replace(/\D/g, ''));

    const first = await runOnce();
    expect(await count('rows')).toBe(HOURS.length);
    expect(await count('accepted')).toBe(HOURS.length + 1);
    expect(await count('rejected')).toBe(0);
    // The same file again stores nothing: every reading is already there.
    const second = await runOnce();
    expect(await count('accepted')).toBe(0);
    expect(await count('duplicates')).toBe(HOURS.length + 1);
    expect(await sidewaysOverflow()).toBeLessThanOrEqual(0);
    await shot('import-result-390-pl');

    // Undoing an import that added nothing is refused; the server's reason shows in Polish.
    const refused = answerTo(page, (u) => u.pathname === `/api/imports/${second}`, 'the refused undo');
    await page.locator(`[data-testid=import-row][data-id="${second}"]`).getByTestId('import-undo').click();
    expect((await refused).status()).toBe(409);
    expect(await page.getByTestId('import-undo-refused').textContent()).toBe(
      pl['server.importNothingToUndo'],
    );

    const undone = answerTo(page, (u) => u.pathname === `/api/imports/${first}`, 'the undo');
    await page.locator(`[data-testid=import-row][data-id="${first}"]`).getByTestId('import-undo').click();
    expect((await undone).status()).toBe(200);
    const row = page.locator(`[data-testid=import-row][data-id="${first}"][data-state=undone]`);
    await row.waitFor();
    expect(await row.getByTestId('import-row-state').textContent()).toBe(pl['imports.state.undone']);
    const readings = await call<{ items: unknown[] }>(
      'GET',
      `/devices/${deviceId}/readings?from=${new Date(DAY - 3_600_000).toISOString()}&to=${new Date(DAY + 86_400_000).toISOString()}&params=energy3phases_import`,
    );
    expect(readings.status, JSON.stringify(readings.body)).toBe(200);
    expect(readings.body.items).toEqual([]);
  });

  it('logs no console error across the cases', () => {
    expect(consoleErrors).toEqual([]);
  });
});
