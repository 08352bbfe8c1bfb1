/**
 * `pnpm bench abuse` (the default): each abuse scenario of bench/README.md §abuse against one embedded
 * server (the compiled `api/dist/main.js`, demo on, `--days` of demo history written first), one after
 * another, each a named, bounded step that stops itself (`--only <regexp>` selects them). All along, a
 * well-behaved second account (its own registered account, one meter with a day of readings) asks from a
 * worker thread for `/api/health` every 50 ms and, every 500 ms, its device page's requests at once (the
 * day chart, the energy summary, the latest values); each scenario reports that account's health p99,
 * page p95 and 5xx answers over its own time, against the bar: health p99 < 100 ms, page p95 < 500 ms,
 * no 5xx.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { sleep } from '@kilowatch/testkit';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import {
  buildServer,
  cpuSecondsOf,
  demoToken,
  health,
  log,
  memoryOf,
  percentile,
  round1,
  startServer,
} from './_server.ts';

const DAY_MS = 86_400_000;
const BAR = { healthP99Ms: 100, pageP95Ms: 500 };
const say = (msg: string) => log('abuse', msg);

interface Sample {
  kind: 'health' | 'page';
  url: string;
  at: number;
  ms: number;
  status: number;
}

/** The second account's client: health every 50 ms, the device page's three requests at once every 500 ms. */
const VICTIM = `
const { parentPort, workerData } = require('node:worker_threads');
const { base, token, pageUrls } = workerData;
let stop = false;
const samples = [];
parentPort.on('message', (m) => {
  if (m === 'stop') stop = true;
  if (m === 'drain') { parentPort.postMessage({ samples: samples.splice(0) }); }
});
const headers = { authorization: 'Bearer ' + token };
async function one(kind, url) {
  const at = performance.timeOrigin + performance.now();
  const t = performance.now();
  let status = 0;
  try {
    const res = await fetch(base + url, { headers });
    await res.arrayBuffer();
    status = res.status;
  } catch {}
  samples.push({ kind, url, at, ms: performance.now() - t, status });
}
(async () => {
  while (!stop) {
    await one('health', '/api/health');
    await new Promise((r) => setTimeout(r, 50));
  }
})();
(async () => {
  while (!stop) {
    await Promise.all(pageUrls.map((u) => one('page', u)));
    await new Promise((r) => setTimeout(r, 500));
  }
  parentPort.postMessage({ stopped: true });
})();
`;

type Json = Record<string, unknown>;

async function call(
  base: string,
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
): Promise<{ status: number; json: Json; bytes: number }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const buf = Buffer.from(await res.arrayBuffer());
  let json: Json = {};
  try {
    json = JSON.parse(buf.toString()) as Json;
  } catch {}
  return { status: res.status, json, bytes: buf.byteLength };
}

const count = (statuses: number[]) => {
  const out: Record<string, number> = {};
  for (const s of statuses) out[s] = (out[s] ?? 0) + 1;
  return out;
};

interface Account {
  token: string;
  locationId: number;
}

async function register(base: string, email: string): Promise<Account> {
  const reg = await call(base, 'POST', '/api/register', null, {
    email,
    password: 'abuse bench password 1',
    fullName: 'Abuse Bench',
  });
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.json)}`);
  const token = reg.json.token as string;
  const loc = await call(base, 'POST', '/api/locations', token, { name: 'Home', timezone: 'Europe/Warsaw' });
  return { token, locationId: loc.json.id as number };
}

interface Claimed {
  id: number;
  key: string;
  username: string;
  password: string;
}

async function claim(
  base: string,
  a: Account,
  n: number,
  prefix: string,
): Promise<{ status: number; d?: Claimed }> {
  const key = `${prefix}${n.toString(16).padStart(12 - prefix.length, '0')}`;
  const res = await call(base, 'POST', '/api/devices', a.token, {
    mac: key.match(/../g)!.join(':'),
    name: `Meter ${n}`,
    typeCode: 1,
    locationId: a.locationId,
    stockTopics: false,
  });
  if (res.status !== 201) return { status: res.status };
  const m = res.json.mqtt as { username: string; password: string };
  return { status: 201, d: { id: res.json.id as number, key, username: m.username, password: m.password } };
}

function connectMeter(
  port: number,
  username: string,
  password: string,
): Promise<{ client: mqtt.MqttClient | null; error: string | null }> {
  return new Promise((resolve) => {
    const client = mqtt.connect(`mqtt://127.0.0.1:${port}`, {
      username,
      password,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
      clientId: `abuse-${username}-${Math.random().toString(16).slice(2, 8)}`,
    });
    client.once('connect', () => resolve({ client, error: null }));
    client.once('error', (e) => {
      client.end(true);
      resolve({ client: null, error: String((e as { code?: number }).code ?? e.message) });
    });
  });
}

/** `n` readings a minute apart from `from`: a counter and three voltages. */
function readings(from: number, n: number, start: number) {
  return Array.from({ length: n }, (_, i) => ({
    ts: from + i * 60_000,
    values: {
      vave1: 230 + Math.sin(i / 30),
      vave2: 231,
      vave3: 229,
      eai1: (start + i) * 0.01,
      pave1: 500 + (i % 60),
    },
  }));
}

async function publishAll(client: mqtt.MqttClient, key: string, batches: unknown[][]): Promise<void> {
  for (const b of batches)
    await client.publishAsync(`kilowatch/meters/${key}/readings`, JSON.stringify(b), { qos: 1 });
}

export default async function abuseScenarios(args: string[]): Promise<object> {
  const num = (name: string, d: number) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : d;
  };
  const days = num('days', 30);
  const seconds = num('seconds', 15);
  const onlyAt = args.indexOf('--only');
  const only = onlyAt >= 0 ? new RegExp(args[onlyAt + 1] ?? '') : null;
  if (!args.includes('--no-build')) buildServer();
  const env: Record<string, string> = { KW_DEMO_HISTORY_DAYS: String(days) };
  // `--profile <dir>`: the server's main thread profiled from start to stop (bench/src/_cpu-profile.cjs).
  const profileAt = args.indexOf('--profile');
  if (profileAt >= 0) {
    env.KW_BENCH_CPU_PROFILE_DIR = resolve(args[profileAt + 1] ?? '.');
    env.NODE_OPTIONS = `--require ${fileURLToPath(new URL('./_cpu-profile.cjs', import.meta.url))}`;
  }
  const server = await startServer(env);
  const base = server.base;
  const mqttPort = server.mqttPort;
  const started = performance.now();
  try {
    for (;;) {
      const h = await health(base);
      if (h.demoHistory?.state === 'done') break;
      if (performance.now() - started > 600_000) throw new Error('demo history not written in 10 min');
      await sleep(500);
    }
    say(`demo history of ${days} days written (${round1((performance.now() - started) / 1000)} s)`);
    // The well-behaved second account: one meter with the last day of readings.
    const victim = await register(base, 'victim@example.com');
    const vm = (await claim(base, victim, 1, 'a1c0de')).d!;
    const now = Date.now();
    const dayFrom = Math.floor((now - DAY_MS) / 60_000) * 60_000;
    {
      const m = await connectMeter(mqttPort, vm.username, vm.password);
      if (!m.client) throw new Error(`victim meter: ${m.error}`);
      const rows = readings(dayFrom, 1440, 0);
      const batches: unknown[][] = [];
      for (let i = 0; i < rows.length; i += 100) batches.push(rows.slice(i, i + 100));
      await publishAll(m.client, vm.key, batches);
      await m.client.endAsync();
    }
    const iso = (t: number) => new Date(t).toISOString();
    const pageUrls = [
      `/api/devices/${vm.id}/series?params=pave1,vave1&from=${iso(dayFrom)}&to=${iso(now)}`,
      `/api/devices/${vm.id}/energy/summary`,
      `/api/devices/${vm.id}/latest`,
    ];
    const probe = new Worker(VICTIM, { eval: true, workerData: { base, token: victim.token, pageUrls } });
    const drain = () =>
      new Promise<Sample[]>((r) => {
        const on = (m: { samples?: Sample[] }) => {
          if (!m.samples) return;
          probe.off('message', on);
          r(m.samples);
        };
        probe.on('message', on);
        probe.postMessage('drain');
      });
    const judge = (samples: Sample[]) => {
      const hs = samples.filter((s) => s.kind === 'health');
      const ps = samples.filter((s) => s.kind === 'page');
      const healthP99Ms = round1(
        percentile(
          hs.map((s) => s.ms),
          0.99,
        ),
      );
      const pageP95Ms = round1(
        percentile(
          ps.map((s) => s.ms),
          0.95,
        ),
      );
      const fiveXx = samples.filter((s) => s.status >= 500 || s.status === 0).length;
      return {
        health: {
          n: hs.length,
          p50Ms: round1(
            percentile(
              hs.map((s) => s.ms),
              0.5,
            ),
          ),
          p99Ms: healthP99Ms,
          maxMs: round1(Math.max(...hs.map((s) => s.ms))),
        },
        page: {
          n: ps.length,
          p50Ms: round1(
            percentile(
              ps.map((s) => s.ms),
              0.5,
            ),
          ),
          p95Ms: pageP95Ms,
          maxMs: round1(Math.max(...ps.map((s) => s.ms))),
        },
        victim5xx: fiveXx,
        pageStatuses: count(ps.map((s) => s.status)),
        met: healthP99Ms < BAR.healthP99Ms && pageP95Ms < BAR.pageP95Ms && fiveXx === 0,
      };
    };
    const results: Record<string, object> = {};
    const run = async (name: string, step: () => Promise<object>) => {
      if (only && !only.test(name)) return;
      await drain();
      say(`${name}…`);
      const cpu0 = cpuSecondsOf(server.pid);
      const t = performance.now();
      let what: object;
      try {
        what = await step();
      } catch (e) {
        what = { error: String(e) };
      }
      // The second account goes on a moment after the step, for what it left behind.
      await sleep(1_000);
      const r = {
        seconds: round1((performance.now() - t) / 1000),
        serverCpuS: round1(cpuSecondsOf(server.pid) - cpu0),
        rssMb: memoryOf(server.pid).rssMb,
        ...judge(await drain()),
        what,
      };
      results[name] = r;
      say(`${name}: ${JSON.stringify(r)}`);
    };
    const demos = async (n: number) => Promise.all(Array.from({ length: n }, () => demoToken(base)));
    const devicesOf = async (token: string) =>
      ((await call(base, 'GET', '/api/devices', token)).json as unknown as { id: number }[]).map((d) => d.id);

    await run('quiet', async () => {
      await sleep(seconds * 1_000);
      return {};
    });

    // 2. One demo visitor's WebSocket sends 1-byte frames in a tight loop for 10 s, never reading; closed
    // sockets are opened again (up to the user's 30).
    await run('hubFlood', async () => {
      const [token] = await demos(1);
      const until = performance.now() + 10_000;
      const closes: number[] = [];
      let sent = 0;
      let sockets = 0;
      while (performance.now() < until && sockets < 40) {
        sockets++;
        const ws = new WebSocket(`${base.replace('http', 'ws')}/hubs/dashboardHub?access_token=${token}`);
        const code = await new Promise<number>((resolve) => {
          ws.once('open', async () => {
            (ws as unknown as { _socket: { pause(): void } })._socket.pause();
            while (ws.readyState === WebSocket.OPEN && performance.now() < until) {
              if (ws.bufferedAmount < 1 << 20) {
                ws.send('x');
                sent++;
              }
              if (sent % 200 === 0) await new Promise((r) => setImmediate(r));
            }
            if (ws.readyState === WebSocket.OPEN) ws.terminate();
          });
          ws.once('close', (c) => resolve(c));
          ws.once('error', () => resolve(-1));
        });
        closes.push(code);
      }
      return { sockets, framesSent: sent, closeCodes: count(closes) };
    });

    // 6. One account claims devices until refused (and locations, comparisons), then 9. Grafana fan-out over them.
    const attacker = await register(base, 'attacker@example.com');
    const claimed: number[] = [];
    await run('quotas', async () => {
      const statuses: number[] = [];
      let refused: Json | null = null;
      for (let i = 0; i < 2_000; i++) {
        const r = await claim(base, attacker, i, 'dead');
        statuses.push(r.status);
        if (r.d) claimed.push(r.d.id);
        else {
          refused = { status: r.status };
          break;
        }
      }
      const locs: number[] = [];
      for (let i = 0; i < 200; i++) {
        const r = await call(base, 'POST', '/api/locations', attacker.token, {
          name: `L${i}`,
          timezone: 'UTC',
        });
        locs.push(r.status);
        if (r.status !== 201) break;
      }
      const cmps: number[] = [];
      for (let i = 0; i < 400; i++) {
        const r = await call(base, 'POST', '/api/comparisons', attacker.token, {
          name: `Cmp ${i}`,
          members: [{ deviceId: claimed[0], param: 'vave1' }],
          grouped: false,
        });
        cmps.push(r.status);
        if (r.status !== 201) break;
      }
      return {
        devices: claimed.length,
        devicesRefused: refused,
        locations: count(locs),
        comparisons: count(cmps),
      };
    });

    // 3. Grafana with no device in the payload (every device), many targets; /metrics and a big target list.
    await run('grafanaFanout', async () => {
      const key = (await call(base, 'POST', '/api/account/api-keys', attacker.token, { name: 'Grafana' }))
        .json.key as string;
      const q = (targets: number) => ({
        range: { from: iso(now - 365 * DAY_MS), to: iso(now) },
        intervalMs: 60_000,
        maxDataPoints: 100_000,
        targets: Array.from({ length: targets }, (_, i) => ({ target: 'vave1', refId: `R${i}` })),
      });
      const out: Record<string, object> = {};
      for (const n of [1, 3, 50, 1000]) {
        const t = performance.now();
        const r = await call(base, 'POST', '/grafana/query', key, q(n));
        out[`targets${n}`] = {
          status: r.status,
          ms: round1(performance.now() - t),
          bytes: r.bytes,
          message: r.json.message,
        };
      }
      const t = performance.now();
      const m = await call(base, 'POST', '/grafana/metrics', key, {});
      out.metrics = { status: m.status, ms: round1(performance.now() - t), bytes: m.bytes };
      return out;
    });

    // 4. 3 demo visitors × 8 concurrent loops of the four heaviest reads.
    await run('heavyReads', async () => {
      const tokens = await demos(3);
      const statuses: number[] = [];
      const until = performance.now() + seconds * 1_000;
      const year = `from=${iso(now - 365 * DAY_MS)}&to=${iso(now)}`;
      await Promise.all(
        tokens.flatMap((token) =>
          Array.from({ length: 8 }, async () => {
            const ids = await devicesOf(token);
            const id = ids[0];
            const urls = [
              `/api/devices/${id}/series?params=vave1,vave2,vave3&interval=1d&from=1970-01-01T00:00:00Z&to=2100-01-01T00:00:00Z`,
              `/api/devices/${id}/series?params=vave1,vave2,vave3&interval=15m&${year}`,
              `/api/analytics/consumption?deviceIds=${ids.join(',')}&interval=1h&${year}`,
              `/api/devices/${id}/voltage-quality?${year}`,
            ];
            for (let i = 0; performance.now() < until; i++) {
              const r = await call(base, 'GET', urls[i % urls.length]!, token);
              statuses.push(r.status);
              if (r.status === 503) await sleep(200);
            }
          }),
        ),
      );
      return { answers: count(statuses) };
    });

    // 5. 7 demo visitors × 3 year-long exports; then the second account's one-day export.
    await run('exports', async () => {
      const tokens = await demos(7);
      const year: number[] = [];
      const month: number[] = [];
      const jobs: { token: string; id: number }[] = [];
      for (const token of tokens) {
        const ids = await devicesOf(token);
        for (let i = 0; i < 3; i++) {
          const body = { deviceIds: ids, params: 'all', format: 'csv' };
          const y = await call(base, 'POST', '/api/exports', token, {
            ...body,
            from: iso(now - 365 * DAY_MS),
            to: iso(now),
          });
          year.push(y.status);
          const m = await call(base, 'POST', '/api/exports', token, {
            ...body,
            from: iso(now - 31 * DAY_MS),
            to: iso(now),
          });
          month.push(m.status);
          if (m.status === 202) jobs.push({ token, id: m.json.id as number });
        }
      }
      const t = performance.now();
      const mine = await call(base, 'POST', '/api/exports', victim.token, {
        deviceIds: [vm.id],
        params: 'all',
        format: 'csv',
        from: iso(dayFrom),
        to: iso(now),
      });
      let victimExport: string = `refused ${mine.status} ${mine.json.message ?? ''}`;
      if (mine.status === 202) {
        for (;;) {
          await sleep(200);
          const j = await call(base, 'GET', `/api/exports/${mine.json.id}`, victim.token);
          if (j.json.status === 'done' || j.json.status === 'failed' || performance.now() - t > 120_000) {
            victimExport = `${j.json.status} after ${round1((performance.now() - t) / 1000)} s`;
            break;
          }
        }
      }
      // Signing out ends the demo workspaces and their jobs.
      for (const token of tokens) await call(base, 'GET', '/api/account/logout', token);
      return { yearLong: count(year), monthLong: count(month), victimExport };
    });

    // 7. Bad logins from one address (other usernames), then a valid meter connects.
    await run('brokerLockout', async () => {
      const bad: string[] = [];
      for (let i = 0; i < 200; i++) {
        const r = await connectMeter(mqttPort, `nobody-${i % 5}`, 'wrong');
        bad.push(r.error ?? 'accepted');
        r.client?.end(true);
      }
      const good = await connectMeter(mqttPort, vm.username, vm.password);
      await good.client?.endAsync();
      return { badLogins: count(bad as unknown as number[]), validMeter: good.error ?? 'connected' };
    });

    // 9. One meter writes backdated history as fast as it is acknowledged.
    await run('meterBackdated', async () => {
      const a = await register(base, 'backdater@example.com');
      const d = (await claim(base, a, 7, 'be0000')).d!;
      const m = await connectMeter(mqttPort, d.username, d.password);
      if (!m.client) return { error: m.error };
      const until = performance.now() + seconds * 1_000;
      let sent = 0;
      let t0 = now - 3 * 365 * DAY_MS;
      let disconnected = false;
      m.client.on('close', () => {
        disconnected = true;
      });
      const inFlight: Promise<unknown>[] = [];
      while (performance.now() < until && !disconnected) {
        const batch = readings(t0, 100, sent);
        t0 += 100 * 60_000;
        inFlight.push(
          m.client
            .publishAsync(`kilowatch/meters/${d.key}/readings`, JSON.stringify(batch), { qos: 1 })
            .catch(() => {}),
        );
        sent += 100;
        if (inFlight.length >= 10) await inFlight.shift();
      }
      await Promise.race([Promise.all(inFlight), sleep(10_000)]);
      m.client.end(true);
      const state = (await call(base, 'GET', `/api/devices/${d.id}/connection`, a.token)).json;
      return { readingsSent: sent, perS: Math.round(sent / seconds), disconnected, connection: state };
    });

    probe.postMessage('stop');
    await probe.terminate();
    const failing = Object.entries(results)
      .filter(([, r]) => !(r as { met: boolean }).met)
      .map(([n]) => n);
    return {
      bench: 'abuse',
      days,
      seconds,
      bar: BAR,
      skipped: { demoYearFinish: 'measured by `pnpm bench backfill --days 365`' },
      results,
      failing,
    };
  } finally {
    await server.stop();
  }
}
