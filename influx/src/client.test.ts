import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Reading } from '@kilowatch/core';
import { type InfluxTestServer, influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { StoreError } from '@kilowatch/tsdb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InfluxClient, parseRetryAfter, type RetryInfo } from './client.ts';
import { createInfluxStore } from './store.ts';

const skip = influxSkipReason();
const T0 = Date.UTC(2025, 0, 6);
const device = () => randomBytes(6).toString('hex');

/**
 * A stand-in that answers statuses a real InfluxDB will not produce on demand (503, 429, 413): fault
 * injection only. Everything else runs against real influxd below.
 */
interface Fault {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

async function faultServer(
  script: Fault[],
): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      const f = script[Math.min(seen.length - 1, script.length - 1)]!;
      res.writeHead(f.status, { 'content-type': 'application/json', ...f.headers });
      res.end(f.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('InfluxDB client under injected faults', () => {
  let fake: Awaited<ReturnType<typeof faultServer>> | undefined;
  afterEach(async () => {
    await fake?.close();
    fake = undefined;
  });

  it('retries a 503 and then succeeds', async () => {
    fake = await faultServer([{ status: 503, body: '{"error":"overloaded"}' }, { status: 204 }]);
    const retries: RetryInfo[] = [];
    const client = new InfluxClient({
      url: fake.url,
      database: 'db',
      retry: { baseDelayMs: 5, onRetry: (i) => retries.push(i) },
    });
    expect(await client.write('readings,device=a vave1=1 1')).toEqual({ dropped: 0 });
    expect(fake.seen.length).toBe(2);
    expect(retries).toMatchObject([{ attempt: 1, status: 503, reason: 'overloaded' }]);
    expect(client.stats).toMatchObject({ requests: 2, retries: 1, failures: 0 });
  });

  it('honours Retry-After on 429', async () => {
    fake = await faultServer([{ status: 429, headers: { 'retry-after': '1' } }, { status: 204 }]);
    const retries: RetryInfo[] = [];
    const client = new InfluxClient({
      url: fake.url,
      database: 'db',
      retry: { baseDelayMs: 5, maxDelayMs: 10, onRetry: (i) => retries.push(i) },
    });
    await client.write('readings,device=a vave1=1 1');
    expect(retries).toHaveLength(1);
    expect(retries[0]!.status).toBe(429);
    // The backoff alone is at most 10 ms; the wait honours the server's second.
    expect(retries[0]!.delayMs).toBeGreaterThanOrEqual(1000);
  });

  it('gives up after its attempts with a retryable unavailable error', async () => {
    fake = await faultServer([{ status: 502 }]);
    const client = new InfluxClient({
      url: fake.url,
      database: 'db',
      retry: { maxAttempts: 3, baseDelayMs: 1 },
      reads: { maxAttempts: 3 },
    });
    const err = await client.query('SHOW DATABASES').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ retryable: true, kind: 'unavailable' });
    expect(fake.seen.length).toBe(3);
    expect(client.stats).toMatchObject({ requests: 3, retries: 2, failures: 1 });
  });

  it("gives a query that hangs two attempts of its read time limit, not the writes' six", async () => {
    // A server that takes the request and never answers (a stopped process, a full disk).
    const held: ServerResponse[] = [];
    const hung = createServer((_req, res) => void held.push(res));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const { port } = hung.address() as AddressInfo;
    try {
      const client = new InfluxClient({
        url: `http://127.0.0.1:${port}`,
        database: 'db',
        retry: { baseDelayMs: 1 },
        reads: { timeoutMs: 200 },
      });
      const err = await client.query('SHOW DATABASES').catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'StoreError', retryable: true, kind: 'unavailable' });
      expect((err as Error).message).toMatch(/after 2 attempts.*TimeoutError/);
      expect(client.stats).toMatchObject({ requests: 2, retries: 1, failures: 1 });
    } finally {
      for (const res of held) res.destroy();
      hung.closeAllConnections();
      await new Promise<void>((r) => hung.close(() => r()));
    }
  });

  it('retries network errors (nothing listening) and says a retry can help', async () => {
    const closed = await faultServer([{ status: 204 }]);
    const url = closed.url;
    await closed.close();
    const client = new InfluxClient({ url, database: 'db', retry: { maxAttempts: 2, baseDelayMs: 1 } });
    const err = await client.write('readings,device=a vave1=1 1').catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StoreError', retryable: true, kind: 'unavailable' });
    expect(client.stats.retries).toBe(1);
  });

  it('does not retry other 4xx: they are rejected', async () => {
    fake = await faultServer([{ status: 413, body: '{"error":"Request Entity Too Large"}' }]);
    const client = new InfluxClient({ url: fake.url, database: 'db', retry: { baseDelayMs: 1 } });
    const err = await client.write('readings,device=a vave1=1 1').catch((e: unknown) => e);
    expect(err).toMatchObject({ retryable: false, kind: 'rejected' });
    expect((err as Error).message).toMatch(/413.*Request Entity Too Large/);
    expect(fake.seen.length).toBe(1);
  });

  it('sends a token as `Authorization: Token …`', async () => {
    fake = await faultServer([{ status: 204 }]);
    const store = await createInfluxStore({ url: fake.url, database: 'db', token: 's3cr3t' });
    await store.write([{ deviceKey: 'abc', ts: T0, values: { vave1: 1 } }]);
    expect(fake.seen[0]!.authorization).toBe('Token s3cr3t');
  });

  it('rejects a URL that is not http(s) as a configuration error', () => {
    expect(() => new InfluxClient({ url: 'ftp://x', database: 'db' })).toThrow(/must be http/);
  });
});

describe('parseRetryAfter', () => {
  it.each([
    ['3', 0, 3000],
    ['0', 0, 0],
    ['Wed, 21 Oct 2015 07:28:05 GMT', Date.UTC(2015, 9, 21, 7, 28, 0), 5000],
    ['soon', 0, undefined],
    [null, 0, undefined],
  ])('%s (now %i) → %s', (value, now, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe.skipIf(skip !== null)('InfluxDB client against a real influxd', () => {
  let server: InfluxTestServer;
  let secured: InfluxTestServer;

  beforeAll(async () => {
    [server, secured] = await Promise.all([
      startInfluxServer(),
      startInfluxServer({ auth: { username: 'kwadmin', password: "pa ss'word" } }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([server?.stop(), secured?.stop()]);
  });

  it('counts a partial write, hands its readings to onRejected and never retries it', async () => {
    const d = device();
    const raw = new InfluxClient({ url: server.url, database: server.database });
    // An integer field makes the float write below conflict: the server drops that point.
    await raw.write(`readings,device=${d} vave1=1i ${T0}`);
    const rejected: { points: readonly Reading[]; reason: string }[] = [];
    const store = await createInfluxStore({
      url: server.url,
      database: server.database,
      onRejected: (points, reason) => rejected.push({ points, reason }),
      retry: { baseDelayMs: 1 },
    });
    const batch: Reading[] = [
      { deviceKey: d, ts: T0 + 1000, values: { vave1: 230 } },
      { deviceKey: d, ts: T0 + 2000, values: { vave2: 231 } },
    ];
    const res = await store.write(batch);
    expect(res.written).toBe(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.points).toEqual(batch);
    expect(rejected[0]!.reason).toMatch(/partial write: field type conflict/);
    expect(store.stats()).toMatchObject({
      requests: 1,
      retries: 0,
      droppedPoints: 1,
      partialWrites: 1,
      rejectedReadings: 2,
    });
    await store.close();
  });

  it('turns a missing database into a configuration error that is not retried', async () => {
    const store = await createInfluxStore({
      url: server.url,
      database: 'no_such_db',
      retry: { baseDelayMs: 1 },
    });
    const err = await store
      .write([{ deviceKey: device(), ts: T0, values: { vave1: 1 } }])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(err).toMatchObject({ retryable: false, kind: 'configuration' });
    expect((err as Error).message).toMatch(/database not found/);
    expect(store.stats()).toMatchObject({ requests: 1, retries: 0 });
    const q = await store.latest(device()).catch((e: unknown) => e);
    expect(q).toMatchObject({ kind: 'configuration' });
    // The server answers /ping, but health names the database it cannot use.
    const health = await store.health();
    expect(health).toMatchObject({ ok: false, engine: 'influxdb' });
    expect(health.detail).toMatch(/database not found: no_such_db/);
  });

  it('authenticates with username and password when auth is enabled', async () => {
    const d = device();
    const store = await createInfluxStore({
      url: secured.url,
      database: secured.database,
      username: secured.username!,
      password: secured.password!,
    });
    await store.write([{ deviceKey: d, ts: T0, values: { vave1: 230 } }]);
    expect(await store.latest(d)).toEqual({ ts: T0, values: { vave1: 230 } });
    await store.close();
  });

  it.each([
    ['wrong password', { username: 'kwadmin', password: 'nope' }],
    ['no credentials', {}],
  ])('refuses %s with a configuration error', async (_, creds) => {
    const store = await createInfluxStore({ url: secured.url, database: secured.database, ...creds });
    const err = await store
      .write([{ deviceKey: device(), ts: T0, values: { vave1: 1 } }])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'StoreError', retryable: false, kind: 'configuration' });
    expect(await store.devices().catch((e: unknown) => e)).toMatchObject({ kind: 'configuration' });
    const health = await store.health();
    expect(health).toMatchObject({ ok: false, engine: 'influxdb' });
    expect(health.detail).toMatch(/INFLUX_TOKEN or INFLUX_USER\/INFLUX_PASSWORD/);
  });

  it('reads answers in full from a server whose max-row-limit cuts them short', async () => {
    const limited = await startInfluxServer({ maxRowLimit: 7 });
    try {
      const d = device();
      const store = await createInfluxStore({ url: limited.url, database: limited.database });
      const rows: Reading[] = Array.from({ length: 30 }, (_, i) => ({
        deviceKey: d,
        ts: T0 + i * 60_000,
        values: { vave1: 200 + i },
      }));
      await store.write(rows);
      const page = await store.readRaw({ deviceKey: d, from: T0, to: T0 + 3_600_000, limit: 25 });
      expect(page.items.map((r) => r.values.vave1)).toEqual(rows.slice(0, 25).map((r) => r.values.vave1));
      expect(page.nextCursor).not.toBeNull();
      const raw = new InfluxClient({ url: limited.url, database: limited.database });
      const [cut] = await raw.query(`SELECT * FROM readings WHERE "device" = '${d}'`, false);
      expect(cut?.series?.[0]?.values).toHaveLength(30);
    } finally {
      await limited.stop();
    }
  });

  it('reports an unreachable server as unhealthy instead of throwing', async () => {
    const store = await createInfluxStore({ url: 'http://127.0.0.1:1', database: 'db' });
    expect(await store.health()).toMatchObject({ ok: false, engine: 'influxdb' });
  });
});
