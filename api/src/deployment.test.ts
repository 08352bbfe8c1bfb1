/**
 * The server deployment as separate processes on real servers (Mosquitto with its dynamic security plugin,
 * InfluxDB 1.x, PostgreSQL 15): 2 API and 2 ingest processes of the compiled server (`node main.js` from
 * `pnpm build`'s server bundle, built once for this file) chosen by KW_ROLE, as the image runs them; the
 * meter publishes with the account its claim gave it. A numbered
 * stream of one meter is stored exactly once through a SIGKILL of an ingest process (restarted under its
 * id), a SIGTERM of the other and a replacement under a new id, and a PostgreSQL restart under traffic
 * during which no process exits; both API processes start together on an empty database; both API hubs
 * deliver the live readings; one voltage drop gives one notification; a batch's rollup buckets are
 * recomputed once across the ingest processes, not once by each.
 */
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixedBucketStart, HOUR_MS } from '@kilowatch/core';
import { createInfluxStore } from '@kilowatch/influx';
import {
  findDynsecPlugin,
  findServerBinary,
  type InfluxTestServer,
  influxSkipReason,
  type KilowatchProcess,
  type KilowatchProcessOptions,
  type MosquittoServer,
  type PostgresServer,
  postgresInstalled,
  sleep,
  startInfluxServer,
  startMosquitto,
  startPostgresServer,
  startTogether,
  until,
} from '@kilowatch/testkit';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const mosquittoBin = findServerBinary('mosquitto', ['/usr/sbin/mosquitto']);
const dynsecPlugin = mosquittoBin ? findDynsecPlugin() : null;
const skip = !mosquittoBin || !dynsecPlugin || influxSkipReason() !== null || !postgresInstalled();
/** Mosquitto's dynamic-security admin (the API keeps accounts with it) and the services' account. */
const MQTT_ADMIN = { username: 'kw-deploy-admin', password: 'deploy-admin-secret' };
const MQTT_SERVICE = { username: 'kw-deploy-services', password: 'deploy-services-secret' };

/** Sorted integers as compact runs: "3-7, 9". */
function runs(xs: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < xs.length; ) {
    let j = i;
    while (j + 1 < xs.length && xs[j + 1] === xs[j]! + 1) j++;
    out.push(i === j ? String(xs[i]) : `${xs[i]}-${xs[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

describe.skipIf(skip)('the server deployment: 2 API and 2 ingest processes on real servers', () => {
  let broker: MosquittoServer;
  let influx: InfluxTestServer;
  let pg: PostgresServer;
  let dataDir: string;
  /** The compiled server, under api/ so that it resolves its packages from api/node_modules as in the image. */
  const serverDir = path.join(ROOT, 'api', 'dist', `deployment-test-${process.pid}`);
  const procs: KilowatchProcess[] = [];

  beforeAll(async () => {
    [broker, influx, pg] = await Promise.all([
      startMosquitto(mosquittoBin as string, {
        dynsec: { plugin: dynsecPlugin as string, admin: MQTT_ADMIN },
      }),
      startInfluxServer(),
      startPostgresServer(),
    ]);
    dataDir = await mkdtemp(path.join(tmpdir(), 'kw-deploy-'));
    const build = spawnSync(process.execPath, ['scripts/build.mjs', 'server', '--outdir', serverDir], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (build.status !== 0) throw new Error(`the server build failed: ${build.stdout}${build.stderr}`);
  }, 180_000);

  afterAll(async () => {
    for (const p of procs) await p.kill();
    await broker?.stop();
    await influx?.stop();
    pg?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    await rm(serverDir, { recursive: true, force: true });
  });

  /** One process of the compiled server, ready once its /api/health/ready answers. */
  const options = (
    name: string,
    role: 'api' | 'ingest',
    extra: Record<string, string> = {},
  ): KilowatchProcessOptions => ({
    entry: path.join(serverDir, 'main.js'),
    role,
    name,
    dataDir: path.join(dataDir, name),
    env: {
      MQTT_URL: broker.url,
      INFLUX_URL: influx.url,
      INFLUX_DB: influx.database,
      DATABASE_URL: pg.url,
      KW_DEMO: 'off',
      KW_ROLLUP_INTERVAL_MS: '1000',
      KW_INGEST_SESSION_EXPIRY_S: '600',
      KW_MQTT_USERNAME: MQTT_SERVICE.username,
      KW_MQTT_PASSWORD: MQTT_SERVICE.password,
      ...(role === 'api'
        ? { KW_MQTT_ADMIN_USERNAME: MQTT_ADMIN.username, KW_MQTT_ADMIN_PASSWORD: MQTT_ADMIN.password }
        : {}),
      LOG_LEVEL: 'info',
      ...extra,
    },
    ready: { http: '/api/health/ready' },
    readyTimeoutMs: 90_000,
    // A SIGTERM drains what is in flight first; SIGKILL only if that hangs.
    stopTimeoutMs: 60_000,
    // The whole output: a failure lists what each process said about its broker connections.
    keepLines: 100_000,
  });
  /** Starts processes together and waits until all are ready. */
  const start = async <T extends KilowatchProcessOptions[]>(...all: T) => {
    const started = await startTogether(all);
    procs.push(...started);
    return started as { [K in keyof T]: KilowatchProcess };
  };

  it('stores a numbered stream exactly once through kills, replacements and a database restart', async () => {
    // (d) both API processes start together on the empty database.
    const apis = await start(options('api-1', 'api'), options('api-2', 'api'));
    const [ingestA, ingestB] = await start(
      options('ingest-a', 'ingest', { KW_INGEST_CLIENT_ID: 'kw-ingest-a' }),
      options('ingest-b', 'ingest', { KW_INGEST_CLIENT_ID: 'kw-ingest-b' }),
    );

    // A user, a claimed meter with voltage alerts, and one hub socket on each API process.
    const base = `http://127.0.0.1:${apis[0]!.port}`;
    const post = async (url: string, body: object, token?: string) =>
      fetch(`${base}${url}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: JSON.stringify(body),
      });
    const reg = await post('/api/register', {
      email: 'deploy@example.com',
      password: 'correct horse battery',
      fullName: 'Deploy',
    });
    expect(reg.status).toBe(201);
    const token = ((await reg.json()) as { token: string }).token;
    const key = 'a0b1c2d3e4f5';
    const claim = await post('/api/devices', { mac: 'a0:b1:c2:d3:e4:f5', name: 'M', typeCode: 1 }, token);
    expect(claim.status).toBe(201);
    const claimed = (await claim.json()) as { id: number; mqtt: { username: string; password: string } };
    const deviceId = claimed.id;
    const settings = await fetch(`${base}/api/devices/${deviceId}/notifications`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        enabled: true,
        voltageDrop: 207,
        voltageRise: 253,
        totalConsumption: 0,
        disableAtNight: false,
        interval: 1,
        muteAll: false,
      }),
    });
    expect(settings.status).toBe(200);
    const live = apis.map(() => new Set<number>());
    const sockets = await Promise.all(
      apis.map(async (a, i) => {
        const ws = new WebSocket(`ws://127.0.0.1:${a.port}/hubs/dashboardHub?access_token=${token}`);
        await once(ws, 'open');
        ws.on('message', (m) => {
          const msg = JSON.parse(String(m)) as { type: string; values?: { eai1?: number } };
          if (msg.type === 'reading' && typeof msg.values?.eai1 === 'number') live[i]!.add(msg.values.eai1);
        });
        ws.send(JSON.stringify({ type: 'subscribe', deviceIds: [deviceId] }));
        return ws;
      }),
    );
    await sleep(500);

    const N = 2000;
    // Fresh readings (alerts judge only those), 100 ms apart, ending before now.
    // (37 ms past a whole second: no reading lands on a 15-minute edge, so the rollup count below is exact.)
    const t0 = Math.floor((Date.now() - N * 100 - 5_000) / 1000) * 1000 + 37;
    // The meter connects with the account its claim gave it (the API put it on the broker).
    const publisher: MqttClient = await mqtt.connectAsync(broker.url, {
      clientId: 'kw-deploy-meter',
      username: claimed.mqtt.username,
      password: claimed.mqtt.password,
    });
    const publish = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        // One voltage drop in the whole stream: reading 700.
        const vave1 = i === 700 ? 190 : 230;
        await publisher.publishAsync(
          `kilowatch/meters/${key}/readings`,
          JSON.stringify({ ts: t0 + i * 100, seq: i, values: { eai1: i, vave1, vave2: 230, vave3: 230 } }),
          { qos: 1 },
        );
      }
    };
    const store = await createInfluxStore({ url: influx.url, database: influx.database });
    const stored = async () => {
      const page = await store.readRaw({ deviceKey: key, from: t0, to: t0 + N * 100, limit: 10_000 });
      return page.items;
    };
    try {
      // (a) SIGKILL of one ingest process mid-stream; it comes back under its id.
      await publish(0, 500);
      await until(async () => (await stored()).length >= 200, 30_000, 'first commits', 100);
      await ingestA.kill();
      await publish(500, 900);
      const [ingestA2] = await start(options('ingest-a2', 'ingest', { KW_INGEST_CLIENT_ID: 'kw-ingest-a' }));
      // (b) SIGTERM of the other; its replacement has a new client id.
      await ingestB.stop();
      expect(ingestB.child.exitCode).toBe(0);
      const [ingestC] = await start(options('ingest-c', 'ingest', { KW_INGEST_CLIENT_ID: 'kw-ingest-c' }));
      await publish(900, 1400);
      // (c) PostgreSQL restarts while readings flow and the APIs are asked.
      const during = publish(1400, N);
      await pg.stop('fast');
      const codes: number[] = [];
      for (const a of apis) {
        const r = await fetch(`http://127.0.0.1:${a.port}/api/devices`, {
          headers: { authorization: `Bearer ${token}` },
        });
        codes.push(r.status);
      }
      expect(codes.every((c) => c === 503)).toBe(true);
      await sleep(1000);
      await pg.start();
      await during;
      await until(async () => (await stored()).length === N, 60_000, `all ${N} readings stored`, 100).catch(
        async (e: Error) => {
          throw new Error(`${e.message}: have ${(await stored()).length}`);
        },
      );
      const items = await stored();
      expect(items.map((r) => r.values.eai1)).toEqual(Array.from({ length: N }, (_, i) => i));
      // No process exited on the way but those stopped on purpose.
      for (const p of [...apis, ingestA2, ingestC])
        expect(p.child.exitCode, `${p.name}: ${p.output()}`).toBeNull();
      // Both hubs delivered the live readings committed while their sockets were open.
      await until(() => live.every((s) => s.size >= N - 10), 20_000, 'live readings on both hubs', 100).catch(
        (e: Error) => {
          // Which readings each hub missed, and what the processes said about their broker connections.
          const missing = live.map((s) =>
            runs(Array.from({ length: N }, (_, i) => i).filter((i) => !s.has(i))),
          );
          const said = procs
            .map(
              (p) =>
                `${p.name}:\n${p
                  .lines()
                  .filter((l) => /mqtt|broker|dynsec|live|hub|reconnect|clos/i.test(l))
                  .slice(-40)
                  .join('\n')}`,
            )
            .join('\n');
          throw new Error(
            `${e.message}: ${live.map((s) => s.size).join(', ')}; missing ${missing.join(' | ')}\n${said}`,
          );
        },
      );
      // One voltage drop, one notification (the recovery follows it).
      let kinds: string[] = [];
      await until(
        async () => {
          const r = await fetch(`${base}/api/notifications`, {
            headers: { authorization: `Bearer ${token}` },
          });
          if (r.status !== 200) return false;
          kinds = ((await r.json()) as { items: { kind: string }[] }).items.map((n) => n.kind);
          return kinds.includes('voltage-drop-recovery');
        },
        30_000,
        'the alert and its recovery',
        100,
      );
      expect(kinds.filter((k) => k === 'voltage-drop')).toHaveLength(1);

      // Rollups: one batch makes its 15-minute buckets be recomputed once across the ingest processes
      // (they take turns under a PostgreSQL lock and mark the batch's dirty range done), not once by each.
      const ingests = [ingestA2, ingestC];
      const bucketsWritten = async () => {
        let sum = 0;
        for (const p of ingests) {
          const text = await (await fetch(`http://127.0.0.1:${p.port}/metrics`)).text();
          sum += Number(/^kilowatch_ingest_rollup_buckets_total (\d+)$/m.exec(text)?.[1] ?? 0);
        }
        return sum;
      };
      /** The count once no refresh has written anything for 3 s (refreshes run every second). */
      const settled = async (other: (n: number) => boolean) => {
        let last = await bucketsWritten();
        await until(
          async () => {
            await sleep(3000);
            const n = await bucketsWritten();
            const quiet = n === last && other(n);
            last = n;
            return quiet;
          },
          90_000,
          'rollups settled',
          100,
        );
        return last;
      };
      const before = await settled(() => true);
      // A meter emptying its buffer: the minute before the stream.
      const batchFrom = t0 - 61_000;
      const batch = Array.from({ length: 60 }, (_, k) => ({
        ts: batchFrom + k * 1_000,
        values: { eai1: 0, vave1: 230, vave2: 230, vave3: 230 },
      }));
      await publisher.publishAsync(`kilowatch/meters/${key}/readings`, JSON.stringify(batch), { qos: 1 });
      const all = async () =>
        (await store.readRaw({ deviceKey: key, from: batchFrom, to: t0 + N * 100, limit: 10_000 })).items;
      await until(async () => (await all()).length === N + batch.length, 30_000, 'the batch stored', 100);
      const after = await settled((n) => n > before);
      // What one refresh of the batch's range writes: every quarter holding a reading, over the whole hours
      // from the one that closes with the batch's first reading to the one holding the first reading after
      // the batch (whose counter step the batch changes).
      const stored2 = await all();
      const last = batch.at(-1)!.ts;
      const next = stored2.find((r) => r.ts > last)?.ts ?? last;
      const hourFrom = fixedBucketStart(batchFrom - 1, HOUR_MS);
      const hourTo = fixedBucketStart(Math.max(last, next), HOUR_MS) + HOUR_MS;
      const quarters = new Set(
        stored2.filter((r) => r.ts >= hourFrom && r.ts < hourTo).map((r) => fixedBucketStart(r.ts, 900_000)),
      );
      expect(quarters.size).toBeGreaterThan(0);
      expect(after - before).toBe(quarters.size);
    } finally {
      for (const ws of sockets) ws.close();
      await publisher.endAsync();
      await store.close();
    }
  }, 240_000);
});
