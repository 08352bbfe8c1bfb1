/**
 * `pnpm bench abuse [--days 30] [--seconds 15] [--only <regexp>]` runs the abuse scenarios against one
 * embedded server (`_abuse-scenarios.ts`). `pnpm bench abuse --routes [--devices 4] [--days 30] [--only
 * <regexp>] [--baseline 10] [--trace]`: the worst request of each route family — the widest range
 * the API accepts, the finest interval, every device, and the out-of-bounds requests that used to stall
 * it (energy by day from year 1 to 9999, voltage quality over the same range) — one after another over
 * HTTP on loopback, each with its time and the longest the server's event loop was blocked meanwhile
 * (perf_hooks `monitorEventLoopDelay`). A second client in a worker thread asks for `/api/health` and a
 * device page all along; its p50/p99 show what everyone else saw while the worst requests ran. `--only`
 * runs the requests whose names match (to profile one with `node --cpu-prof`). The second client first runs
 * alone for `--baseline` seconds: its p50/p99 then (`secondClientAlone`) are what the machine's own load
 * gives, to compare with `secondClient` on a shared machine. `--trace` explains the slowest answers of the
 * second client (`_abuse-trace.ts`).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import abuseScenarios from './_abuse-scenarios.ts';
import { explainSlowest, PROBE_HEADER, type ProbeSample, startTrace } from './_abuse-trace.ts';
import { arg, benchApp, percentile } from './query.ts';

const DAY_MS = 86_400_000;

/** CPU time this thread has run so far (ns), from Linux's schedstat; null where there is none. */
function threadCpuNs(): number | null {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

/**
 * The longest turn of the event loop counted in the main thread's own CPU time: a timer every 2 ms
 * reads the thread's CPU clock, and the most it advanced between two ticks is the longest stretch of
 * work nothing else could interrupt. Unlike wall time it does not grow when other processes take the
 * cores (a busy machine stretches a 40 ms turn to 200 ms of wall time), so it reads the same on a busy
 * machine as on a quiet one, give or take cache and frequency effects.
 */
function cpuTurns() {
  let max = 0;
  let last = threadCpuNs();
  const timer = setInterval(() => {
    const now = threadCpuNs();
    if (now !== null && last !== null) max = Math.max(max, now - last);
    last = now;
  }, 2);
  return {
    reset() {
      max = 0;
      last = threadCpuNs();
    },
    maxMs: () => (last === null ? null : +(max / 1e6).toFixed(1)),
    stop: () => clearInterval(timer),
  };
}

/**
 * The other client: loops over its URLs until told to stop, and hands back every answer's start (ms since
 * the epoch, to sub-ms) and time. Each request carries its sequence number for `--trace`.
 */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
const { urls, token, header } = workerData;
let stop = false;
parentPort.on('message', () => { stop = true; });
(async () => {
  try { parentPort.postMessage({ tid: require('node:fs').readlinkSync('/proc/thread-self').split('/').pop() }); } catch {}
  const samples = [];
  const failures = [];
  let id = 0;
  while (!stop) {
    for (const url of urls) {
      const t = performance.now();
      id++;
      try {
        const res = await fetch(url, { headers: { authorization: 'Bearer ' + token, [header]: String(id) } });
        await res.arrayBuffer();
        if (res.status !== 200) failures.push(url + ' ' + res.status);
      } catch (e) { failures.push(String(e)); }
      samples.push({ id, url, startedAt: performance.timeOrigin + t, ms: performance.now() - t });
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  parentPort.postMessage({ samples, failures: failures.slice(0, 5), failed: failures.length });
})();
`;

export default async function abuse(args: string[]): Promise<object> {
  if (!args.includes('--routes')) return abuseScenarios(args);
  const devices = arg(args, 'devices', 4);
  const days = arg(args, 'days', 30);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new RegExp(args[onlyAt + 1] ?? '') : null;
  const baselineS = arg(args, 'baseline', 10);
  const tracing = args.includes('--trace');
  const now = Date.now();
  const from = Math.floor(now / 900_000) * 900_000 - days * DAY_MS;
  const b = await benchApp(devices, days, from, { stepMin: 1 });
  try {
    const auth = { authorization: `Bearer ${b.token}` };
    const id = b.deviceIds[0]!;
    const all = b.deviceIds.join(',');
    const locations = (await b.app.inject({ url: '/api/locations', headers: auth })).json() as {
      id: number;
    }[];
    const tariff = await b.app.inject({
      method: 'POST',
      url: `/api/locations/${locations[0]!.id}/tariffs`,
      headers: auth,
      payload: { name: 'G12', group: 'G12', zone1Price: 1.1, zone2Price: 0.6, validFrom: '2020-01-01' },
    });
    const tariffId = (tariff.json() as { id: number }).id;
    const cmp = await b.app.inject({
      method: 'POST',
      url: '/api/comparisons',
      headers: auth,
      payload: {
        name: 'Every meter',
        members: b.deviceIds.flatMap((d) =>
          ['vave1', 'vave2', 'vave3'].map((param) => ({ deviceId: d, param })),
        ),
        grouped: true,
      },
    });
    const cmpId = (cmp.json() as { id: number }).id;
    const apiKey = (
      (
        await b.app.inject({
          method: 'POST',
          url: '/api/account/api-keys',
          headers: auth,
          payload: { name: 'Grafana' },
        })
      ).json() as { key: string }
    ).key;
    const iso = (t: number) => new Date(t).toISOString();
    const end = iso(now);
    const back = (d: number) => `from=${iso(now - d * DAY_MS)}&to=${end}`;
    const window = 'from=1970-01-01T00:00:00Z&to=2100-01-01T00:00:00Z';
    const forever = 'from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59Z';
    const requests: Record<string, string> = {
      // The requests that stalled the API before ranges were checked first: all 400 now.
      energyDayYear1To9999: `/api/devices/${id}/energy?${forever}&interval=1d`,
      energyMonthYear1To9999: `/api/devices/${id}/energy?${forever}&interval=1mo`,
      voltageQualityYear1To9999: `/api/devices/${id}/voltage-quality?${forever}`,
      idPast2e31:
        '/api/devices/2147483648/energy?interval=1d&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z',
      unreadableUrl: '/%',
      // The widest each route family accepts.
      energyDay1970To2100: `/api/devices/${id}/energy?${window}&interval=1d`,
      energyMonth1970To2100: `/api/devices/${id}/energy?${window}&interval=1mo`,
      energy15mMax: `/api/devices/${id}/energy?${back(1040)}&interval=15m`,
      energySummary: `/api/devices/${id}/energy/summary`,
      voltageQualityMax: `/api/devices/${id}/voltage-quality?${back(694)}`,
      seriesHourly11y: `/api/devices/${id}/series?params=vave1,vave2,vave3&interval=1h&${back(4160)}`,
      seriesRawData: `/api/devices/${id}/series?params=vave1,vave2,vave3,iave1,iave2,iave3&interval=raw&${back(Math.min(days, 60))}`,
      heatmapYearly11y: `/api/devices/${id}/heatmap?param=eai&kind=yearly&${back(4160)}`,
      readingsPage: `/api/devices/${id}/readings?${back(days)}&limit=1000`,
      consumptionEveryDevice1970To2100: `/api/analytics/consumption?deviceIds=${all}&${window}&interval=1d`,
      tariffCompare11y: `/api/tariffs/compare?deviceId=${id}&${back(4160)}`,
      tariffStats11y: `/api/tariffs/${tariffId}/stats?deviceId=${id}&${back(4160)}`,
      comparisonData: `/api/comparisons/${cmpId}/data?${back(days)}`,
    };
    /** Requests with a body: Grafana's /query (with an API key) and an export, timed until its file is written. */
    const posts: Record<string, { url: string; body: object; key?: string; untilDone?: boolean }> = {
      grafanaEnergyDay1970To2100: {
        url: '/grafana/query',
        key: apiKey,
        body: {
          range: { from: '1970-01-01T00:00:00Z', to: '2099-12-31T00:00:00Z' },
          intervalMs: 86_400_000,
          maxDataPoints: 100_000,
          targets: b.deviceIds.map((d, i) => ({
            target: 'energy.import',
            refId: String.fromCharCode(65 + i),
            payload: { device: String(d), interval: '1d' },
          })),
        },
      },
      grafanaVoltageEveryDevice: {
        url: '/grafana/query',
        key: apiKey,
        body: {
          range: { from: iso(now - days * DAY_MS), to: end },
          intervalMs: 60_000,
          maxDataPoints: 100_000,
          targets: b.deviceIds.map((d, i) => ({
            target: 'vave1',
            refId: String.fromCharCode(65 + i),
            payload: { device: String(d) },
          })),
        },
      },
      exportCsvEveryDevice: {
        url: '/api/exports',
        untilDone: true,
        body: {
          deviceIds: b.deviceIds,
          params: 'all',
          format: 'csv',
          from: iso(now - days * DAY_MS),
          to: end,
        },
      },
    };
    const origin = await b.app.listen({ port: 0, host: '127.0.0.1' });
    // The bench's own first fetch loads undici (~80 ms on this thread): done before anything is measured.
    await (await fetch(`${origin}/api/health`)).arrayBuffer();
    const probeUrls = [`${origin}/api/health`, `${origin}/api/devices/${id}`];
    const trace = tracing
      ? startTrace(b.app.server, {
          metadata: { obj: b.app.sql, method: 'query' },
          storeHealth: { obj: b.store, method: 'health' },
          storeLatest: { obj: b.store, method: 'latest' },
        })
      : null;
    const probe = new Worker(PROBE, {
      eval: true,
      workerData: { urls: probeUrls, token: b.token, header: PROBE_HEADER },
    });
    let probeTid = '';
    probe.once('message', (m: { tid?: string }) => {
      probeTid = m.tid ?? '';
    });
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const turns = cpuTurns();
    const results: Record<
      string,
      {
        status: number;
        ms: number;
        loopMaxMs: number;
        cpuTurnMs: number | null;
        bytes: number;
        threadsCpuMs?: Record<string, number>;
      }
    > = {};
    const epochNow = () => performance.timeOrigin + performance.now();
    /** When each request ran (ms since the epoch), to split the second client's answers by what ran beside. */
    const running: { name: string; from: number; to: number }[] = [];
    let abuseFrom = 0;
    try {
      // The second client alone first: its baseline on this machine at this moment.
      const baselineFrom = epochNow();
      await new Promise((r) => setTimeout(r, baselineS * 1_000));
      running.push({ name: 'baseline', from: baselineFrom, to: epochNow() });
      trace?.threadsSince();
      abuseFrom = epochNow();
      for (const [name, url] of Object.entries(requests)) {
        if (only && !only.test(name)) continue;
        loop.reset();
        turns.reset();
        const t = performance.now();
        const res = await fetch(origin + url, { headers: auth });
        const body = await res.arrayBuffer();
        const ms = performance.now() - t;
        results[name] = {
          status: res.status,
          ms: +ms.toFixed(1),
          loopMaxMs: +(loop.max / 1e6).toFixed(1),
          cpuTurnMs: turns.maxMs(),
          bytes: body.byteLength,
          ...(trace ? { threadsCpuMs: trace.threadsSince(probeTid) } : {}),
        };
        running.push({ name, from: performance.timeOrigin + t, to: epochNow() });
        process.stderr.write(`${name}: ${JSON.stringify(results[name])}\n`);
      }
      for (const [name, r] of Object.entries(posts)) {
        if (only && !only.test(name)) continue;
        loop.reset();
        turns.reset();
        const t = performance.now();
        const headers = {
          'content-type': 'application/json',
          authorization: r.key ? `Bearer ${r.key}` : auth.authorization,
        };
        const res = await fetch(origin + r.url, { method: 'POST', headers, body: JSON.stringify(r.body) });
        const body = await res.arrayBuffer();
        let status = res.status;
        if (r.untilDone && res.status === 202) {
          // The export runs in the background: timed until its file is written.
          const { id } = JSON.parse(Buffer.from(body).toString()) as { id: number };
          for (;;) {
            await new Promise((done) => setTimeout(done, 100));
            const job = (await (await fetch(`${origin}/api/exports/${id}`, { headers: auth })).json()) as {
              status: string;
              size: number | null;
            };
            if (job.status === 'done' || job.status === 'failed') {
              status = job.status === 'done' ? 200 : 500;
              break;
            }
          }
        }
        const ms = performance.now() - t;
        results[name] = {
          status,
          ms: +ms.toFixed(1),
          loopMaxMs: +(loop.max / 1e6).toFixed(1),
          cpuTurnMs: turns.maxMs(),
          bytes: body.byteLength,
          ...(trace ? { threadsCpuMs: trace.threadsSince(probeTid) } : {}),
        };
        running.push({ name, from: performance.timeOrigin + t, to: epochNow() });
        process.stderr.write(`${name}: ${JSON.stringify(results[name])}\n`);
      }
    } finally {
      loop.disable();
      turns.stop();
    }
    const reply = new Promise<{ samples: ProbeSample[]; failures: string[]; failed: number }>((r) =>
      probe.on('message', (m: { samples?: ProbeSample[] }) => {
        if (m.samples) r(m as { samples: ProbeSample[]; failures: string[]; failed: number });
      }),
    );
    probe.postMessage('stop');
    const probed = await reply;
    await probe.terminate();
    trace?.stop();
    /** The server main thread's CPU while an answer was pending: its wall time on an otherwise idle machine, roughly. */
    const mainCpu = (p: ProbeSample) => trace?.mainCpuBetween(p.startedAt, p.startedAt + p.ms) ?? 0;
    const stats = (samples: number[]) => ({
      n: samples.length,
      p50Ms: +percentile(samples, 50).toFixed(1),
      p99Ms: +percentile(samples, 99).toFixed(1),
      maxMs: +Math.max(...samples).toFixed(1),
    });
    const second: Record<string, object> = {};
    const baseline: Record<string, object> = {};
    for (const url of probeUrls) {
      const name = url.endsWith('/api/health') ? 'health' : 'devicePage';
      const of = probed.samples.filter((p) => p.url === url);
      const during = of.filter((p) => p.startedAt >= abuseFrom);
      const alone = of.filter((p) => p.startedAt < abuseFrom);
      second[name] = {
        ...stats(during.map((p) => p.ms)),
        ...(trace ? { mainCpu: stats(during.map(mainCpu)) } : {}),
      };
      baseline[name] = {
        ...stats(alone.map((p) => p.ms)),
        ...(trace ? { mainCpu: stats(alone.map(mainCpu)) } : {}),
      };
    }
    const worstLoopMs = Math.max(...Object.values(results).map((r) => r.loopMaxMs));
    const worstCpuTurnMs = Math.max(...Object.values(results).map((r) => r.cpuTurnMs ?? 0));
    return {
      bench: 'abuse',
      devices,
      days,
      results,
      worstLoopMs,
      worstCpuTurnMs,
      secondClient: second,
      secondClientAlone: baseline,
      secondClientFailures: probed.failed,
      ...(trace
        ? {
            secondClientDuring: Object.fromEntries(
              running.map((r) => {
                const of = probed.samples.filter((p) => p.startedAt >= r.from && p.startedAt < r.to);
                if (of.length === 0) return [r.name, { n: 0 }];
                return [
                  r.name,
                  {
                    n: of.length,
                    maxMs: +Math.max(...of.map((p) => p.ms)).toFixed(1),
                    maxMainCpuMs: +Math.max(...of.map(mainCpu)).toFixed(1),
                  },
                ];
              }),
            ),
            slowestSecondClient: explainSlowest(
              probed.samples.filter((p) => p.startedAt >= abuseFrom),
              trace.probes,
              trace.stalls,
              15,
              running,
              trace.mainCpuBetween,
            ),
          }
        : {}),
    };
  } finally {
    await b.close();
  }
}
