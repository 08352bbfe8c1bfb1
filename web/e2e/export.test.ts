/**
 * Exports and voltage quality in the browser against the real API: the export dialog's validation
 * messages, a CSV export followed to its download and compared row by row with the data log, a PDF that
 * opens, and the voltage-quality panel showing the API's shares for every phase.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import {
  DAY_MS,
  DEFAULT_TIMEZONE,
  detailsPageFor,
  detailsPathFor,
  localDateString,
  startOfLocalDay,
} from '@kilowatch/core';
import { parseCsv } from '@kilowatch/testkit';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatShare } from '../src/features/devices/quality.ts';
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
if (skip) console.warn(`web e2e (export) skipped: ${skip}`);

interface ApiDevice {
  id: number;
  name: string;
  typeCode: number;
  phases?: 1 | 3;
}

interface ExportBody {
  deviceIds: number[];
  params: string[] | 'all';
  from: string;
  to: string;
  format: 'csv' | 'pdf';
  fileName?: string;
}

const PARAMS = ['vave1', 'vave2', 'iave3'];
/** The same parameters as the picker and the CSV's first header row name them. */
const PARAM_LABELS = ['Voltage L1 (V)', 'Voltage L2 (V)', 'Current L3 (A)'];

function hasPdfInfo(): boolean {
  try {
    execFileSync('pdfinfo', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(skip !== null)('exports and voltage quality in the browser', () => {
  let api: RunningApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let device: ApiDevice;
  let tz = DEFAULT_TIMEZONE;
  let yesterday = '';
  const consoleErrors: string[] = [];
  explainFailures(() => ({ page, api, notes: () => consoleErrors }));
  let shed = 0;

  const token = () => page.evaluate(() => localStorage.getItem('kw.token'));
  const get = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${await token()}` } });
    expect(res.status, `GET ${path}`).toBe(200);
    return (await res.json()) as T;
  };

  beforeAll(async () => {
    api = await startApi({
      webDist: inject('webDist'),
      env: { KW_DEMO_HISTORY_DAYS: '40' },
      waitForDemoHistory: true,
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    page = await context.newPage();
    page.on('console', (msg) => {
      // Chromium logs every non-2xx fetch; the 400 answers provoked below are expected.
      if (msg.type() === 'error' && !/status of (400|401|404)/.test(msg.text()))
        consoleErrors.push(msg.text());
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
    // The dashboard's rows: the token check that opens the app has finished before the test navigates on.
    await page.getByTestId('device-row').first().waitFor();
    tz = (await page.evaluate(() => localStorage.getItem('kw.timezone'))) || DEFAULT_TIMEZONE;
    yesterday = localDateString(startOfLocalDay(Date.now(), tz) - DAY_MS / 2, tz);
    const devices = await get<ApiDevice[]>('/api/devices');
    const threePhase = devices.find((d) => detailsPageFor(d.typeCode, d.phases ?? 3) === 'three-phase');
    expect(threePhase, 'the demo has a three-phase meter').toBeDefined();
    device = threePhase!;
    // The demo writes its history in the background, the last two days first ("recent"): yesterday must
    // be complete before it is exported.
    for (let i = 0; i < 90; i++) {
      const health = (await (await fetch(`${api.url}/api/health`)).json()) as {
        demoHistory?: { state?: string };
      };
      if (health.demoHistory?.state === 'recent' || health.demoHistory?.state === 'done') break;
      if (health.demoHistory?.state === 'failed') throw new Error('the demo history failed');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }, 420_000);

  afterAll(async () => {
    await browser?.close();
    await api?.stop();
  });

  async function openDialog(): Promise<void> {
    await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, device.phases ?? 3)}`);
    await page.getByTestId('device-title').waitFor();
    await page.getByTestId('export-button').click();
    await page.getByRole('dialog', { name: 'Export data' }).waitFor();
  }

  const dialog = () => page.getByRole('dialog', { name: 'Export data' });

  async function pickParams(names: readonly string[]): Promise<void> {
    for (const name of names) {
      await dialog().getByTestId('export-params').click();
      await page.getByRole('option', { name, exact: true }).click();
    }
  }

  it('refuses an export without a file type, without parameters, or over too long a range', async () => {
    await openDialog();
    const posted: string[] = [];
    const onRequest = (r: { url: () => string; method: () => string }) => {
      if (r.method() === 'POST' && r.url().endsWith('/api/exports')) posted.push(r.url());
    };
    page.on('request', onRequest);

    await dialog().getByTestId('export-submit').click();
    await dialog().getByText('Select file type to export.').waitFor();

    await dialog().getByTestId('export-format-csv').check();
    await dialog().getByTestId('export-params-selected').check();
    await dialog().getByTestId('export-submit').click();
    await dialog().getByText('Please select at least one parameter.').waitFor();
    expect(await dialog().getByText('Select file type to export.').count()).toBe(0);

    await pickParams(['Voltage L1 (V)']);
    // A date field's calendar opens below it while it has the focus; it closes when the field is left.
    await dialog().getByTestId('export-from').fill('');
    await dialog().getByTestId('export-from').blur();
    await dialog().getByTestId('export-submit').click();
    await dialog().getByText('Date range is required.').waitFor();
    expect(await dialog().getByText('Please select at least one parameter.').count()).toBe(0);

    const longAgo = localDateString(Date.now() - 2 * 366 * DAY_MS, tz);
    await dialog().getByTestId('export-from').fill(longAgo);
    await dialog().getByTestId('export-from').blur();
    await dialog().getByTestId('export-submit').click();
    await dialog().getByText('Data range is too long.').waitFor();
    page.off('request', onRequest);
    // The client caught every mistake itself: nothing was sent.
    expect(posted).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('exports a CSV, follows its progress and downloads rows equal to the data log', async () => {
    // Progress arrives over the live hub (polling is only the fallback): keep the export frames it sends.
    const hubFrames: { id: number; status: string }[] = [];
    page.on('websocket', (ws) => {
      if (!ws.url().includes('/hubs/dashboardHub')) return;
      ws.on('framereceived', (f) => {
        try {
          const m = JSON.parse(String(f.payload)) as { type?: string; id?: number; status?: string };
          if (m.type === 'export') hubFrames.push({ id: Number(m.id), status: String(m.status) });
        } catch {
          // not JSON: not an export event
        }
      });
    });
    await openDialog();
    await dialog().getByTestId('export-format-csv').check();
    await dialog().getByTestId('export-params-selected').check();
    await pickParams(PARAM_LABELS);
    await dialog().getByTestId('export-from').fill(yesterday);
    await dialog().getByTestId('export-to').fill(yesterday);
    await dialog().getByTestId('export-filename').fill('kw-e2e-readings');

    const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api/exports'));
    const downloaded = page.waitForEvent('download', { timeout: 120_000 });
    await dialog().getByTestId('export-submit').click();
    const body = (await posted).postDataJSON() as ExportBody;
    expect(body).toMatchObject({
      deviceIds: [device.id],
      params: PARAMS,
      format: 'csv',
      fileName: 'kw-e2e-readings',
    });
    expect(Date.parse(body.to) - Date.parse(body.from)).toBeGreaterThanOrEqual(23 * 3_600_000);
    expect(Date.parse(body.to) - Date.parse(body.from)).toBeLessThanOrEqual(25 * 3_600_000);

    await page.getByText('Exporting data scheduled. We will inform you when file be ready.').waitFor();
    const progress = dialog().getByTestId('export-progress');
    await progress.waitFor();
    await dialog().locator('[data-testid=export-progress][data-status=done]').waitFor({ timeout: 120_000 });
    expect(
      await dialog().getByRole('progressbar', { name: 'Export progress' }).getAttribute('aria-valuenow'),
    ).toBe('100');

    const file = await downloaded;
    expect(file.suggestedFilename()).toBe('kw-e2e-readings.csv');
    const jobId = (await get<{ id: number }[]>('/api/exports'))[0]!.id;
    expect(hubFrames.filter((f) => f.id === jobId).map((f) => f.status)).toContain('done');
    const rows = parseCsv(readFileSync((await file.path())!, 'utf8')).filter((r) => r.length > 1);
    // Names with units first, then the codes for scripts.
    const [names, codes, ...data] = rows;
    expect(names).toEqual(['Time (UTC)', `Local time (${tz})`, 'Device', ...PARAM_LABELS]);
    expect(codes?.slice(0, 3)).toEqual(['timestamp_utc', `timestamp_local (${tz})`, 'device']);
    expect(codes?.slice(3)).toEqual(PARAMS);

    // The data log for the same range and parameters, every page.
    const log: { ts: string; values: Record<string, number | null> }[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 100; i++) {
      const q = new URLSearchParams({
        from: body.from,
        to: body.to,
        params: PARAMS.join(','),
        limit: '10000',
      });
      if (cursor) q.set('cursor', cursor);
      const pageOf = await get<{ items: typeof log; nextCursor: string | null }>(
        `/api/devices/${device.id}/readings?${q}`,
      );
      log.push(...pageOf.items);
      cursor = pageOf.nextCursor;
      if (!cursor) break;
    }
    expect(log.length, 'readings yesterday').toBeGreaterThan(100);
    expect(data.length).toBe(log.length);
    for (const [i, row] of data.entries()) {
      const want = log[i]!;
      expect(row[0], `row ${i} time`).toBe(want.ts);
      const got = row.slice(3).map((c) => (c === '' ? null : Number(c)));
      expect(got, `row ${i} (${want.ts}) values`).toEqual(PARAMS.map((p) => want.values[p] ?? null));
    }
    // The export is listed as done with the file's name.
    const job = await get<{ status: string; fileName: string; size: number }>(`/api/exports/${jobId}`);
    expect(job).toMatchObject({ status: 'done', fileName: 'kw-e2e-readings.csv' });
  });

  it('exports a PDF report that opens', async () => {
    await openDialog();
    await dialog().getByTestId('export-format-pdf').check();
    await dialog().getByTestId('export-params-all').check();
    await dialog().getByTestId('export-from').fill(yesterday);
    await dialog().getByTestId('export-to').fill(yesterday);
    await dialog().getByTestId('export-to').blur();
    const downloaded = page.waitForEvent('download', { timeout: 120_000 });
    await dialog().getByTestId('export-submit').click();
    await page
      .getByText('Exporting data scheduled. We will inform you when file be ready.')
      .first()
      .waitFor();
    const file = await downloaded;
    expect(file.suggestedFilename()).toMatch(/\.pdf$/);
    const path = (await file.path())!;
    const bytes = readFileSync(path);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    if (hasPdfInfo()) {
      const info = execFileSync('pdfinfo', [path], { encoding: 'utf8' });
      expect(Number(/Pages:\s+(\d+)/.exec(info)?.[1] ?? 0)).toBeGreaterThanOrEqual(1);
      const text = execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' });
      expect(text).toContain(`Kilowatch report: ${device.name}`);
    } else {
      // Without poppler the trailer still proves a complete file.
      expect(bytes.subarray(-1024).toString('latin1')).toContain('%%EOF');
    }
  });

  it('offers parameters by name with unit, in Polish too, and reports the chosen ones in the PDF', {
    timeout: 180_000,
  }, async () => {
    await openDialog();
    await dialog().getByTestId('export-params-selected').check();
    await dialog().getByTestId('export-params').click();
    // Names with units, no code among the options.
    await page.getByRole('option', { name: 'Power L1 (W)', exact: true }).waitFor();
    const offered = await page.getByRole('option').allTextContents();
    expect(offered).toContain('Voltage L1 (V)');
    expect(offered.filter((o) => /^[a-z]+\d?(_[a-z]+)?$/.test(o))).toEqual([]);
    await page.getByRole('option', { name: 'Power L1 (W)', exact: true }).click();
    await pickParams(['Voltage L1 (V)']);
    await dialog().getByTestId('export-format-pdf').check();
    await dialog().getByTestId('export-from').fill(yesterday);
    await dialog().getByTestId('export-to').fill(yesterday);
    await dialog().getByTestId('export-to').blur();
    const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api/exports'));
    const downloaded = page.waitForEvent('download', { timeout: 120_000 });
    await dialog().getByTestId('export-submit').click();
    expect(((await posted).postDataJSON() as ExportBody).params).toEqual(['pave1', 'vave1']);
    const path = (await (await downloaded).path())!;
    const text = execFileSync('pdftotext', ['-layout', path, '-'], { encoding: 'utf8' });
    expect(text).toContain('Power L1 (W) per day');
    expect(text).toContain('Voltage L1 (V) per day');
    expect(text).toMatch(new RegExp(`${yesterday}\\s+-?\\d+\\.\\d{3}\\s+-?\\d+\\.\\d{3}\\s+-?\\d+\\.\\d{3}`));
    // Only the chosen phase's voltage is drawn.
    expect(text).toMatch(/Mean voltage per phase \(V\)\s+L1\s*$/m);
    expect(text).not.toContain('Voltage L2');

    // Polish: the picker names the same parameters in Polish, with units.
    // (stored, as the language select leaves it)
    await page.evaluate(() => localStorage.setItem('kw.language', 'pl'));
    await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, device.phases ?? 3)}`);
    await page.getByTestId('device-title').waitFor();
    await page.getByTestId('export-button').click();
    const pl = page.getByRole('dialog', { name: 'Eksport danych' });
    await pl.waitFor();
    await pl.getByTestId('export-params-selected').check();
    await pl.getByTestId('export-params').click();
    await page.getByRole('option', { name: 'Napięcie L1 (V)', exact: true }).waitFor();
    expect(await page.getByRole('option', { name: 'Moc L1 (W)', exact: true }).count()).toBe(1);
    await page.evaluate(() => localStorage.setItem('kw.language', 'en'));
    await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, device.phases ?? 3)}`);
    await page.waitForFunction(() => document.documentElement.lang === 'en');
  });

  it("shows every phase's voltage quality as the API computes it", async () => {
    await page.goto(`${api.url}${detailsPathFor(device.id, device.typeCode, device.phases ?? 3)}`);
    await page.getByTestId('device-title').waitFor();
    // Yesterday: a closed period, so the page's answer and ours cannot differ by a new reading.
    const yesterdayFrom = new Date(
      startOfLocalDay(startOfLocalDay(Date.now(), tz) - DAY_MS / 2, tz),
    ).toISOString();
    const answer = page.waitForResponse(
      (r) =>
        r.url().includes(`/api/devices/${device.id}/voltage-quality`) &&
        r.ok() &&
        new URL(r.url()).searchParams.get('from') === yesterdayFrom,
    );
    // The day is picked on the calendar, by its label ("25 November 2026"); the month before when
    // yesterday was in it.
    const [y, m, d] = yesterday.split('-').map(Number) as [number, number, number];
    const label = `${d} ${new Date(Date.UTC(y, m - 1, 15)).toLocaleString('en', { month: 'long', timeZone: 'UTC' })} ${y}`;
    await page.getByTestId('range-day').click();
    const calendar = page.locator('[role=dialog]');
    if (d > Number(localDateString(Date.now(), tz).slice(8)))
      await calendar.locator('[data-direction=previous]').first().click();
    await calendar.locator(`button[aria-label="${label}"]:not([data-outside])`).click();
    const url = new URL((await answer).url());
    const quality = await get<{
      limits: { warning: number; critical: number };
      phases: {
        phase: number;
        samples: number;
        withinWarning: number | null;
        withinCritical: number | null;
        withinEn50160: number | null;
      }[];
    }>(`${url.pathname}${url.search}`);
    expect(quality.phases.map((p) => p.phase)).toEqual([1, 2, 3]);
    expect(quality.phases.every((p) => p.samples > 0)).toBe(true);
    const panel = page.getByTestId('voltage-quality');
    await panel.getByTestId('quality-phase').nth(2).waitFor();
    const shown = await panel.getByTestId('quality-phase').evaluateAll((rows) =>
      rows.map((r) => ({
        phase: Number(r.getAttribute('data-phase')),
        warning: r.querySelector('[data-testid=quality-warning]')?.textContent,
        critical: r.querySelector('[data-testid=quality-critical]')?.textContent,
        en: r.querySelector('[data-testid=quality-en50160]')?.textContent,
      })),
    );
    expect(shown).toEqual(
      quality.phases.map((p) => ({
        phase: p.phase,
        warning: formatShare(p.withinWarning),
        critical: formatShare(p.withinCritical),
        en: formatShare(p.withinEn50160),
      })),
    );
    // The limits are shown next to the shares.
    await panel.getByText(`Warning band (±${quality.limits.warning} %)`).waitFor();
    await panel.getByText(`Critical band (±${quality.limits.critical} %)`).waitFor();
    await panel.getByText('207 V – 253 V').first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it('fits a 375 px phone in dark theme, errors readable', { timeout: 120_000 }, async () => {
    await page.evaluate(() => localStorage.setItem('kw.themeMode', 'dark'));
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      await openDialog();
      await dialog().getByTestId('export-params-selected').check();
      await dialog().getByTestId('export-submit').click();
      await dialog().getByText('Select file type to export.').waitFor();
      await dialog().getByText('Please select at least one parameter.').waitFor();
      // The voltage-quality table behind the dialog is loaded, so the checks below cover it too.
      await page.getByTestId('quality-phase').first().waitFor({ state: 'attached' });
      expect(
        await page.evaluate(() => document.documentElement.getAttribute('data-mantine-color-scheme')),
      ).toBe('dark');
      const box = await dialog().boundingBox();
      expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
      expect(await seriousViolations(page)).toEqual([]);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.evaluate(() => localStorage.removeItem('kw.themeMode'));
    }
  });

  it('logged no console errors', () => {
    expect(unforgivenErrors(consoleErrors, shed)).toEqual([]);
  });
});
