/** Alerts on the embedded path: live readings → core's state machine → stored notifications, per user. */
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertOnVoltage, claimMeter, locationOf, type Meter } from '../analytics/testing.ts';
import { buildApp } from '../app.ts';
import { createLocalLiveSource } from '../hub/live-source.ts';
import {
  type Account,
  as,
  buildTestApp,
  engines,
  signUp,
  TEST_CONFIG,
  type TestApp,
} from '../testing/helper.ts';
import { MAX_READING_AGE_MS, MAX_WAITING_READINGS } from './evaluator.ts';

/** The servers' clock in these suites: the readings below are news at this time (none is older). */
const NOW = Date.parse('2026-06-01T12:00:00Z');
const clock = () => NOW;

describe('alert evaluator', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let alice: Account;
  let bob: Account;
  let meter: Meter;
  const live = createLocalLiveSource();

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, live, now: clock });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    meter = await claimMeter(t.app, alice, await locationOf(t.app, alice, 'UTC'));
    await alertOnVoltage(t.app, alice, meter);
  });

  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  async function notifications(who: Account, count: number) {
    for (let i = 0; i < 200; i++) {
      const body = (await as(t.app, who, { method: 'GET', url: '/api/notifications' })).json();
      if (body.items.length >= count) return body;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`fewer than ${count} notifications`);
  }

  it('raises a voltage-drop alert from a live reading, stores it for the owner only and notes the recovery', async () => {
    const at = Date.parse('2026-06-01T12:00:00Z');
    live.publish({ deviceKey: meter.deviceKey, ts: at, values: { vave1: 190, vave2: 230, vave3: 230 } });
    const first = await notifications(alice, 1);
    expect(first.items[0]).toMatchObject({
      deviceId: meter.id,
      kind: 'voltage-drop',
      at,
      read: false,
      phase: 1,
      value: 190,
      threshold: 207,
    });
    expect(first.items[0].message).toEqual(expect.any(String));
    expect((await as(t.app, bob, { method: 'GET', url: '/api/notifications' })).json().items).toEqual([]);
    // Back above 207 V but inside the hysteresis margin: still active, nothing new.
    await t.app.alerts.evaluate({ deviceKey: meter.deviceKey, ts: at + 60_000, values: { vave1: 208 } });
    expect((await notifications(alice, 1)).items).toHaveLength(1);
    await t.app.alerts.evaluate({ deviceKey: meter.deviceKey, ts: at + 120_000, values: { vave1: 230 } });
    const after = await notifications(alice, 2);
    expect(after.items[0].kind).toBe('voltage-drop-recovery');
  });

  it('judges only fresh readings: a backdated backfill neither alerts nor tells a recovery', async () => {
    const dave = await signUp(t.app);
    const m = await claimMeter(t.app, dave, await locationOf(t.app, dave, 'UTC'));
    await alertOnVoltage(t.app, dave, m);
    const list = async () =>
      (
        (await as(t.app, dave, { method: 'GET', url: '/api/notifications' })).json().items as {
          kind: string;
        }[]
      ).map((n) => n.kind);
    const before = t.app.alerts.stats().stale;
    await t.app.alerts.evaluate({ deviceKey: m.deviceKey, ts: NOW - 60_000, values: { vave1: 190 } });
    expect(await list()).toEqual(['voltage-drop']);
    // A backfill 40 hours old: normal voltage then, and a drop just past the age limit. Neither is news.
    for (let i = 0; i < 10; i++)
      await t.app.alerts.evaluate({
        deviceKey: m.deviceKey,
        ts: NOW - 40 * 3_600_000 + i * 1000,
        values: { vave1: 230 },
      });
    await t.app.alerts.evaluate({
      deviceKey: m.deviceKey,
      ts: NOW - MAX_READING_AGE_MS - 1,
      values: { vave1: 260 },
    });
    expect(await list()).toEqual(['voltage-drop']);
    expect(t.app.alerts.stats().stale - before).toBe(11);
    // The live stream goes on where it was: the drop is still active, and its recovery is told now.
    await t.app.alerts.evaluate({ deviceKey: m.deviceKey, ts: NOW, values: { vave1: 230 } });
    expect(await list()).toEqual(['voltage-drop-recovery', 'voltage-drop']);
  });

  it('takes a change of settings at the next reading (muting works at once)', async () => {
    // An account of its own: the history test below counts alice's notifications.
    const carol = await signUp(t.app);
    const other = await claimMeter(t.app, carol, await locationOf(t.app, carol, 'UTC'));
    await alertOnVoltage(t.app, carol, other);
    const at = Date.parse('2026-06-01T12:30:00Z');
    const drop = (s: number) => ({ deviceKey: other.deviceKey, ts: at + s * 1000, values: { vave1: 190 } });
    const drops = async () =>
      (
        (await as(t.app, carol, { method: 'GET', url: '/api/notifications' })).json().items as {
          deviceId: number;
          kind: string;
        }[]
      ).filter((n) => n.deviceId === other.id && n.kind === 'voltage-drop').length;
    await t.app.alerts.evaluate(drop(0));
    expect(await drops()).toBe(1);
    await alertOnVoltage(t.app, carol, other, true);
    // Back to normal and down again two minutes later: a new alert, were the old settings still cached.
    await t.app.alerts.evaluate({ deviceKey: other.deviceKey, ts: at + 60_000, values: { vave1: 230 } });
    await t.app.alerts.evaluate(drop(180));
    expect(await drops()).toBe(1);
  });

  it('reads the settings again when they change while being read', async () => {
    const erin = await signUp(t.app);
    const raced = await claimMeter(t.app, erin, await locationOf(t.app, erin, 'UTC'));
    await alertOnVoltage(t.app, erin, raced);
    // The evaluator's read of the settings comes back only after the user has muted the meter.
    const query = t.sql.query.bind(t.sql);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let reads = 0;
    t.sql.query = (async (text: string, params?: readonly unknown[]) => {
      const out = await query(text, params);
      if (text.includes('join notification_settings') && reads++ === 0) await held;
      return out;
    }) as typeof t.sql.query;
    try {
      const at = Date.parse('2026-06-01T12:50:00Z');
      const evaluated = t.app.alerts.evaluate({ deviceKey: raced.deviceKey, ts: at, values: { vave1: 190 } });
      for (let i = 0; i < 100 && reads === 0; i++) await new Promise((r) => setTimeout(r, 5));
      await alertOnVoltage(t.app, erin, raced, true);
      release();
      await evaluated;
      expect((await as(t.app, erin, { method: 'GET', url: '/api/notifications' })).json().items).toEqual([]);
    } finally {
      t.sql.query = query;
    }
  });

  it("gives readings that arrive together one state: a new meter's first burst alerts once", async () => {
    const dave = await signUp(t.app);
    const fresh = await claimMeter(t.app, dave, await locationOf(t.app, dave, 'UTC'));
    await alertOnVoltage(t.app, dave, fresh);
    const at = Date.parse('2026-06-01T12:40:00Z');
    // Not awaited one by one: the live source hands readings over as they come.
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t.app.alerts.evaluate({ deviceKey: fresh.deviceKey, ts: at + i * 1000, values: { vave1: 190 } }),
      ),
    );
    const items = (await as(t.app, dave, { method: 'GET', url: '/api/notifications' })).json().items;
    expect(items.map((n: { kind: string }) => n.kind)).toEqual(['voltage-drop']);
    expect(items[0].at).toBe(at);
  });

  it('raises no-data for a silent device and pages the history by cursor', async () => {
    await t.app.alerts.checkSilence(Date.parse('2026-06-01T13:00:00Z'));
    const body = await notifications(alice, 3);
    expect(body.items[0].kind).toBe('no-data');
    const page1 = (await as(t.app, alice, { method: 'GET', url: '/api/notifications?limit=2' })).json();
    expect(page1.items).toHaveLength(2);
    const page2 = (
      await as(t.app, alice, { method: 'GET', url: `/api/notifications?limit=2&cursor=${page1.nextCursor}` })
    ).json();
    expect(page2.items).toHaveLength(1);
    expect(page2.nextCursor).toBeNull();
  });

  it("marks all of a user's notifications read, and only theirs", async () => {
    const frank = await signUp(t.app);
    const his = await claimMeter(t.app, frank, await locationOf(t.app, frank, 'UTC'));
    await alertOnVoltage(t.app, frank, his);
    const at = Date.parse('2026-06-01T14:00:00Z');
    await t.app.alerts.evaluate({ deviceKey: his.deviceKey, ts: at, values: { vave1: 190 } });
    await t.app.alerts.evaluate({ deviceKey: his.deviceKey, ts: at + 60_000, values: { vave1: 230 } });
    const unread = async (who: Account) =>
      (
        (await as(t.app, who, { method: 'GET', url: '/api/notifications' })).json().items as {
          read: boolean;
        }[]
      ).filter((n) => !n.read).length;
    expect(await unread(frank)).toBe(2);
    const aliceUnread = await unread(alice);
    expect(aliceUnread).toBeGreaterThan(0);
    expect((await as(t.app, frank, { method: 'POST', url: '/api/notifications/read' })).statusCode).toBe(204);
    expect(await unread(frank)).toBe(0);
    expect(await unread(alice)).toBe(aliceUnread);
    // Nothing left to mark: still fine.
    expect((await as(t.app, frank, { method: 'POST', url: '/api/notifications/read' })).statusCode).toBe(204);
  });

  it('marks a notification read for its owner; another user gets 404', async () => {
    const id = (await notifications(alice, 1)).items[0].id;
    expect((await as(t.app, bob, { method: 'POST', url: `/api/notifications/${id}/read` })).statusCode).toBe(
      404,
    );
    expect(
      (await as(t.app, alice, { method: 'POST', url: `/api/notifications/${id}/read` })).statusCode,
    ).toBe(204);
    const body = await notifications(alice, 1);
    expect(body.items.find((n: { id: number }) => n.id === id).read).toBe(true);
  });
});

describe.each(engines())('alert state shared by two API processes (%s)', (engine) => {
  let t: TestApp;
  let other: FastifyInstance;
  let store: TelemetryStore;
  let alice: Account;
  let meter: Meter;

  beforeAll(async () => {
    store = await createDuckDbStore();
    // Two processes on one metadata store, as behind the broker's shared subscription.
    const alerts = { sharedState: true };
    t = await buildTestApp(engine, { store, liveServices: { alerts }, now: clock });
    other = await buildApp({ store, sql: t.sql, config: TEST_CONFIG, liveServices: { alerts }, now: clock });
    await other.ready();
    alice = await signUp(t.app);
    meter = await claimMeter(t.app, alice, await locationOf(t.app, alice, 'UTC'));
    await alertOnVoltage(t.app, alice, meter);
  });

  afterAll(async () => {
    await other?.close();
    await t?.close();
    await store?.close();
  });

  const kinds = async () =>
    (
      (await as(t.app, alice, { method: 'GET', url: '/api/notifications' })).json().items as {
        kind: string;
      }[]
    )
      .map((n) => n.kind)
      .reverse();

  it('continues one state machine whichever process gets the reading: each alert once', async () => {
    const at = Date.parse('2026-06-01T12:00:00Z');
    const reading = (s: number, vave1: number) => ({
      deviceKey: meter.deviceKey,
      ts: at + s * 1000,
      values: { vave1 },
    });
    const [a, b] = [t.app.alerts, other.alerts];
    await a.evaluate(reading(0, 190));
    // Still low on the other process: the alert is already active there too.
    await b.evaluate(reading(20, 189));
    await a.evaluate(reading(40, 191));
    expect(await kinds()).toEqual(['voltage-drop']);
    await b.evaluate(reading(60, 230));
    expect(await kinds()).toEqual(['voltage-drop', 'voltage-drop-recovery']);
    // Both processes at once with a new drop past the interval: one alert.
    await Promise.all([a.evaluate(reading(120, 190)), b.evaluate(reading(121, 189))]);
    expect(await kinds()).toEqual(['voltage-drop', 'voltage-drop-recovery', 'voltage-drop']);
    // Both processes check for silence: the device is silent once.
    await Promise.all([a.checkSilence(at + 3_600_000), b.checkSilence(at + 3_600_000)]);
    expect((await kinds()).filter((k) => k === 'no-data')).toHaveLength(1);
  });

  it('stores the state once for the readings that arrived while the last was being stored', async () => {
    const bursty = await claimMeter(t.app, alice, await locationOf(t.app, alice, 'UTC'));
    await alertOnVoltage(t.app, alice, bursty);
    const transaction = t.sql.transaction.bind(t.sql);
    let transactions = 0;
    t.sql.transaction = (fn) => {
      transactions++;
      return transaction(fn);
    };
    try {
      const at = Date.parse('2026-06-02T12:00:00Z');
      const before = (await kinds()).length;
      // A meter sending faster than its state is stored: 200 readings, down for the first 100 s.
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          t.app.alerts.evaluate({
            deviceKey: bursty.deviceKey,
            ts: at + i * 1000,
            values: { vave1: i < 100 ? 190 : 230 },
          }),
        ),
      );
      expect((await kinds()).slice(before)).toEqual(['voltage-drop', 'voltage-drop-recovery']);
      expect(transactions).toBeLessThanOrEqual(2);
    } finally {
      t.sql.transaction = transaction;
    }
  });

  it('skips the oldest waiting readings rather than hold an ever-growing queue while the store stalls', async () => {
    const stalled = await claimMeter(t.app, alice, await locationOf(t.app, alice, 'UTC'));
    await alertOnVoltage(t.app, alice, stalled);
    const transaction = t.sql.transaction.bind(t.sql);
    let thaw = () => {};
    const frozen = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    t.sql.transaction = async (fn) => {
      await frozen;
      return transaction(fn);
    };
    try {
      const at = Date.parse('2026-06-03T12:00:00Z');
      const before = (await kinds()).length;
      const reading = (i: number, vave1: number) => ({
        deviceKey: stalled.deviceKey,
        ts: at + i,
        values: { vave1 },
      });
      // The first reading's step waits on the store; behind it, ten readings too many wait, the first
      // ten of them low.
      const all = [t.app.alerts.evaluate(reading(0, 230))];
      await new Promise((r) => setTimeout(r, 20));
      for (let i = 1; i <= MAX_WAITING_READINGS + 10; i++)
        all.push(t.app.alerts.evaluate(reading(i, i <= 10 ? 190 : 230)));
      thaw();
      await Promise.all(all);
      // The low readings were the oldest waiting: skipped, so no alert (and no recovery).
      expect((await kinds()).slice(before)).toEqual([]);
    } finally {
      t.sql.transaction = transaction;
    }
  });
});
