/**
 * The energy summary says when a meter's history is still being written (the demo's first minute), so
 * the client shows "history loading" instead of totals that count only part of it. Real DuckDB (in
 * memory) and PGlite; the clock is fixed.
 */
import { createDuckDbStore, type DuckDbStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, locationOf, steadyCounter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const NOW = Date.parse('2026-06-15T10:00:00Z');
const H = 3_600_000;

describe('the energy summary while history is written', () => {
  let t: TestApp;
  let store: DuckDbStore;
  let account: Account;
  const loading = new Set<string>();
  let writing: { id: number; deviceKey: string };
  let written: { id: number; deviceKey: string };

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, now: () => NOW, historyLoading: (key) => loading.has(key) });
    account = await signUp(t.app);
    const loc = await locationOf(t.app, account);
    writing = await claimMeter(t.app, account, loc, 'writing');
    written = await claimMeter(t.app, account, loc, 'written');
    for (const m of [writing, written])
      await store.write(steadyCounter(m.deviceKey, 'eai1', NOW - 48 * H, NOW - H));
    await store.refreshRollups(NOW);
    loading.add(writing.deviceKey);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const summary = async (id: number) => {
    const res = await as(t.app, account, { method: 'GET', url: `/api/devices/${id}/energy/summary` });
    expect(res.statusCode).toBe(200);
    return res.json() as { historyLoading?: boolean; today: { import: number | null } };
  };

  it('marks the meter whose history is being written, and only that one', async () => {
    expect((await summary(writing.id)).historyLoading).toBe(true);
    const other = await summary(written.id);
    expect(other).not.toHaveProperty('historyLoading');
    expect(other.today.import).toBeGreaterThan(0);
  });

  it('drops the mark once the history is written', async () => {
    loading.delete(writing.deviceKey);
    const s = await summary(writing.id);
    expect(s).not.toHaveProperty('historyLoading');
    expect(s.today.import).toBeGreaterThan(0);
  });
});
