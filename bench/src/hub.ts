/**
 * `pnpm bench hub [--clients 100] [--rate 1000] [--seconds 10] [--devices 10]`: readings published into the
 * hub's live source at a fixed rate, delivered over real WebSockets (loopback) to every client subscribed
 * to the devices. Reports p50/p99 publish → delivery latency. The clients run in a worker thread (dashboards
 * are browsers elsewhere), so the server's event loop carries only the hub; each client still parses every
 * message it receives.
 */

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { buildApp, createPgliteSql } from '@kilowatch/api';
import type { Reading } from '@kilowatch/core';
import { createDuckDbStore } from '@kilowatch/tsdb';
import { arg, percentile } from './query.ts';

/** The dashboards: `clients` WebSockets subscribed to every device, each parsing what it receives. */
const CLIENTS = `
const { parentPort, workerData } = require('node:worker_threads');
const WebSocket = require(workerData.wsPath);
const { url, clients, ids } = workerData;
let latencies = new Float64Array(1 << 20);
let n = 0;
const sockets = [];
function record(v) {
  if (n === latencies.length) { const next = new Float64Array(n * 2); next.set(latencies); latencies = next; }
  latencies[n++] = v;
}
async function main() {
  for (let c = 0; c < clients; c++) {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
    await new Promise((resolve) => {
      ws.on('message', (data) => {
        const m = JSON.parse(String(data));
        if (m.type === 'pong') resolve();
        else if (m.type === 'reading' && m.values && m.values.sentAt !== undefined)
          record(performance.timeOrigin + performance.now() - m.values.sentAt);
      });
      ws.send(JSON.stringify({ type: 'subscribe', deviceIds: ids }));
      ws.send(JSON.stringify({ type: 'ping' }));
    });
    sockets.push(ws);
  }
  parentPort.postMessage({ type: 'ready' });
  parentPort.on('message', async (m) => {
    if (m.type !== 'drain') return;
    for (let i = 0; i < 500 && n < m.expected; i++) await new Promise((r) => setTimeout(r, 20));
    for (const ws of sockets) ws.close();
    parentPort.postMessage({ type: 'latencies', latencies: latencies.slice(0, n) });
  });
}
main().catch((e) => parentPort.postMessage({ type: 'error', message: String(e) }));
`;

export default async function hub(args: string[]): Promise<object> {
  const clients = arg(args, 'clients', 100);
  const rate = arg(args, 'rate', 1000);
  const seconds = arg(args, 'seconds', 10);
  const devices = arg(args, 'devices', 10);
  const listeners = new Set<(r: Reading) => void>();
  const live = {
    onReading(fn: (r: Reading) => void) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
  };
  const store = await createDuckDbStore();
  const sql = await createPgliteSql();
  const app = await buildApp({
    store,
    sql,
    live,
    config: { scrypt: { N: 1024, r: 8, p: 1 }, maxEventLoopDelayMs: 0 },
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const reg = await app.inject({
      method: 'POST',
      url: '/api/register',
      payload: { email: 'hub@example.com', password: 'bench password 1', fullName: 'Hub' },
    });
    const token = (reg.json() as { token: string }).token;
    const keys: string[] = [];
    const ids: number[] = [];
    for (let i = 0; i < devices; i++) {
      const key = `c0ffee${i.toString(16).padStart(6, '0')}`;
      const res = await app.inject({
        method: 'POST',
        url: '/api/devices',
        headers: { authorization: `Bearer ${token}` },
        payload: { mac: key.match(/../g)!.join(':'), name: `Meter ${i}`, typeCode: 1 },
      });
      keys.push(key);
      ids.push((res.json() as { id: number }).id);
    }
    const wsPath = createRequire(import.meta.url).resolve('ws');
    const worker = new Worker(CLIENTS, {
      eval: true,
      workerData: {
        wsPath,
        url: `${address.replace('http', 'ws')}/hubs/dashboardHub?access_token=${token}`,
        clients,
        ids,
      },
    });
    const fromWorker = (type: string) =>
      new Promise<{ type: string; latencies?: Float64Array; message?: string }>((resolve, reject) => {
        const on = (m: { type: string; message?: string }) => {
          if (m.type !== type && m.type !== 'error') return;
          worker.off('message', on);
          if (m.type === 'error') reject(new Error(m.message));
          else resolve(m);
        };
        worker.on('message', on);
      });
    await fromWorker('ready');
    process.stderr.write(`${clients} clients subscribed to ${devices} devices\n`);
    // Publish in 10 ms ticks to hold the rate without a timer per reading.
    const total = Math.round(rate * seconds);
    const perTick = rate / 100;
    let published = 0;
    const start = performance.now();
    const elu = performance.eventLoopUtilization();
    const workerElu = worker.performance.eventLoopUtilization();
    for (let tick = 0; published < total && tick < 1_000_000; tick++) {
      const due = Math.min(total, Math.round((tick + 1) * perTick));
      for (; published < due; published++) {
        const r: Reading = {
          deviceKey: keys[published % devices]!,
          ts: Date.now(),
          values: { vave1: 230, sentAt: performance.timeOrigin + performance.now() },
        };
        for (const fn of listeners) fn(r);
      }
      const wait = start + (tick + 1) * 10 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    // Event-loop utilisation while publishing: the server's thread and the clients' thread.
    const serverBusy = performance.eventLoopUtilization(elu).utilization;
    const clientsBusy = worker.performance.eventLoopUtilization(workerElu).utilization;
    // Let deliveries drain, then collect the clients' latencies.
    const expected = total * clients;
    const done = fromWorker('latencies');
    worker.postMessage({ type: 'drain', expected });
    const latencies = Array.from((await done).latencies ?? []);
    await worker.terminate();
    return {
      bench: 'hub',
      clients,
      devices,
      ratePerSecond: rate,
      seconds,
      published: total,
      delivered: latencies.length,
      expected,
      p50Ms: +percentile(latencies, 50).toFixed(2),
      p99Ms: +percentile(latencies, 99).toFixed(2),
      // A loop, not Math.max(...): a million samples would overflow the call stack.
      maxMs: +latencies.reduce((m, v) => Math.max(m, v), 0).toFixed(2),
      serverEventLoopBusy: +serverBusy.toFixed(2),
      clientsEventLoopBusy: +clientsBusy.toFixed(2),
      hub: app.hub.stats(),
    };
  } finally {
    await app.close();
    await store.close();
    await sql.close();
  }
}
