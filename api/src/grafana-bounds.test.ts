/**
 * The bounds of the Grafana data source (docs/api.md §Grafana) on the real app (PGlite, DuckDB in memory),
 * with small limits so that each is reached: targets per query, devices per target, points per answer,
 * the answer's time budget, and paged option lists.
 */
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from './analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from './testing/helper.ts';

const NOW = Date.parse('2026-11-20T12:00:00Z');
const range = { from: iso(NOW - 86_400_000), to: iso(NOW) };
const LIMITS = {
  maxTargets: 3,
  maxDevicesPerTarget: 2,
  maxAnswerPoints: 40,
  answerBudgetMs: 1_000,
  maxOptions: 2,
  maxMetricsOptions: 2,
};

describe('Grafana bounds', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let alice: Account;
  let meters: Meter[];

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, now: () => NOW, config: { grafana: LIMITS } });
    alice = await signUp(t.app);
    const loc = await locationOf(t.app, alice);
    meters = [
      await claimMeter(t.app, alice, loc, 'Kitchen A'),
      await claimMeter(t.app, alice, loc, 'Kitchen B'),
      await claimMeter(t.app, alice, loc, 'Garage'),
    ];
  });
  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const post = (url: string, payload: Record<string, unknown>) =>
    as(t.app, alice, { method: 'POST', url: `/grafana${url}`, payload });
  const bands = (ids: number[]) => ({ target: 'voltage.bands', payload: { device: ids.map(String) } });
  const two = () => [meters[0]!.id, meters[1]!.id];

  it('refuses a query with more targets than allowed, naming the limit', async () => {
    const res = await post('/query', { range, targets: [1, 2, 3, 4].map(() => bands(two())) });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      message: 'a query has at most 3 targets, this one 4',
      errors: { targets: ['a query has at most 3 targets, this one 4'] },
    });
    expect((await post('/query', { range, targets: [bands(two())] })).statusCode).toBe(200);
  });

  it('refuses a target reading more devices than allowed (every device when it names none)', async () => {
    const all = await post('/query', { range, targets: [{ target: 'voltage.bands' }] });
    expect(all.statusCode).toBe(400);
    expect(all.json().message).toBe(
      'target "voltage.bands" reads 3 devices; at most 2 per target: name them in its device payload',
    );
    const named = await post('/query', { range, targets: [bands(two())] });
    expect(named.statusCode).toBe(200);
    // Two devices, two bands each, low and high: eight series.
    expect(named.json()).toHaveLength(8);
    const rows = await as(t.app, alice, {
      method: 'GET',
      url: `/grafana/rows?device=*&param=vave1&from=${range.from}&to=${range.to}`,
    });
    expect(rows.statusCode).toBe(400);
    expect(rows.json().message).toMatch(/at most 2 per target/);
  });

  it('answers 413 once the answer would hold more points than allowed', async () => {
    // Eight points a device: two targets of two devices are 32, three are 48 (over 40).
    expect((await post('/query', { range, targets: [bands(two()), bands(two())] })).statusCode).toBe(200);
    const res = await post('/query', { range, targets: [bands(two()), bands(two()), bands(two())] });
    expect(res.statusCode).toBe(413);
    expect(res.json().message).toBe(
      'the answer would hold more than 40 points: ask for fewer targets, devices or maxDataPoints',
    );
  });

  it('answers 503 with Retry-After once building the answer took longer than its budget', async () => {
    // Each device's limits take 600 ms of the app's clock: the second device ends past the 1,000 ms budget.
    const limits = t.app.devices.limits.bind(t.app.devices);
    const slow = vi.spyOn(t.app.devices, 'limits').mockImplementation(async (...args) => {
      t.advance(600);
      return limits(...args);
    });
    try {
      const one = await post('/query', { range, targets: [bands([meters[0]!.id])] });
      expect(one.statusCode).toBe(200);
      const res = await post('/query', { range, targets: [bands(two())] });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json().message).toMatch(/longer than its 1000 ms budget/);
    } finally {
      slow.mockRestore();
    }
  });

  it('bounds /metrics and pages every option list by search, offset and limit', async () => {
    const metrics = await post('/metrics', {});
    expect(metrics.statusCode).toBe(200);
    const lists = (metrics.json() as { payloads: { name: string; options?: unknown[] }[] }[]).map(
      (m) => m.payloads.find((p) => p.name === 'device')?.options?.length,
    );
    expect(new Set(lists)).toEqual(new Set([2]));

    const options = (extra: Record<string, unknown>) =>
      post('/metric-payload-options', { metric: 'vave1', name: 'device', ...extra });
    expect((await options({})).json()).toHaveLength(2);
    expect((await options({ search: 'garage' })).json()).toEqual([
      { label: 'Garage', value: String(meters[2]!.id) },
    ]);
    expect((await options({ search: 'kitchen', offset: 1 })).json()).toEqual([
      { label: 'Kitchen B', value: String(meters[1]!.id) },
    ]);
    const tooMany = await options({ limit: 3 });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().message).toBe('limit must be at most 2');

    const variable = await post('/variable', { payload: { target: 'devices' } });
    expect(variable.json()).toHaveLength(2);
    const searched = await post('/variable', { payload: '{"target":"devices","search":"gar"}' });
    expect(searched.json()).toEqual([{ __text: 'Garage', __value: String(meters[2]!.id) }]);
    const tags = await post('/tag-values', { key: 'device', offset: 2 });
    expect(tags.json()).toEqual([{ text: 'Garage' }]);
    expect((await post('/tag-values', { key: 'device', offset: -1 })).statusCode).toBe(400);
  });
});
