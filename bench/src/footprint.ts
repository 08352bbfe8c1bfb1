/**
 * `pnpm bench footprint [--days 365] [--idle-s 60] [--meters 20] [--timeline]`
 *
 * What the embedded deployment asks of a small home server, measured on the compiled server as
 * `pnpm start` runs it (demo on, a fresh data directory, plain `node`):
 *
 * - start to the first answer (the port answers "starting" while the server loads) and start-to-ready:
 *   spawn until the API itself answers `/api/health`, and the resident memory (RSS) then;
 * - the demo history: seconds until it is written and the peak RSS meanwhile;
 * - steady RSS after it (20 s after the history is written, with `--meters` idle claimed meters more);
 * - idle CPU: the process's CPU time over `--idle-s` seconds with the demo simulator running, as % of
 *   one core, and the RSS after that idle time (DuckDB's cache is trimmed 15 s after the last read);
 * - the burst: a one-year chart (1 h), a yearly heatmap and a CSV export of a year of the three-phase
 *   meter asked at once; the peak RSS during it (the kernel's peak counter is reset first) and its time,
 *   and the RSS 30 s after it.
 *
 * `--timeline` logs the RSS and the server's own count of its memory every half second of the history
 * write and the burst.
 *
 * Progress goes to stderr; the last stdout line is the JSON result. Linux only (reads /proc).
 */
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { sleep } from '@kilowatch/testkit';
import {
  buildServer,
  cpuSecondsOf,
  demoToken,
  getJson,
  health,
  memoryMetrics,
  memoryOf,
  residentOf,
  round1,
  log as say,
  startServer,
} from './_server.ts';

const log = (msg: string) => say('footprint', msg);

/** Megabytes of the files under `dir`. */
function sizeMb(dir: string): number {
  let bytes = 0;
  const visit = (p: string) => {
    const st = statSync(p);
    if (st.isDirectory()) for (const n of readdirSync(p)) visit(join(p, n));
    else bytes += st.size;
  };
  visit(dir);
  return Math.round(bytes / 2 ** 20);
}

type Counted = Awaited<ReturnType<typeof memoryMetrics>>;

/**
 * Samples the RSS every 50 ms and the server's own count (/metrics) every 500 ms until stopped; answers
 * the highest RSS seen, when (seconds after the start), and the count taken closest after it, to tell
 * what a peak is made of.
 */
function peakSampler(
  pid: number,
  base: string,
  timeline: boolean,
): { stop(): { peakMb: number; atS: number; counted: Counted | null } } {
  const t0 = performance.now();
  let peakMb = 0;
  let atS = 0;
  let counted: Counted | null = null;
  let stale = true;
  let asking = false;
  const rss = setInterval(() => {
    const now = memoryOf(pid).rssMb;
    if (now > peakMb) {
      peakMb = now;
      atS = round1((performance.now() - t0) / 1000);
      stale = true;
    }
  }, 50);
  const count = setInterval(() => {
    if ((!stale && !timeline) || asking) return;
    asking = true;
    stale = false;
    memoryMetrics(base)
      .then((c) => {
        counted = c;
        if (timeline) {
          const duck = Object.entries(c.store).filter(([tag]) => !tag.endsWith('(spilled)'));
          log(
            `${round1((performance.now() - t0) / 1000)} s: RSS ${memoryOf(pid).rssMb} MB, heap ${c.heapTotalMb}, external ${c.externalMb}, DuckDB ${duck.reduce((a, [, v]) => a + v, 0)} (${duck.map(([k, v]) => `${k} ${v}`).join(', ')})`,
          );
        }
      })
      .catch(() => {})
      .finally(() => {
        asking = false;
      });
  }, 500);
  return {
    stop() {
      clearInterval(rss);
      clearInterval(count);
      return { peakMb, atS, counted };
    },
  };
}

function arg(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : dflt;
}

export default async function (args: string[]): Promise<object> {
  const days = arg(args, 'days', 365);
  const idleS = arg(args, 'idle-s', 60);
  const meters = arg(args, 'meters', 20);
  const timeline = args.includes('--timeline');
  const load0 = loadavg()[0]!;
  buildServer();
  const server = await startServer({ KW_DEMO_HISTORY_DAYS: String(days) });
  const { base, pid } = server;
  try {
    const atStart = memoryOf(pid);
    log(
      `answers after ${Math.round(server.firstAnswerMs)} ms, ready after ${Math.round(server.readyMs)} ms, RSS ${atStart.rssMb} MB`,
    );
    const t0 = performance.now() - server.readyMs;
    const historySampler = peakSampler(pid, base, timeline);
    let state = 'writing';
    while (state !== 'done' && state !== 'failed') {
      await sleep(1000);
      state = (await health(base)).demoHistory?.state ?? 'none';
      if (state === 'none') break;
      if (performance.now() - t0 > 30 * 60_000) throw new Error('the demo history took over 30 minutes');
    }
    const historyS = (performance.now() - t0) / 1000;
    const duringHistory = memoryOf(pid);
    const historyPeak = historySampler.stop();
    const disk = {
      telemetry_mb: sizeMb(join(server.dataDir, 'telemetry.duckdb')),
      metadata_mb: sizeMb(join(server.dataDir, 'meta')),
      data_dir_mb: sizeMb(server.dataDir),
    };
    log(
      `history ${state} after ${round1(historyS)} s; peak RSS ${duringHistory.peakMb} MB; counted near the sampled peak (${historyPeak.peakMb} MB at ${historyPeak.atS} s): ${JSON.stringify(historyPeak.counted)}`,
    );

    // Idle claimed meters (never publishing) on an account of their own.
    const email = `footprint-${Date.now()}@example.com`;
    const reg = await fetch(`${base}/api/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'Footprint-bench-1', fullName: 'Footprint Bench' }),
    });
    if (!reg.ok) throw new Error(`register: ${reg.status} ${await reg.text()}`);
    const owner = ((await reg.json()) as { token: string }).token;
    for (let i = 0; i < meters; i++) {
      const res = await fetch(`${base}/api/devices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` },
        body: JSON.stringify({
          mac: `02:00:00:00:${String(Math.floor(i / 100)).padStart(2, '0')}:${String(i % 100).padStart(2, '0')}`,
          name: `Idle meter ${i + 1}`,
          typeCode: 1,
        }),
      });
      if (!res.ok) throw new Error(`claim: ${res.status} ${await res.text()}`);
    }
    await sleep(20_000);
    const steady = memoryOf(pid);
    const steadyResident = residentOf(pid);
    const steadyCount = await memoryMetrics(base);
    log(
      `steady RSS ${steady.rssMb} MB (anonymous ${steadyResident.anonMb}, lazily freed ${steadyResident.lazyFreeMb}); idle CPU over ${idleS} s…`,
    );
    const c0 = cpuSecondsOf(pid);
    const i0 = performance.now();
    await sleep(idleS * 1000);
    const idlePct = ((cpuSecondsOf(pid) - c0) / ((performance.now() - i0) / 1000)) * 100;
    const afterIdle = memoryOf(pid);
    const idleResident = residentOf(pid);
    const idleCount = await memoryMetrics(base);
    log(
      `idle CPU ${round1(idlePct)} % of one core; RSS ${afterIdle.rssMb} MB (anonymous ${idleResident.anonMb}, lazily freed ${idleResident.lazyFreeMb})`,
    );

    // The burst: a year's chart and heatmap and a CSV export (the demo's 31 days) of the three-phase meter at once.
    const token = await demoToken(base);
    const devices = await getJson<{ id: number; typeCode: number }[]>(base, '/api/devices', token);
    const id = (devices.find((d) => d.typeCode === 1) ?? devices[0])!.id;
    const to = Date.now();
    const from = to - days * 86_400_000;
    const iso = (t: number) => new Date(t).toISOString();
    try {
      // Peak RSS from here on (5: reset the kernel's peak counter).
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      log('cannot reset the peak RSS counter: the burst peak includes the history write');
    }
    const burstSampler = peakSampler(pid, base, timeline);
    const b0 = performance.now();
    const timed = async (p: Promise<unknown>) => {
      const s = performance.now();
      await p;
      return Math.round(performance.now() - s);
    };
    const exportCsv = async () => {
      const res = await fetch(`${base}/api/exports`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        // A demo workspace exports at most 31 days at once (api/src/exports/queue.ts): its last 31.
        body: JSON.stringify({
          deviceIds: [id],
          params: 'all',
          from: iso(Math.max(from, to - 31 * 86_400_000)),
          to: iso(to),
          format: 'csv',
        }),
      });
      if (res.status !== 202) throw new Error(`export: ${res.status} ${await res.text()}`);
      const job = (await res.json()) as { id: number | string };
      for (;;) {
        const st = await getJson<{ status: string; size?: number; error?: string }>(
          base,
          `/api/exports/${job.id}`,
          token,
        );
        if (st.status === 'failed') throw new Error(`export failed: ${st.error}`);
        if (st.status === 'done') break;
        await sleep(200);
      }
      const file = await fetch(`${base}/api/exports/${job.id}/download`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
      });
      return (await file.arrayBuffer()).byteLength;
    };
    let csvBytes = 0;
    const burst = Promise.all([
      timed(
        getJson(
          base,
          `/api/devices/${id}/series?params=vave1,vave2,vave3&from=${iso(from)}&to=${iso(to)}&interval=1h`,
          token,
        ),
      ),
      timed(
        getJson(
          base,
          `/api/devices/${id}/heatmap?param=eai&kind=yearly&from=${iso(from)}&to=${iso(to)}`,
          token,
        ),
      ),
      timed(
        exportCsv().then((n) => {
          csvBytes = n;
        }),
      ),
    ]);
    // The sampler stops however the burst ends (a failed export would otherwise leave it reading the
    // stopped server's /proc entry).
    let burstPeak: ReturnType<ReturnType<typeof peakSampler>['stop']> = { peakMb: 0, atS: 0, counted: null };
    const [chartMs, heatmapMs, exportMs] = await burst.finally(() => {
      burstPeak = burstSampler.stop();
    });
    const burstMs = performance.now() - b0;
    const afterBurst = memoryOf(pid);
    log(
      `burst ${Math.round(burstMs)} ms; peak RSS ${afterBurst.peakMb} MB (sampled ${burstPeak.peakMb} MB); counted near it: ${JSON.stringify(burstPeak.counted)}`,
    );
    await sleep(30_000);
    const settled = memoryOf(pid);
    const settledResident = residentOf(pid);
    const settledCount = await memoryMetrics(base);
    return {
      days,
      idle_meters: meters,
      start_to_first_answer_ms: Math.round(server.firstAnswerMs),
      start_to_ready_ms: Math.round(server.readyMs),
      rss_at_start_mb: atStart.rssMb,
      history: state,
      history_s: round1(historyS),
      peak_rss_during_history_mb: duringHistory.peakMb,
      history_peak_at_s: historyPeak.atS,
      counted_at_history_peak: historyPeak.counted,
      disk,
      rss_after_history_mb: steady.rssMb,
      lazy_free_after_history_mb: steadyResident.lazyFreeMb,
      counted_after_history: steadyCount,
      idle_cpu_pct: round1(idlePct),
      idle_s: idleS,
      rss_after_idle_mb: afterIdle.rssMb,
      lazy_free_after_idle_mb: idleResident.lazyFreeMb,
      counted_after_idle: idleCount,
      burst_ms: Math.round(burstMs),
      burst: { chart_ms: chartMs, heatmap_ms: heatmapMs, export_ms: exportMs, csv_bytes: csvBytes },
      peak_rss_during_burst_mb: Math.max(afterBurst.peakMb, burstPeak.peakMb),
      counted_at_burst_peak: burstPeak.counted,
      rss_after_burst_mb: settled.rssMb,
      lazy_free_after_burst_mb: settledResident.lazyFreeMb,
      counted_after_burst: settledCount,
      cpu_s_total: round1(cpuSecondsOf(pid)),
      machine: { cpus: cpus().length, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version },
      load_average: [round1(load0), round1(loadavg()[0]!)],
    };
  } catch (e) {
    process.stderr.write(`${server.output()}\n`);
    throw e;
  } finally {
    await server.stop();
  }
}
