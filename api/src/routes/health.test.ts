/**
 * Liveness and readiness (docs/api.md §Health): an api replica whose telemetry store is down stays ready
 * (login and devices work), a process that ingests is not; PostgreSQL down makes every role unready;
 * liveness checks nothing.
 */
import { StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../errors.ts';
import { buildTestApp, engines, noTelemetryStore, signUp, type TestApp } from '../testing/helper.ts';
import type { Dependency, Readiness } from './options.ts';

/** A telemetry store that is down (its health says so, its reads fail). */
function downStore(): TelemetryStore {
  return {
    ...noTelemetryStore(),
    engine: 'influxdb',
    health: async () => ({ ok: false, engine: 'influxdb', detail: 'connect ECONNREFUSED 127.0.0.1:8086' }),
    latest: async () => {
      throw new StoreError('connect ECONNREFUSED', 'unavailable');
    },
  };
}

describe('health: live and ready', () => {
  const apps: TestApp[] = [];
  let mqtt: Dependency = { ok: false, required: false };
  const build = async (readiness: Readiness) => {
    const t = await buildTestApp('pglite', { store: downStore(), readiness });
    apps.push(t);
    return t;
  };
  let api: TestApp;
  let all: TestApp;

  beforeAll(async () => {
    api = await build({ role: 'api', storeRequired: false, dependencies: () => ({ mqtt }) });
    all = await build({ role: 'all', storeRequired: true });
  });
  afterAll(async () => {
    for (const t of apps) await t.close();
  });

  it('an api replica with its telemetry store down is ready, names the store as down and not required', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      status: 'ready',
      role: 'api',
      dependencies: {
        metadata: { ok: true, required: true, engine: 'pglite' },
        store: {
          ok: false,
          required: false,
          engine: 'influxdb',
          detail: expect.stringContaining('ECONNREFUSED'),
        },
        mqtt: { ok: false, required: false },
      },
    });
    // And it does serve what it is ready for.
    await signUp(api.app);
    // The summary still says something is down.
    expect((await api.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(503);
  });

  it('reports the MQTT live connection as it changes', async () => {
    mqtt = { ok: true, required: false, live: true, alerts: true };
    const res = await api.app.inject({ method: 'GET', url: '/api/health/ready' });
    expect(res.json().dependencies.mqtt).toEqual({ ok: true, required: false, live: true, alerts: true });
  });

  it('a process that ingests is not ready without its store', async () => {
    const res = await all.app.inject({ method: 'GET', url: '/api/health/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({
      status: 'not-ready',
      dependencies: { store: { ok: false, required: true } },
    });
  });

  it('PostgreSQL down: not ready, yet live', async () => {
    const t = await build({ role: 'api', storeRequired: false });
    const query = t.sql.query;
    t.sql.query = (async () => {
      throw new UnavailableError('PostgreSQL', new Error('connect ECONNREFUSED'));
    }) as typeof query;
    try {
      const ready = await t.app.inject({ method: 'GET', url: '/api/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().dependencies.metadata).toMatchObject({ ok: false, required: true });
      const live = await t.app.inject({ method: 'GET', url: '/api/health/live' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toMatchObject({ status: 'ok', role: 'api' });
    } finally {
      t.sql.query = query;
    }
  });
});

describe.each(engines())('metrics of the hub, the alerts and the database pool (%s)', (engine) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(engine, { store: noTelemetryStore(), now: () => Date.UTC(2026, 5, 1, 12) });
  });
  afterAll(async () => {
    await t?.close();
  });

  const value = (text: string, name: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? undefined : Number(line.split(' ')[1]);
  };

  it('counts hub clients, stale readings left alone, and (PostgreSQL) the pool', async () => {
    await t.app.alerts.evaluate({
      deviceKey: '0a1b2c3d4e5f',
      ts: Date.UTC(2026, 4, 30),
      values: { vave1: 190 },
    });
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(value(text, 'kilowatch_hub_clients')).toBe(0);
    expect(value(text, 'kilowatch_hub_messages_sent_total')).toBe(0);
    expect(value(text, 'kilowatch_alerts_readings_stale_total')).toBe(1);
    expect(value(text, 'kilowatch_alerts_readings_evaluated_total')).toBe(0);
    if (engine === 'postgres') {
      expect(value(text, 'kilowatch_db_pool_connections')).toBeGreaterThan(0);
      expect(value(text, 'kilowatch_db_pool_waiting')).toBe(0);
      expect(value(text, 'kilowatch_db_pool_max')).toBe(4);
    } else expect(value(text, 'kilowatch_db_pool_connections')).toBeUndefined();
  });
});
