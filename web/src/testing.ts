/// <reference lib="dom" />
/**
 * Browser-test and benchmark helpers (node only): headless Debian Chromium through playwright-core,
 * a production build of this client, and the real API started as a child process in its embedded
 * deployment (the test kit's `startKilowatch`). Nothing here is imported by the client itself.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startKilowatch } from '@kilowatch/testkit';
import axe from 'axe-core';
import { type Browser, chromium, type Page } from 'playwright-core';

export const WEB_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_DIR = resolve(WEB_DIR, '..');
export const CHROMIUM_PATH = process.env.KW_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Why browser tests cannot run here, or null when they can. Under CI a missing Chromium is an error. */
export function chromiumUnavailable(): string | null {
  if (existsSync(CHROMIUM_PATH)) return null;
  const why = `Chromium not found at ${CHROMIUM_PATH} (apt-get install -y chromium)`;
  if (process.env.CI === 'true') throw new Error(why);
  return why;
}

export const API_ENTRY = join(REPO_DIR, 'api/src/main.ts');

export function apiUnavailable(): string | null {
  return existsSync(API_ENTRY) ? null : `the API entry ${API_ENTRY} does not exist yet`;
}

/** Debian's Chromium, headless; `extraArgs` adds flags (the render bench exposes `gc`). */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

/**
 * A production build of the client into `outDir` (a temp dir by default). With `bench`, the
 * chart render benchmark page (bench.html) is built alongside the app.
 */
export async function buildWeb(opts: { outDir?: string; bench?: boolean } = {}): Promise<string> {
  const outDir = opts.outDir ?? mkdtempSync(join(tmpdir(), 'kw-web-dist-'));
  const { build } = await import('vite');
  const input = opts.bench
    ? { main: join(WEB_DIR, 'index.html'), bench: join(WEB_DIR, 'bench.html') }
    : join(WEB_DIR, 'index.html');
  await build({
    root: WEB_DIR,
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, rolldownOptions: { input } },
  });
  return outDir;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

/** Serves a built client on a free loopback port (index.html for unknown paths, as the API does). */
export async function serveStatic(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const { createServer: createHttp } = await import('node:http');
  const { readFile } = await import('node:fs/promises');
  const { extname, normalize } = await import('node:path');
  const server = createHttp(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(
      /^(\.\.[/\\])+/,
      '',
    );
    const file = join(dir, path);
    try {
      const body = await readFile(file.startsWith(dir) && extname(file) ? file : join(dir, 'index.html'));
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'text/html; charset=utf-8' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  const port = await freePort();
  await new Promise<void>((ok) => server.listen(port, '127.0.0.1', ok));
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((ok) => server.close(() => ok())) };
}

/** Gzip size of the JavaScript a first visit loads: the entry script and its modulepreloads. */
export async function initialJsGzipBytes(
  dist: string,
): Promise<{ files: string[]; bytes: number; gzipBytes: number }> {
  const { readFile } = await import('node:fs/promises');
  const { gzipSync } = await import('node:zlib');
  const html = await readFile(join(dist, 'index.html'), 'utf8');
  const files = [
    ...html.matchAll(/<script[^>]+src="([^"]+\.js)"/g),
    ...html.matchAll(/<link[^>]+rel="modulepreload"[^>]+href="([^"]+\.js)"/g),
  ].map((m) => m[1] as string);
  let bytes = 0;
  let gzipBytes = 0;
  for (const f of new Set(files)) {
    const body = await readFile(join(dist, f));
    bytes += body.length;
    gzipBytes += gzipSync(body, { level: 9 }).length;
  }
  return { files: [...new Set(files)], bytes, gzipBytes };
}

export interface RunningApi {
  url: string;
  port: number;
  mqttPort: number;
  dataDir: string;
  /** Everything the API printed, for failure messages. */
  output: () => string;
  /** The API's last answers to /api/ requests, one line each (`POST /api/demo → 200 12 ms`), oldest first. */
  requests: () => readonly string[];
  stop: () => Promise<void>;
}

/**
 * Starts `tsx api/src/main.ts` (embedded deployment with the demo) and waits for /api/health, and with
 * `waitForDemoHistory` also for the demo's whole history (written in the background, so on a busy
 * machine a test would otherwise read totals of a history still being written).
 */
export async function startApi(opts: {
  webDist: string;
  timeoutMs?: number;
  /** Extra environment for the API process (e.g. `KW_DEMO_HISTORY_DAYS`). */
  env?: Record<string, string>;
  /** Wait until /api/health reports the demo history `done` (default: until the API answers). */
  waitForDemoHistory?: boolean;
}): Promise<RunningApi> {
  // Request lines are paired with their answers by request id; assets are left out, so a failure shows the
  // calls that decide what a screen does (a 401 before a sign-in page, a 503 before a timeout).
  const answered: string[] = [];
  const asked = new Map<string, string>();
  const note = (line: string) => {
    if (!line.startsWith('{')) return;
    try {
      const e = JSON.parse(line) as {
        reqId?: string;
        req?: { method?: string; url?: string };
        res?: { statusCode?: number };
        responseTime?: number;
      };
      if (!e.reqId) return;
      if (e.req?.url?.startsWith('/api/')) asked.set(e.reqId, `${e.req.method} ${e.req.url.slice(0, 120)}`);
      const what = asked.get(e.reqId);
      if (e.res && what) {
        asked.delete(e.reqId);
        answered.push(`${what} → ${e.res.statusCode} ${Math.round(e.responseTime ?? 0)} ms`);
        if (answered.length > 200) answered.shift();
      }
    } catch {
      // not a log line of the API's logger
    }
  };
  const api = await startKilowatch({
    entry: API_ENTRY,
    name: 'the API',
    env: { KW_WEB_DIST: opts.webDist, KW_DEMO: 'on', NODE_ENV: 'production', ...opts.env },
    onLine: note,
    readyTimeoutMs: opts.timeoutMs ?? 180_000,
    pollMs: 250,
    ready: async (p) => {
      let history: string | undefined;
      try {
        // Healthy, and serving the client (the demo's history backfill can keep it busy, answering 503).
        const res = await fetch(`${p.url}/api/health`);
        if (res.ok && (await fetch(`${p.url}/`)).ok) {
          history = ((await res.json()) as { demoHistory?: { state?: string } }).demoHistory?.state ?? 'none';
          if (!opts.waitForDemoHistory || history === 'done') return true;
        }
      } catch {
        // not listening yet
      }
      if (history === 'failed') throw new Error('the demo history could not be written');
      return false;
    },
  });
  return {
    url: api.url,
    port: api.port,
    mqttPort: api.mqttPort,
    dataDir: api.dataDir,
    output: api.output,
    requests: () => answered,
    stop: api.stop,
  };
}

/** Serious or critical axe findings on the whole page, in whichever colour scheme it shows. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol: the API's Content-Security-Policy forbids inline scripts.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
  // A popover fading out is half transparent: axe would measure its text against the page behind it.
  // Two frames let a just-started transition begin, then every finite animation is waited out.
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
  await page.waitForFunction(() =>
    document
      .getAnimations()
      .every((a) => a.playState !== 'running' || a.effect?.getTiming().iterations === Infinity),
  );
  const result = await page.evaluate(() =>
    (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }),
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Console errors less the first `shed` "status of 503" lines: answers the API shed under load. */
export function unforgivenErrors(errors: readonly string[], shed: number): string[] {
  let left = shed;
  return errors.filter((e) => !(/status of 503/.test(e) && left-- > 0));
}
