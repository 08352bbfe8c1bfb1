/**
 * `pnpm bench backfill [--days 365] [--every-ms 1000]` — the demo's first minutes as a household meets
 * them: the compiled server started with plain `node` (demo on, a fresh data directory) and, while it
 * writes the demo history, a visitor every `--every-ms` signing in to the demo (POST /api/account/demo)
 * and opening a device page (the device, its latest values, its energy summary and a day of voltages,
 * asked at once as the page does). Reports the time from start until `/api/health` says the history is
 * written, p50/p95/max of the sign-in and of the page meanwhile, the server's CPU seconds and peak RSS.
 * Beside the visitors, one reader of a demo workspace polls a device's latest values and a day of its
 * voltages every 200 ms from the start until `--after-s` (60) seconds after the history is written (the
 * checkpoint after its large refresh falls in that minute): its answers' count, p50/p99/max, and how
 * many were 503 or another failure (`reader`).
 *
 * `pnpm bench backfill --loader [--days 365] [--batch 50000] [--memory-limit 1GB|duckdb] [--bulk-memory-limit 192MB|off]`
 *
 * The loader alone: the demo history through `backfillHistory` (6 simulated meters, one reading a
 * minute) into a DuckDB file in a temp dir, then one `refreshRollups` for the whole range: generation +
 * write time and rate, refresh time, total, and the process's peak resident memory (DuckDB's cache is
 * most of it; `--memory-limit`: see memory.ts). Progress goes to stderr; the last stdout line is the
 * JSON result.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { backfillHistory, DEMO_DEVICES } from '@kilowatch/ingest';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { arg } from './_args.ts';
import {
  buildServer,
  cpuSecondsOf,
  demoToken,
  getJson,
  health,
  memoryOf,
  percentile,
  round1,
  startServer,
} from './_server.ts';
import { bulkMemoryLimitArg, memoryLimitArg } from './memory.ts';

const log = (msg: string) => process.stderr.write(`[backfill bench] ${msg}\n`);

export default async function (args: string[]): Promise<object> {
  return args.includes('--loader') ? loader(args) : firstMinutes(args);
}

async function firstMinutes(args: string[]): Promise<object> {
  const days = arg(args, 'days', 365);
  const everyMs = arg(args, 'every-ms', 1000);
  const afterMs = arg(args, 'after-s', 60) * 1000;
  const load0 = loadavg()[0]!;
  buildServer();
  const server = await startServer({ KW_DEMO_HISTORY_DAYS: String(days) });
  const { base, pid } = server;
  log(`server answered after ${Math.round(server.readyMs)} ms; ${days} days of demo history`);
  const signIn: number[] = [];
  const page: number[] = [];
  const errors: string[] = [];
  let doneMs = Number.NaN;
  let state = 'none';
  let peakMb = 0;
  const reading = { stop: false, doneAt: Number.NaN };
  const reader = pollReader(base, reading);
  try {
    const t0 = performance.now() - server.readyMs;
    for (;;) {
      const tick = performance.now();
      state = (await health(base)).demoHistory?.state ?? 'none';
      if (state === 'done' || state === 'failed') {
        doneMs = performance.now() - t0;
        break;
      }
      try {
        const s0 = performance.now();
        const token = await demoToken(base);
        signIn.push(performance.now() - s0);
        const devices = await getJson<{ id: number }[]>(base, '/api/devices', token);
        const id = devices[0]?.id;
        if (id !== undefined) {
          const to = Date.now();
          const p0 = performance.now();
          await Promise.all([
            getJson(base, `/api/devices/${id}`, token),
            getJson(base, `/api/devices/${id}/latest`, token),
            getJson(base, `/api/devices/${id}/energy/summary`, token),
            getJson(
              base,
              `/api/devices/${id}/series?params=vave1,vave2,vave3&from=${new Date(to - 86_400_000).toISOString()}&to=${new Date(to).toISOString()}`,
              token,
            ),
          ]);
          page.push(performance.now() - p0);
        }
      } catch (e) {
        errors.push((e as Error).message);
      }
      peakMb = Math.max(peakMb, memoryOf(pid).peakMb);
      if (signIn.length % 10 === 0)
        log(
          `${Math.round((performance.now() - t0) / 1000)} s: history ${state}, rss ${memoryOf(pid).rssMb} MB`,
        );
      const wait = everyMs - (performance.now() - tick);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (performance.now() - t0 > 20 * 60_000) throw new Error('the demo history took over 20 minutes');
    }
    reading.doneAt = performance.now();
    log(`history ${state}; the reader polls ${afterMs / 1000} s more`);
    while (performance.now() - reading.doneAt < afterMs) await new Promise((r) => setTimeout(r, 1000));
    reading.stop = true;
    const polled = await reader;
    const mem = memoryOf(pid);
    const ms = (xs: number[]) => ({
      n: xs.length,
      p50_ms: Math.round(percentile(xs, 0.5)),
      p95_ms: Math.round(percentile(xs, 0.95)),
      max_ms: Math.round(Math.max(...xs)),
    });
    log(`history ${state} ${round1(doneMs / 1000)} s after start`);
    return {
      mode: 'server',
      days,
      ready_ms: Math.round(server.readyMs),
      history: state,
      history_done_s: round1(doneMs / 1000),
      sign_in: ms(signIn),
      device_page: ms(page),
      errors: errors.slice(0, 5),
      error_count: errors.length,
      reader: {
        n: polled.ms.length,
        p50_ms: Math.round(percentile(polled.ms, 0.5)),
        p99_ms: Math.round(percentile(polled.ms, 0.99)),
        max_ms: Math.round(Math.max(...polled.ms)),
        status_503: polled.unavailable,
        other_failures: polled.failed,
        first_failures: polled.messages,
        polled_s_after_done: afterMs / 1000,
      },
      cpu_s: round1(cpuSecondsOf(pid)),
      rss_mb: mem.rssMb,
      peak_rss_mb: Math.max(peakMb, mem.peakMb),
      load_average: [round1(load0), round1(loadavg()[0]!)],
    };
  } finally {
    reading.stop = true;
    await reader.catch(() => undefined);
    await server.stop();
  }
}

/**
 * One demo visitor's device page kept open: every 200 ms its latest values and a day of its voltages,
 * asked together, timed as one answer, until `until.stop`. A sign-in or device list that fails (the
 * server still starting the demo) is tried again on the next tick.
 */
async function pollReader(
  base: string,
  until: { stop: boolean },
): Promise<{ ms: number[]; unavailable: number; failed: number; messages: string[] }> {
  const ms: number[] = [];
  const messages: string[] = [];
  let unavailable = 0;
  let failed = 0;
  let token: string | null = null;
  let id: number | undefined;
  const ask = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    return res.status;
  };
  while (!until.stop) {
    const tick = performance.now();
    try {
      if (token === null) token = await demoToken(base);
      if (id === undefined) id = (await getJson<{ id: number }[]>(base, '/api/devices', token))[0]?.id;
      if (id !== undefined) {
        const to = Date.now();
        const p0 = performance.now();
        const statuses = await Promise.all([
          ask(`/api/devices/${id}/latest`),
          ask(
            `/api/devices/${id}/series?params=vave1,vave2,vave3&from=${new Date(to - 86_400_000).toISOString()}&to=${new Date(to).toISOString()}`,
          ),
        ]);
        ms.push(performance.now() - p0);
        if (statuses.some((s) => s === 503)) unavailable++;
        else if (statuses.some((s) => s >= 400)) {
          failed++;
          if (messages.length < 5) messages.push(`status ${statuses.join(', ')}`);
        }
      }
    } catch (e) {
      // A sign-in or device list refused is only tried again; a read that fails counts.
      if (id !== undefined) {
        failed++;
        if (messages.length < 5) messages.push((e as Error).message);
      }
    }
    const wait = 200 - (performance.now() - tick);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return { ms, unavailable, failed, messages };
}

async function loader(args: string[]): Promise<object> {
  const days = arg(args, 'days', 365);
  const batchSize = arg(args, 'batch', 50_000);
  const memoryLimit = memoryLimitArg(args);
  const bulkMemoryLimit = bulkMemoryLimitArg(args);
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-backfill-'));
  const to = Math.floor(Date.now() / 60_000) * 60_000;
  const from = to - days * 86_400_000;
  const load0 = loadavg()[0]!;
  try {
    const store = await createDuckDbStore({
      path: join(dir, 'telemetry.duckdb'),
      memoryLimit,
      ...(bulkMemoryLimit ? { bulkMemoryLimit } : {}),
    });
    try {
      log(`${DEMO_DEVICES.length} meters × ${days} days, batches of ${batchSize}`);
      const cpu = () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1e6;
      };
      const c0 = cpu();
      const t0 = performance.now();
      let shown = 0;
      const { readings } = await backfillHistory(store, DEMO_DEVICES, {
        from,
        to,
        batchSize,
        onProgress: (done, total) => {
          if (done - shown >= total / 10) {
            shown = done;
            log(
              `${Math.round((done / total) * 100)} % (${Math.round(done / ((performance.now() - t0) / 1000))} readings/s)`,
            );
          }
        },
      });
      const writeS = (performance.now() - t0) / 1000;
      const c1 = cpu();
      log(`written ${readings} readings in ${writeS.toFixed(1)} s; refreshing rollups`);
      const t1 = performance.now();
      const { buckets } = await store.refreshRollups(to);
      const refreshS = (performance.now() - t1) / 1000;
      const c2 = cpu();
      const totalS = (performance.now() - t0) / 1000;
      log(`refresh ${refreshS.toFixed(1)} s (${buckets} buckets); total ${totalS.toFixed(1)} s`);
      return {
        devices: DEMO_DEVICES.length,
        days,
        batch: batchSize,
        readings,
        write_s: Math.round(writeS * 10) / 10,
        readings_per_s: Math.round(readings / writeS),
        refresh_s: Math.round(refreshS * 10) / 10,
        rollup_buckets: buckets,
        total_s: Math.round(totalS * 10) / 10,
        // CPU seconds of the process (every thread): less sensitive than wall time to a busy machine.
        write_cpu_s: Math.round((c1 - c0) * 10) / 10,
        refresh_cpu_s: Math.round((c2 - c1) * 10) / 10,
        memory_limit: await store.memoryLimit(),
        bulk_memory_limit: bulkMemoryLimit ?? 'off',
        // The whole process's peak (resourceUsage gives KiB).
        peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
        load_average: [Math.round(load0 * 10) / 10, Math.round(loadavg()[0]! * 10) / 10],
      };
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
