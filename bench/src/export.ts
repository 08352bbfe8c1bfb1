/**
 * `pnpm bench export [--days 365] [--engine duckdb|influx] [--memory-limit 384MB] [--bulk-memory-limit 192MB|off]
 * [--history FILE …]`: a year-long CSV of one device's 1-minute readings through the export queue
 * (POST /api/exports, then waiting for the job), with wall time and the process's peak memory. With
 * `--history` (_history.ts) the device's readings and the exported range are a history file's (its first
 * device, or `--source-device`).
 */
import { stat } from 'node:fs/promises';
import { historyArg, planHistory } from './_history.ts';
import { bulkMemoryLimitArg, memoryLimitArg } from './memory.ts';
import { arg, benchApp } from './query.ts';

export default async function exportBench(args: string[]): Promise<object> {
  const i = args.indexOf('--engine');
  const engine = i >= 0 ? args[i + 1] : 'duckdb';
  if (engine !== 'duckdb' && engine !== 'influx') throw new Error('--engine is duckdb or influx');
  const file = historyArg(args);
  const history = file ? await planHistory(file) : undefined;
  const bulkMemoryLimit = bulkMemoryLimitArg(args);
  const b = await benchApp(1, arg(args, 'days', 365), Date.parse('2025-01-01T00:00:00Z'), {
    engine,
    memoryLimit: memoryLimitArg(args),
    ...(bulkMemoryLimit ? { bulkMemoryLimit } : {}),
    ...(history ? { history } : {}),
  });
  const { from, to } = b;
  const days = +((to - from) / 86_400_000).toFixed(3);
  const rows = b.history ? b.history.readings : Math.round(days * 1440);
  try {
    if (global.gc) global.gc();
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    let peakHeap = process.memoryUsage().heapUsed;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      peakHeap = Math.max(peakHeap, m.heapUsed);
    }, 20);
    const t = performance.now();
    const res = await b.app.inject({
      method: 'POST',
      url: '/api/exports',
      headers: { authorization: `Bearer ${b.token}` },
      payload: {
        deviceIds: [b.deviceIds[0]],
        params: 'all',
        format: 'csv',
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
      },
    });
    if (res.statusCode !== 202) throw new Error(`export: ${res.statusCode} ${res.body}`);
    const { id } = res.json() as { id: number };
    await b.app.exports.idle();
    const seconds = (performance.now() - t) / 1000;
    clearInterval(sampler);
    const job = (
      await b.app.inject({
        method: 'GET',
        url: `/api/exports/${id}`,
        headers: { authorization: `Bearer ${b.token}` },
      })
    ).json() as { status: string; size: number; error?: string };
    if (job.status !== 'done') throw new Error(`export ${job.status}: ${job.error}`);
    const file = await b.app.exports.file(1, id);
    const size = file ? (await stat(file.path)).size : job.size;
    return {
      bench: 'export',
      engine,
      days,
      ...(b.history ? { history: b.history } : {}),
      rows,
      seconds: +seconds.toFixed(2),
      rowsPerSecond: Math.round(rows / seconds),
      fileMB: +(size / 1e6).toFixed(1),
      peakRssMB: +(peakRss / 1e6).toFixed(1),
      rssGrowthMB: +((peakRss - baseRss) / 1e6).toFixed(1),
      peakHeapMB: +(peakHeap / 1e6).toFixed(1),
      bulkMemoryLimit: bulkMemoryLimit ?? 'off',
    };
  } finally {
    await b.close();
  }
}
