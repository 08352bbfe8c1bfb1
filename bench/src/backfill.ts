/**
 * `pnpm bench backfill [--days 365] [--batch 50000] [--memory-limit 1GB|duckdb]`
 *
 * The demo history through `backfillHistory` (6 simulated meters, one reading a minute) into a DuckDB
 * file in a temp dir, then one `refreshRollups` for the whole range: generation + write time and rate,
 * refresh time, total, and the process's peak resident memory (DuckDB's cache is most of it;
 * `--memory-limit`: see memory.ts). Progress goes to stderr; the last stdout
 * line is the JSON result.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { backfillHistory, DEMO_DEVICES } from '@kilowatch/ingest';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { memoryLimitArg } from './memory.ts';

const log = (msg: string) => process.stderr.write(`[backfill bench] ${msg}\n`);

function arg(args: string[], name: string, dflt: number): number {
  const i = args.indexOf(`--${name}`);
  const v = i >= 0 ? Number(args[i + 1]) : Number.NaN;
  return Number.isFinite(v) ? v : dflt;
}

export default async function (args: string[]): Promise<object> {
  const days = arg(args, 'days', 365);
  const batchSize = arg(args, 'batch', 50_000);
  const memoryLimit = memoryLimitArg(args);
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-backfill-'));
  const to = Math.floor(Date.now() / 60_000) * 60_000;
  const from = to - days * 86_400_000;
  const load0 = loadavg()[0]!;
  try {
    const store = await createDuckDbStore({ path: join(dir, 'telemetry.duckdb'), memoryLimit });
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
