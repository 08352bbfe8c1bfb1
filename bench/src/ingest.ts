/**
 * `pnpm bench ingest [--seconds 40] [--devices 50] [--rate 5000] [--publishers <devices>] [--backlog 4000] [--skip-influx]
 *   [--outage 30] [--cpu-profile <dir>] [--no-decode-thread] [--memory-limit 1GB|duckdb] [--auth-compare [--pairs 3]]`
 * `pnpm bench ingest --engine server [--seconds 40] [--devices 50] [--rate 5000]`: the server deployment's
 * ingest as the image runs it (`node main.js`, KW_ROLE=ingest, compiled once into api/dist) behind Mosquitto
 * into InfluxDB, with one and then two ingest processes sharing the meters' topics in the same run.
 *
 * Simulated three-phase readings (~40 values each) published over MQTT at QoS 1 by publisher clients in
 * a worker thread, (a) into the embedded broker + DuckDB (file in a temp dir) and (b) into Mosquitto +
 * InfluxDB. Each case runs a saturation phase (as fast as the bridge commits, with a bounded backlog:
 * readings/s) and a steady phase at `--rate` (publish → committed latency, p50/p99), and measures the
 * store's own `write` rate on the same readings in the same run, half before and half after them. `--no-decode-thread` decodes on the
 * bridge's own thread (the embedded case decodes in a worker thread by default), for comparison.
 *
 * The parts: ingest/publishers.ts (the meters: a load generator in a worker thread), ingest/case.ts (one
 * case through its phases), ingest/server.ts (`--engine server`), ingest/auth-compare.ts (`--auth-compare`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInfluxStore } from '@kilowatch/influx';
import { startEmbeddedBroker } from '@kilowatch/ingest';
import { runStoreOutageScenario } from '@kilowatch/ingest/testing';
import { findServerBinary, influxdPath, startInfluxServer, startMosquitto } from '@kilowatch/testkit';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { arg, strArg } from './_args.ts';
import { authCompare } from './ingest/auth-compare.ts';
import { type CaseResult, runCase } from './ingest/case.ts';
import { loadOptions, log } from './ingest/cli.ts';
import { serverEngine } from './ingest/server.ts';
import { memoryLimitArg } from './memory.ts';

export default async function (args: string[]): Promise<object> {
  if (strArg(args, 'engine') === 'server') return serverEngine(args);
  const opts = {
    ...loadOptions(args),
    profileDir: strArg(args, 'cpu-profile'),
    decodeThread: !args.includes('--no-decode-thread'),
  };
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-ingest-'));
  try {
    if (args.includes('--auth-compare'))
      return { auth_compare: await authCompare(dir, args, opts), config: opts };
    // Meters anonymous, as before accounts: the broker's own cost is compared with `--auth-compare`.
    const broker = await startEmbeddedBroker({ port: 0, allowAnonymous: true });
    const store = await createDuckDbStore({
      path: join(dir, 'telemetry.duckdb'),
      memoryLimit: memoryLimitArg(args),
    });
    let embedded: CaseResult;
    try {
      embedded = await runCase('embedded', store, { broker }, opts);
    } finally {
      await store.close();
      await broker.close();
    }

    let influx: CaseResult | { skipped: string };
    const mosquittoBin = args.includes('--skip-influx')
      ? null
      : findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
    if (args.includes('--skip-influx')) influx = { skipped: '--skip-influx' };
    else if (!mosquittoBin || !influxdPath()) influx = { skipped: 'mosquitto or influxd not installed' };
    else {
      const server = await startInfluxServer();
      const mosquitto = await startMosquitto(mosquittoBin);
      const istore = await createInfluxStore({ url: server.url, database: server.database });
      try {
        influx = await runCase('influx', istore, { mqttUrl: mosquitto.url }, opts);
      } finally {
        await istore.close();
        await mosquitto.stop();
        await server.stop();
      }
    }
    // `--outage [seconds]`: InfluxDB killed mid-stream for 30 s behind Mosquitto; nothing may be lost.
    let influx_outage: object | undefined;
    if (args.includes('--outage') && mosquittoBin && influxdPath()) {
      const server = await startInfluxServer();
      const mosquitto = await startMosquitto(mosquittoBin);
      const istore = await createInfluxStore({ url: server.url, database: server.database, timeoutMs: 2000 });
      try {
        const outageMs = arg(args, 'outage', 30) * 1000;
        influx_outage = await runStoreOutageScenario({
          store: istore,
          mqttUrl: mosquitto.url,
          outage: { begin: () => server.kill('SIGKILL'), end: () => server.restart() },
          outageMs,
          readings: Math.round((outageMs / 1000) * 100 * 2),
          ratePerS: 100,
          maxInFlight: 500,
          log,
        });
        log(`influx outage: ${JSON.stringify(influx_outage)}`);
      } finally {
        await istore.close();
        await mosquitto.stop();
        await server.stop();
      }
    }
    return { ...embedded, influx, ...(influx_outage ? { influx_outage } : {}), config: opts };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
