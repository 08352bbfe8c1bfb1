/**
 * `pnpm bench render [--points N] [--rounds N]`: in headless Chromium, the time to draw ~100k points
 * (3 series, a year at 15 minutes) in the Kilowatch chart component after the data arrives, against
 * bare uPlot on the same data in the same run; the time from navigation to an interactive dashboard
 * (real API, embedded deployment, demo account); and the initial JS size, gzip.
 */
import { rmSync } from 'node:fs';
import {
  apiUnavailable,
  buildWeb,
  chromiumUnavailable,
  initialJsGzipBytes,
  launchChromium,
  serveStatic,
  startApi,
} from '@kilowatch/web/testing';

function arg(args: string[], name: string, fallback: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

const log = (s: string) => process.stderr.write(`render: ${s}\n`);

export default async function render(args: string[]): Promise<object> {
  const points = arg(args, 'points', 35_040);
  const rounds = arg(args, 'rounds', 31);
  // `--no-dashboard`: only the chart comparison and the bundle size (the dashboard part waits for the demo year).
  const dashboard = !args.includes('--no-dashboard');
  const noChromium = chromiumUnavailable();
  if (noChromium) throw new Error(noChromium);

  log('building the client with the benchmark page');
  const dist = await buildWeb({ bench: true });
  const size = await initialJsGzipBytes(dist);
  // `gc` lets the page collect before each timed draw, so neither side pays for the other's garbage.
  const browser = await launchChromium(['--js-flags=--expose-gc']);
  const result: Record<string, unknown> = {
    initialJsGzipKB: Math.round((size.gzipBytes / 1024) * 10) / 10,
    initialJsKB: Math.round((size.bytes / 1024) * 10) / 10,
    initialJsFiles: size.files.length,
    initialJsBudgetKB: 300,
  };
  try {
    const server = await serveStatic(dist);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${server.url}/bench.html`);
      await page.waitForSelector('body[data-ready="1"]', { state: 'attached' });
      log(`drawing ${points * 3} points, ${rounds} rounds each`);
      const chart = (await page.evaluate(
        ([p, r]) =>
          (
            globalThis as unknown as {
              kwRenderBench: (p: number, r: number) => Promise<Record<string, unknown>>;
            }
          ).kwRenderBench(p, r),
        [points, rounds] as const,
      )) as { points: number; oursMs: number; bareMs: number; ratio: number };
      result.chart = {
        points: chart.points,
        oursMs: Math.round(chart.oursMs * 10) / 10,
        bareUplotMs: Math.round(chart.bareMs * 10) / 10,
        ratio: Math.round(chart.ratio * 100) / 100,
        ratioBudget: 1.3,
        drawBudgetMs: 100,
      };
      await page.close();
    } finally {
      await server.close();
    }

    const noApi = dashboard ? apiUnavailable() : 'not requested (--no-dashboard)';
    if (noApi) {
      result.dashboard = { skipped: noApi };
    } else {
      log('starting the API (embedded, demo)');
      const api = await startApi({ webDist: dist });
      try {
        const auth = (await (
          await fetch(`${api.url}/api/account/demo`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: '{}',
          })
        ).json()) as { token: string; refreshToken?: string; user: unknown };
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        await context.addInitScript((a) => {
          // Runs in the page: sign in by storing the session as the client does.
          const store = (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } })
            .localStorage;
          store.setItem('kw.token', a.token);
          if (a.refreshToken) store.setItem('kw.refreshToken', a.refreshToken);
          store.setItem('kw.user', JSON.stringify(a.user));
        }, auth);
        const sample = async (n: number) => {
          const samples: number[] = [];
          for (let i = 0; i < n; i++) {
            const page = await context.newPage();
            await page.goto(`${api.url}/dashboard`, { waitUntil: 'commit' });
            await page.waitForSelector('[data-testid=device-row]');
            samples.push(Math.round(await page.evaluate(() => performance.now())));
            await page.close();
          }
          samples.sort((a, b) => a - b);
          return { interactiveMs: samples[Math.floor(samples.length / 2)] ?? Number.NaN, samplesMs: samples };
        };
        // First while the embedded API still writes the demo year (a fresh install's first minutes), then in
        // the steady state a user meets afterwards.
        const duringHistory = await sample(5);
        log('waiting for the demo history to finish');
        const historyDeadline = Date.now() + 15 * 60_000;
        let state = '';
        while (Date.now() < historyDeadline) {
          const health = (await (await fetch(`${api.url}/api/health`)).json().catch(() => ({}))) as {
            demoHistory?: { state?: string };
          };
          state = health.demoHistory?.state ?? '';
          if (state === 'done' || state === 'failed') break;
          await new Promise((r) => setTimeout(r, 2000));
        }
        const steady = await sample(7);
        result.dashboard = {
          interactiveMs: steady.interactiveMs,
          samplesMs: steady.samplesMs,
          demoHistory: state,
          duringHistoryWrite: duringHistory,
          budgetMs: 1500,
        };
        await context.close();
      } finally {
        await api.stop();
      }
    }
  } finally {
    await browser.close();
    rmSync(dist, { recursive: true, force: true });
  }
  return result;
}
