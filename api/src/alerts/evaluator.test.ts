/** Alerts on the embedded path: live readings → core's state machine → stored notifications, per user. */
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, locationOf, type Meter } from '../analytics/testing.ts';
import { createLocalLiveSource } from '../hub/live-source.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

describe('alert evaluator', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let alice: Account;
  let bob: Account;
  let meter: Meter;
  const live = createLocalLiveSource();

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, live });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    meter = await claimMeter(t.app, alice, await locationOf(t.app, alice, 'UTC'));
    const res = await as(t.app, alice, {
      method: 'PUT',
      url: `/api/devices/${meter.id}/notifications`,
      payload: {
        enabled: true,
        voltageDrop: 207,
        voltageRise: 253,
        totalConsumption: 0,
        disableAtNight: false,
        interval: 1,
        muteAll: false,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
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
    expect(first.items[0]).toMatchObject({ deviceId: meter.id, kind: 'voltage-drop', at, read: false });
    expect(first.items[0].message).toEqual(expect.any(String));
    expect((await as(t.app, bob, { method: 'GET', url: '/api/notifications' })).json().items).toEqual([]);
    // Back above 207 V but inside the hysteresis margin: still active, nothing new.
    await t.app.alerts.evaluate({ deviceKey: meter.deviceKey, ts: at + 60_000, values: { vave1: 208 } });
    expect((await notifications(alice, 1)).items).toHaveLength(1);
    await t.app.alerts.evaluate({ deviceKey: meter.deviceKey, ts: at + 120_000, values: { vave1: 230 } });
    const after = await notifications(alice, 2);
    expect(after.items[0].kind).toBe('voltage-drop-recovery');
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
