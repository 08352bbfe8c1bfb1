/**
 * `pnpm bench import [--days 365] [--engine duckdb|influx] [--memory-limit 384MB] [--bulk-memory-limit 192MB|off]`: a year of one three-phase meter's 1-minute
 * readings exported as Kilowatch CSV (POST /api/exports), then imported into a new device
 * (POST /api/devices/:id/imports?format=kilowatch) while a second account reads its own device page's
 * series every 50 ms over HTTP from a worker thread. Reports the import's wall time and rows per second,
 * the process's RSS growth during it, the second account's p50/p95/p99 and any non-200 it got, and
 * whether every day's energy of the imported device equals the source's. `--keep-file PATH` keeps a copy
 * of the exported file (a history for `--history` of the query, rollup and export benches).
 */
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { copyFile, stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { strArg } from './_args.ts';
import { bulkMemoryLimitArg, memoryLimitArg } from './memory.ts';
import { arg, benchApp, percentile } from './query.ts';

const DAY_MS = 86_400_000;

/** Polls one URL until told to stop, in a thread of its own (it does not share the server's event loop). */
const POLLER = `
const { parentPort } = require('node:worker_threads');
let stop = false;
parentPort.on('message', async (m) => {
  if (m === 'stop') { stop = true; return; }
  const { url, token, everyMs } = m;
  const samples = [];
  const statuses = {};
  while (!stop) {
    const t = performance.now();
    try {
      const res = await fetch(url, { headers: { authorization: 'Bearer ' + token } });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    } catch (e) {
      statuses.error = (statuses.error ?? 0) + 1;
    }
    const ms = performance.now() - t;
    samples.push(ms);
    if (ms < everyMs) await new Promise((r) => setTimeout(r, everyMs - ms));
  }
  parentPort.postMessage({ samples, statuses });
});
`;

export default async function importBench(args: string[]): Promise<object> {
  const days = arg(args, 'days', 365);
  const i = args.indexOf('--engine');
  const engine = i >= 0 ? args[i + 1] : 'duckdb';
  if (engine !== 'duckdb' && engine !== 'influx') throw new Error('--engine is duckdb or influx');
  const from = Date.parse('2025-01-01T00:00:00Z');
  const to = from + days * DAY_MS;
  const bulkMemoryLimit = bulkMemoryLimitArg(args);
  const b = await benchApp(1, days, from, {
    engine,
    memoryLimit: memoryLimitArg(args),
    ...(bulkMemoryLimit ? { bulkMemoryLimit } : {}),
  });
  const auth = { authorization: `Bearer ${b.token}` };
  try {
    // The file: the source meter's year as Kilowatch's own CSV export.
    const t0 = performance.now();
    const exp = await b.app.inject({
      method: 'POST',
      url: '/api/exports',
      headers: auth,
      payload: {
        deviceIds: [b.deviceIds[0]],
        params: 'all',
        format: 'csv',
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
      },
    });
    if (exp.statusCode !== 202) throw new Error(`export: ${exp.statusCode} ${exp.body}`);
    const exportId = (exp.json() as { id: number }).id;
    await b.app.exports.idle();
    const file = await b.app.exports.file(1, exportId);
    if (!file) throw new Error('the export wrote no file');
    const fileBytes = (await stat(file.path)).size;
    const keep = strArg(args, 'keep-file');
    if (keep) await copyFile(file.path, keep);
    process.stderr.write(
      `exported ${(fileBytes / 1e6).toFixed(1)} MB (${((performance.now() - t0) / 1000).toFixed(1)} s)\n`,
    );

    const target = await b.app.inject({
      method: 'POST',
      url: '/api/devices',
      headers: auth,
      payload: { mac: 'b0:c0:de:ff:00:01', name: 'Imported meter', typeCode: 1 },
    });
    if (target.statusCode !== 201) throw new Error(`claim: ${target.statusCode} ${target.body}`);
    const targetId = (target.json() as { id: number }).id;

    // The second account: a device of its own and its day chart, asked over HTTP throughout.
    const reg = await b.app.inject({
      method: 'POST',
      url: '/api/register',
      payload: { email: 'second@example.com', password: 'bench password 2', fullName: 'Second' },
    });
    const second = (reg.json() as { token: string }).token;
    const own = await b.app.inject({
      method: 'POST',
      url: '/api/devices',
      headers: { authorization: `Bearer ${second}` },
      payload: { mac: 'b0:c0:de:ff:00:02', name: 'Second meter', typeCode: 1 },
    });
    const ownId = (own.json() as { id: number }).id;
    const address = await b.app.listen({ port: 0, host: '127.0.0.1' });
    const day = new Date(to - DAY_MS).toISOString();
    const url = `${address}/api/devices/${ownId}/series?from=${day}&to=${new Date(to).toISOString()}&params=vave,pave`;

    const poller = new Worker(POLLER, { eval: true });
    const polled = once(poller, 'message');
    poller.postMessage({ url, token: second, everyMs: 50 });

    if (global.gc) global.gc();
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 20);
    const t1 = performance.now();
    const res = await b.app.inject({
      method: 'POST',
      url: `/api/devices/${targetId}/imports?format=kilowatch`,
      headers: { ...auth, 'content-type': 'text/csv' },
      payload: createReadStream(file.path),
    });
    if (res.statusCode !== 202) throw new Error(`import: ${res.statusCode} ${res.body}`);
    const importId = (res.json() as { id: number }).id;
    let job: { state: string; rowsRead: number; accepted: number; rejected: number; failure?: string };
    for (;;) {
      job = (await b.app.inject({ method: 'GET', url: `/api/imports/${importId}`, headers: auth })).json();
      if (job.state !== 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const seconds = (performance.now() - t1) / 1000;
    clearInterval(sampler);
    poller.postMessage('stop');
    const [{ samples, statuses }] = (await polled) as [
      { samples: number[]; statuses: Record<string, number> },
    ];
    await poller.terminate();
    if (job.state !== 'done') throw new Error(`import ${job.state}: ${job.failure ?? ''}`);

    // The round trip: every day's energy of the imported device is the source's.
    const energy = async (id: number) =>
      (
        (
          await b.app.inject({
            method: 'GET',
            url: `/api/devices/${id}/energy?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&interval=1d`,
            headers: auth,
          })
        ).json() as { import: (number | null)[] }
      ).import;
    const [a, c] = [await energy(b.deviceIds[0]!), await energy(targetId)];
    const differentDays = a.filter((x, k) => Math.abs((x ?? 0) - (c[k] ?? 0)) > 1e-6).length;

    return {
      bench: 'import',
      engine,
      bulkMemoryLimit: bulkMemoryLimit ?? 'off',
      days,
      fileMB: +(fileBytes / 1e6).toFixed(1),
      rowsRead: job.rowsRead,
      accepted: job.accepted,
      rejected: job.rejected,
      seconds: +seconds.toFixed(2),
      rowsPerSecond: Math.round(job.rowsRead / seconds),
      rssGrowthMB: +((peakRss - baseRss) / 1e6).toFixed(1),
      secondUser: {
        requests: samples.length,
        p50: +percentile(samples, 50).toFixed(1),
        p95: +percentile(samples, 95).toFixed(1),
        p99: +percentile(samples, 99).toFixed(1),
        statuses,
      },
      days_compared: a.length,
      differentDays,
    };
  } finally {
    await b.close();
  }
}
