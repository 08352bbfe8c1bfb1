/**
 * `--engine server`: the server deployment's ingest as the image runs it (`node main.js`, KW_ROLE=ingest,
 * compiled once into api/dist) behind Mosquitto into InfluxDB, one and then two ingest processes.
 */
import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { simulatedReading } from '@kilowatch/ingest';
import {
  findServerBinary,
  influxdPath,
  type KilowatchProcess,
  sleep,
  startInfluxServer,
  startMosquitto,
  startTogether,
} from '@kilowatch/testkit';
import mqtt from 'mqtt';
import { quantile } from './case.ts';
import { loadOptions, log } from './cli.ts';
import { deviceKey, houseMeter, WORKER } from './publishers.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * `processes` ingest processes of the compiled server behind Mosquitto into InfluxDB. Committed readings
 * are counted from their `/metrics`; publish → committed latency from the live readings they publish on
 * `kilowatch/live/+` after each commit (QoS 0: a sample lost under load is a latency not counted).
 */
async function runServerCase(
  processes: number,
  main: string,
  opts: { seconds: number; devices: number; rate: number; publishers: number; backlog: number },
): Promise<object> {
  const server = await startInfluxServer();
  const mosquitto = await startMosquitto(findServerBinary('mosquitto', ['/usr/sbin/mosquitto']) as string);
  const children: KilowatchProcess[] = [];
  const live = await mqtt.connectAsync(mosquitto.url, { clientId: `kw-bench-live-${processes}` });
  try {
    children.push(
      ...(await startTogether(
        Array.from({ length: processes }, (_, i) => ({
          entry: main,
          role: 'ingest' as const,
          name: `ingest ${i + 1}`,
          parentEnv: false,
          env: {
            MQTT_URL: mosquitto.url,
            INFLUX_URL: server.url,
            INFLUX_DB: server.database,
            KW_ROLLUP_INTERVAL_MS: '0',
            KW_INGEST_CLIENT_ID: `kw-bench-ingest-${processes}-${i}`,
            LOG_LEVEL: 'warn',
          },
          ready: { http: '/api/health/ready' },
          readyTimeoutMs: 90_000,
          pollMs: 200,
        })),
      )),
    );
    let committed = 0;
    const poll = async () => {
      let n = 0;
      for (const c of children) {
        const text = await (await fetch(`${c.url}/metrics`)).text();
        n += Number(/^kilowatch_ingest_readings_stored_total (\d+)/m.exec(text)?.[1] ?? 0);
      }
      committed = n;
    };
    let polling = true;
    const poller = (async () => {
      while (polling) {
        await poll().catch(() => {});
        await sleep(100);
      }
    })();
    let latencies: number[] = [];
    await live.subscribeAsync('kilowatch/live/+', { qos: 0 });
    live.on('message', (_t, payload) => {
      const ts = /"ts":(\d+)/.exec(payload.toString('latin1'))?.[1];
      if (ts) latencies.push(Date.now() - Number(ts));
    });
    const template = simulatedReading(houseMeter, Date.now()).values;
    const devices = Array.from({ length: opts.devices }, (_, i) => deviceKey(0xbe02, i));
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        url: mosquitto.url,
        clients: opts.publishers,
        devices,
        template,
        prefix: `server-${processes}`,
      },
    });
    const ready = new Promise<void>((resolve, reject) =>
      worker.on('message', (m: { type: string; message?: string }) => {
        if (m.type === 'ready') resolve();
        if (m.type === 'error') reject(new Error(m.message));
      }),
    );
    await ready;
    let granted = 0;
    const grant = (n: number) => {
      worker.postMessage({ type: 'grant', n });
      granted += n;
    };
    const drain = async (ms: number) => {
      const by = performance.now() + ms;
      while (committed < granted && performance.now() < by) await sleep(50);
    };
    grant(2000);
    await drain(60_000);
    const half = (opts.seconds * 1000) / 2;
    log(`server, ${processes} ingest: saturation phase ${half / 1000} s`);
    const c0 = committed;
    const t0 = performance.now();
    while (performance.now() - t0 < half) {
      const want = committed + opts.backlog - granted;
      if (want > 0) grant(want);
      await sleep(20);
    }
    const readingsPerS = (committed - c0) / ((performance.now() - t0) / 1000);
    log(`server, ${processes} ingest: ${Math.round(readingsPerS)} readings/s under saturation`);
    await drain(60_000);
    const rate = Math.max(1, Math.min(opts.rate, Math.floor(readingsPerS * 0.8)));
    log(`server, ${processes} ingest: steady phase at ${rate} readings/s for ${half / 1000} s`);
    latencies = [];
    const t1 = performance.now();
    let sent = 0;
    while (performance.now() - t1 < half) {
      const due = Math.floor(((performance.now() - t1) / 1000) * rate);
      if (due > sent) {
        grant(due - sent);
        sent = due;
      }
      await sleep(5);
    }
    await drain(30_000);
    const sorted = latencies.sort((a, b) => a - b);
    worker.postMessage({ type: 'stop' });
    await worker.terminate();
    polling = false;
    await poller;
    return {
      processes,
      readings_per_s: Math.round(readingsPerS),
      steady_rate: rate,
      p50_ms: quantile(sorted, 0.5),
      p99_ms: quantile(sorted, 0.99),
      latency_samples: sorted.length,
      readings: granted,
      committed,
    };
  } finally {
    await live.endAsync();
    await Promise.all(children.map((c) => c.stop()));
    await mosquitto.stop();
    await server.stop();
  }
}

/** `--engine server`: one, then two ingest processes, in one run. */
export async function serverEngine(args: string[]): Promise<object> {
  const opts = loadOptions(args);
  if (!findServerBinary('mosquitto', ['/usr/sbin/mosquitto']) || !influxdPath())
    return { skipped: 'mosquitto or influxd not installed' };
  const out = join(ROOT, 'api', 'dist', `bench-${process.pid}`);
  const build = spawnSync(process.execPath, ['scripts/build.mjs', 'server', '--outdir', out], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`the server build failed: ${build.stdout}${build.stderr}`);
  try {
    const one = await runServerCase(1, join(out, 'main.js'), opts);
    const two = await runServerCase(2, join(out, 'main.js'), opts);
    return { one_ingest: one, two_ingest: two, config: opts };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}
