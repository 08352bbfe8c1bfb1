import { existsSync } from 'node:fs';
import { buildApp, createPgliteSql } from '@kilowatch/api';
import { createDuckDbStore, seriesOfMany } from '@kilowatch/tsdb';
import { meterReadings, percentile } from './query.ts';

const FILE = '/tmp/kwq/telemetry.duckdb';
const devices = 20, days = 365;
const from = Date.parse('2025-01-01T00:00:00Z');
const to = from + days * 86_400_000;
const fresh = !existsSync(FILE);
const store = await createDuckDbStore({ path: FILE, memoryLimit: '1GB' });
const sql = await createPgliteSql();
const app = await buildApp({ store, sql, config: { scrypt: { N: 1024, r: 8, p: 1 }, maxEventLoopDelayMs: 0, dataDir: '/tmp/kwq' } });
await app.ready();
const reg = await app.inject({ method: 'POST', url: '/api/register', payload: { email: 'b@example.com', password: 'bench password 1', fullName: 'B' } });
const token = (reg.json() as { token: string }).token;
const auth = { authorization: `Bearer ${token}` };
const loc = await app.inject({ method: 'POST', url: '/api/locations', headers: auth, payload: { name: 'B', timezone: 'Europe/Warsaw' } });
const locationId = (loc.json() as { id: number }).id;
const ids: number[] = []; const keys: string[] = [];
for (let i = 0; i < devices; i++) {
  const key = `b0c0de${i.toString(16).padStart(6, '0')}`;
  const r = await app.inject({ method: 'POST', url: '/api/devices', headers: auth, payload: { mac: key.match(/../g)!.join(':'), name: `Meter ${i + 1}`, typeCode: 1, locationId } });
  ids.push((r.json() as { id: number }).id); keys.push(key);
}
if (fresh) {
  async function* h() { for (const [i, k] of keys.entries()) yield* meterReadings(k, i, from, days * 1440); }
  await store.writeBulk!(h());
  await store.refreshRollups(to + 3_600_000);
}
const cmp = await app.inject({ method: 'POST', url: '/api/comparisons', headers: auth, payload: { name: 'Four meters', members: ids.slice(0, 4).map((deviceId) => ({ deviceId, param: 'vave1' })) } });
const cid = (cmp.json() as { id: number }).id;
const range = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
async function time(name: string, f: () => Promise<unknown>, runs = 60) {
  await f(); const s: number[] = [];
  for (let i = 0; i < runs; i++) { const t = performance.now(); await f(); s.push(performance.now() - t); }
  console.log(name.padEnd(28), 'p50', percentile(s, 50).toFixed(2), 'p95', percentile(s, 95).toFixed(2));
}
const q = (interval: '1h' | '1d') => keys.slice(0, 4).map((deviceKey) => ({ deviceKey, params: ['vave1'], from, to, interval, stats: ['avg'] as const, tz: 'Europe/Warsaw' }));
const base = await app.listen({ port: 0, host: '127.0.0.1' });
let bytes = 0;
for (let rep = 0; rep < 3; rep++) {
await time('http year chart 1h', async () => { bytes = (await (await fetch(`${base}/api/devices/${ids[0]}/series?params=vave1,vave2,vave3&interval=1h&${range}`, { headers: auth })).arrayBuffer()).byteLength; }, 100);
await time('http cmp 1h', async () => (await fetch(`${base}/api/comparisons/${cid}/data?interval=1h&${range}`, { headers: auth })).arrayBuffer(), 60);
}
console.log('bytes', bytes);
await app.close(); await store.close(); await sql.close();
