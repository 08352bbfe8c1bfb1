/**
 * `pnpm bench alerts [--devices 50] [--rate 5000] [--seconds 10] [--pg-url postgres://…] [--local]
 * [--no-phases]`: committed live readings of claimed meters with voltage alerts on, and the phase detectors
 * (overload against a 25 A fuse, imbalance) fed each reading's three phase currents unless `--no-phases`,
 * handed to the alert evaluator at a fixed rate the way the live source does (one call per reading, not
 * awaited). Reports p50/p99 hand-over → evaluated (state stored, notifications written), the process's CPU
 * while the readings were offered and drained, the metadata-store transactions it took, and the peak heap.
 *
 * By default the state is shared (`alert_states` under a row lock, as every API process on an external
 * broker keeps it); `--local` keeps it in memory as the embedded deployment does. Without `--pg-url` the
 * metadata store is PGlite.
 */

import { performance } from 'node:perf_hooks';
import { buildApp, createPgliteSql, createPostgresSql, type Sql } from '@kilowatch/api';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { arg, percentile } from './query.ts';

function text(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

export default async function alerts(args: string[]): Promise<object> {
  const devices = arg(args, 'devices', 50);
  const rate = arg(args, 'rate', 5000);
  const seconds = arg(args, 'seconds', 10);
  const pgUrl = text(args, 'pg-url');
  const shared = !args.includes('--local');
  const phases = !args.includes('--no-phases');
  const store = await createDuckDbStore();
  const sql: Sql = pgUrl ? await createPostgresSql({ connectionString: pgUrl }) : await createPgliteSql();
  const app = await buildApp({
    store,
    sql,
    config: { scrypt: { N: 1024, r: 8, p: 1 }, maxEventLoopDelayMs: 0 },
    liveServices: { alerts: { sharedState: shared } },
  });
  await app.ready();
  try {
    const email = `alerts-${Date.now()}@example.com`;
    const reg = await app.inject({
      method: 'POST',
      url: '/api/register',
      payload: { email, password: 'bench password 1', fullName: 'Alerts' },
    });
    const auth = { authorization: `Bearer ${(reg.json() as { token: string }).token}` };
    const loc = await app.inject({
      method: 'POST',
      url: '/api/locations',
      headers: auth,
      payload: { name: 'Home', timezone: 'UTC' },
    });
    const locationId = (loc.json() as { id: number }).id;
    const keys: string[] = [];
    const stamp = (Date.now() % 0xffff).toString(16).padStart(4, '0');
    for (let i = 0; i < devices; i++) {
      const key = `a1${stamp}${i.toString(16).padStart(6, '0')}`;
      const res = await app.inject({
        method: 'POST',
        url: '/api/devices',
        headers: auth,
        payload: { mac: key.match(/../g)!.join(':'), name: `Meter ${i}`, typeCode: 1, locationId },
      });
      if (res.statusCode >= 300) throw new Error(`claim failed: ${res.body}`);
      const id = (res.json() as { id: number }).id;
      const put = await app.inject({
        method: 'PUT',
        url: `/api/devices/${id}/notifications`,
        headers: auth,
        payload: {
          enabled: true,
          voltageDrop: 207,
          voltageRise: 253,
          totalConsumption: 0,
          disableAtNight: false,
          interval: 1,
          muteAll: false,
          // The phase detectors on: the currents below stay under both limits, so the notifications are the
          // voltage ones alone and the count stays checkable; the detectors still judge every reading.
          ...(phases ? { fuseA: 25, overloadShare: 0.9, overloadSeconds: 10, imbalanceShare: 0.5 } : {}),
        },
      });
      if (put.statusCode >= 300) throw new Error(`settings failed: ${put.body}`);
      keys.push(key);
    }
    let transactions = 0;
    const transaction = sql.transaction.bind(sql);
    sql.transaction = (fn) => {
      transactions++;
      return transaction(fn);
    };
    process.stderr.write(
      `${devices} meters, ${rate} readings/s for ${seconds} s, ${shared ? 'shared' : 'in-memory'} state on ${pgUrl ? 'PostgreSQL' : 'PGlite'}\n`,
    );
    const perMeter = Math.round((rate * seconds) / devices);
    const total = perMeter * devices;
    const perTick = rate / 100;
    const latencies = new Float64Array(total);
    const pending: Promise<void>[] = [];
    let failed = 0;
    let heapPeak = 0;
    const start = performance.now();
    const cpuStart = process.cpuUsage();
    // Readings are news (alerts judge only fresh ones): they start a second before the bench does.
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1000;
    let published = 0;
    for (let tick = 0; published < total; tick++) {
      const due = Math.min(total, Math.round((tick + 1) * perTick));
      for (; published < due; published++) {
        const i = published;
        const n = Math.floor(i / devices);
        // Each meter's voltage sags for 50 of every 500 readings: an alert and a recovery each time.
        const vave1 = n % 500 < 50 ? 190 : 230;
        // Balanced currents wandering under the 22.5 A overload limit and the 50 % imbalance.
        const base = 8 + (n % 7);
        const values: Record<string, number> = phases
          ? { vave1, iave1: base, iave2: base + 1, iave3: base - 1 }
          : { vave1 };
        const sent = performance.now();
        pending.push(
          app.alerts.evaluate({ deviceKey: keys[i % devices]!, ts: t0 + n * 1000, values }).then(
            () => {
              latencies[i] = performance.now() - sent;
            },
            () => {
              failed++;
            },
          ),
        );
      }
      if (tick % 10 === 0) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
      const wait = start + (tick + 1) * 10 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const offeredFor = performance.now() - start;
    await Promise.all(pending);
    const drainedAfter = performance.now() - start - offeredFor;
    const cpu = process.cpuUsage(cpuStart);
    const wallMs = performance.now() - start;
    const samples = Array.from(latencies);
    const { rows } = await sql.query<{ n: string }>(
      'select count(*) as n from notifications n join devices d on d.id = n.device_id where d.device_key = any($1)',
      [keys],
    );
    return {
      bench: 'alerts',
      // Each meter sags for 50 of every 500 readings: an alert per sag begun, a recovery per sag ended.
      expectedNotifications:
        devices * (Math.ceil(perMeter / 500) + (perMeter > 50 ? Math.floor((perMeter - 51) / 500) + 1 : 0)),
      devices,
      rate,
      seconds,
      state: shared ? 'shared' : 'in-memory',
      phaseDetectors: phases,
      metadataStore: pgUrl ? 'postgresql' : 'pglite',
      readings: total,
      offeredPerS: Math.round(total / (offeredFor / 1000)),
      drainedAfterMs: Math.round(drainedAfter),
      p50Ms: +percentile(samples, 50).toFixed(2),
      p99Ms: +percentile(samples, 99).toFixed(2),
      // The whole process (evaluator, PGlite when it is the metadata store, DuckDB idle), in % of one core.
      cpuPercent: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 100),
      cpuMsPerReading: +((cpu.user + cpu.system) / 1000 / total).toFixed(3),
      transactions,
      readingsPerTransaction: transactions > 0 ? +(total / transactions).toFixed(1) : null,
      notifications: Number(rows[0]?.n ?? 0),
      failed,
      heapPeakMb: Math.round(heapPeak / 1e6),
    };
  } finally {
    await app.close();
    await store.close();
    await sql.close();
  }
}
