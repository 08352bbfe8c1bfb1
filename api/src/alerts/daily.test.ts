/**
 * The daily detector alerts on real DuckDB (in memory) and on a real InfluxDB: weeks of a meter's history
 * written to the store, the day judged after it ends in Europe/Warsaw — Sunday 2026-03-29, the spring DST
 * day of 23 hours — at the instants the test gives (the servers' clock is the test's); the metadata store
 * PGlite, and PostgreSQL when the run has it (the advisory lock and the claimed rows across processes).
 */
import { addLocalDays, localParts, type Reading, startOfLocalDay } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalLiveSource } from '../hub/live-source.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, engines, signUp, type TestApp } from '../testing/helper.ts';

const TZ = 'Europe/Warsaw';
/** The judged day: Sunday 2026-03-29, 00:00 CET (23:00Z the day before) to 00:00 CEST (22:00Z). */
const DAY = Date.parse('2026-03-28T23:00:00Z');
const DAY_END = Date.parse('2026-03-29T22:00:00Z');
const STEP = 15 * 60_000;

const SETTINGS = {
  enabled: true,
  voltageDrop: 207,
  voltageRise: 253,
  totalConsumption: 0,
  disableAtNight: true,
  interval: 60,
  muteAll: false,
};

/** Readings every 15 minutes from `days` local days before the judged day to its end. */
function history(
  deviceKey: string,
  days: number,
  values: (ts: number, judged: boolean) => Record<string, number>,
) {
  const out: Reading[] = [];
  for (let ts = addLocalDays(DAY, -days, TZ); ts <= DAY_END; ts += STEP) {
    out.push({ deviceKey, ts, values: values(ts, ts >= DAY && ts < DAY_END) });
  }
  return out;
}

/** A counter integrating a power (W) over the 15-minute steps, kWh. */
function counter(power: (ts: number, judged: boolean) => number) {
  let kwh = 1000;
  let last: number | undefined;
  return (ts: number, judged: boolean) => {
    if (last !== undefined) kwh += (power(ts, judged) * (ts - last)) / 3_600_000_000;
    last = ts;
    return Math.round(kwh * 1000) / 1000;
  };
}

const hour = (ts: number) => localParts(ts, TZ).hour;

for (const engine of ENGINES)
  for (const metadata of engines()) {
    describe.skipIf(engine.skip !== null)(`daily detector alerts on ${engine.name} and ${metadata}`, () => {
      let t: TestApp;
      let store: TelemetryStore;
      let stop: () => Promise<void>;
      let account: Account;
      let home: number;
      let now = DAY_END + 30 * 60_000;
      let macs = 0;

      async function device(settings: Record<string, unknown>) {
        const mac = `a0:b1:c6:00:00:${(++macs).toString(16).padStart(2, '0')}`;
        const res = await as(t.app, account, {
          method: 'POST',
          url: '/api/devices',
          payload: { mac, name: `meter ${macs}`, typeCode: 16, locationId: home },
        });
        if (res.statusCode !== 201) throw new Error(`claim: ${res.statusCode} ${res.body}`);
        const id = (res.json() as { id: number }).id;
        const put = await as(t.app, account, {
          method: 'PUT',
          url: `/api/devices/${id}/notifications`,
          payload: { ...SETTINGS, ...settings },
        });
        expect(put.statusCode).toBe(200);
        return { id, key: mac.replaceAll(':', '') };
      }

      const notifications = async (deviceId?: number) =>
        (
          (await t.app.notifications.page(account.userId, undefined, 100)).items as {
            id: number;
            deviceId: number;
            kind: string;
            message: string;
            value: number | null;
            threshold: number | null;
            at: number;
          }[]
        )
          .filter((n) => deviceId === undefined || n.deviceId === deviceId)
          .reverse();

      let baseLoad: { id: number; key: string };
      let unusual: { id: number; key: string };
      let solar: { id: number; key: string };
      let muted: { id: number; key: string };

      beforeAll(async () => {
        const opened = await engine.open();
        store = opened.store;
        stop = opened.stop;
        t = await buildTestApp(metadata, {
          store,
          live: createLocalLiveSource(),
          now: () => now,
          liveServices: { alerts: { silenceCheckMs: 3_600_000 } },
        });
        account = await signUp(t.app);
        home = (
          await as(t.app, account, {
            method: 'POST',
            url: '/api/locations',
            payload: { name: 'Home', timezone: TZ },
          })
        ).json().id;

        baseLoad = await device({ baseLoad: true });
        unusual = await device({ unusual: true });
        solar = await device({ solar: true, solarShare: 0.4, email: true });
        muted = await device({ baseLoad: true, unusual: true, muteAll: true });

        // Base load: nights (00:00–05:00 local) at 100 W for four weeks, 200 W in the judged night (a fridge
        // failing open); days at 600 W.
        const fridge = (ts: number, judged: boolean) => ({
          pave1: hour(ts) < 5 ? (judged ? 200 : 100) : 600,
        });
        // Unusual: 400 W all day (9.6 kWh a 24-hour day), 1,500 W through the judged Sunday (34.5 kWh in 23 h).
        const heater = counter((_ts, judged) => (judged ? 1500 : 400));
        // Solar: 3 kW from 09:00 to 15:00 local (18 kWh a day), 500 W on the judged (shaded) day.
        const pv = counter((ts, judged) => (hour(ts) >= 9 && hour(ts) < 15 ? (judged ? 500 : 3000) : 0));
        const readings = [
          ...history(baseLoad.key, 29, fridge),
          ...history(unusual.key, 43, (ts, judged) => ({
            pave1: judged ? 1500 : 400,
            eai1: heater(ts, judged),
          })),
          ...history(solar.key, 22, (ts, judged) => ({ eae1: pv(ts, judged) })),
          ...history(muted.key, 43, (ts, judged) => ({ pave1: hour(ts) < 5 ? (judged ? 900 : 100) : 600 })),
        ];
        for (let i = 0; i < readings.length; i += 5000) await store.write(readings.slice(i, i + 5000));
        await store.refreshRollups(DAY_END + 60 * 60_000);
      });

      afterAll(async () => {
        await t?.close();
        await stop?.();
      });

      it('reads the new settings back and validates them', async () => {
        const got = await as(t.app, account, {
          method: 'GET',
          url: `/api/devices/${solar.id}/notifications`,
        });
        expect(got.json()).toMatchObject({
          baseLoad: false,
          baseLoadShare: 0.3,
          unusual: false,
          unusualShare: 0.5,
          solar: true,
          solarShare: 0.4,
          email: true,
        });
        const bad = await as(t.app, account, {
          method: 'PUT',
          url: `/api/devices/${solar.id}/notifications`,
          payload: { ...SETTINGS, solarShare: 2 },
        });
        expect(bad.statusCode).toBe(400);
        expect(Object.keys(bad.json().errors)).toEqual(['solarShare']);
      });

      it('waits through the night silence, then tells each finding once, about the day', async () => {
        // 00:30 CEST on Monday: the day is over, but alerts are silent at night.
        now = DAY_END + 30 * 60_000;
        await t.app.alerts.checkDaily();
        expect(await notifications()).toEqual([]);

        // 07:30 CEST: the night is over. Two checks at once (as two replicas would) write each one once.
        now = DAY_END + 7.5 * 3_600_000;
        await Promise.all([t.app.alerts.checkDaily(), t.app.alerts.checkDaily()]);
        const all = await notifications();
        expect(all.map((n) => [n.deviceId, n.kind])).toEqual(
          expect.arrayContaining([
            [baseLoad.id, 'base-load-rise'],
            [unusual.id, 'unusual-consumption'],
            [solar.id, 'solar-underperformance'],
          ]),
        );
        expect(all).toHaveLength(3);
        // The muted device's fridge failed too: nothing told.
        expect(await notifications(muted.id)).toEqual([]);

        const [rise] = await notifications(baseLoad.id);
        // 28 nights at 100 W: threshold 130 W; the judged night's 10th percentile is 200 W.
        expect(rise).toMatchObject({ value: 200, threshold: 130, at: DAY });
        expect(rise!.message).toMatch(/Always-on power 200 W/);

        const [day] = await notifications(unusual.id);
        // Six Sundays of 9.6 kWh (no spread): threshold 9.6 × 1.5 = 14.4; the 23-hour Sunday used 34.5.
        expect(day).toMatchObject({ threshold: 14.4, at: DAY });
        expect(day!.value).toBeGreaterThan(34);

        const [low] = await notifications(solar.id);
        // 21 days of 18 kWh: 40 % is 7.2 kWh; the shaded day made 3.
        expect(low).toMatchObject({ value: 3, threshold: 7.2, at: DAY });
        expect(low!.message).toMatch(/2026-03-29/);
        // The solar device has email on: its alert was mailed too, and only its.
        for (let i = 0; i < 200 && t.mails.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
        expect(t.mails.map((m) => m.subject)).toEqual(['Kilowatch: Solar underperformance on meter 3']);
        expect(t.mails[0]!.text).toContain(low!.message);
      });

      it('writes nothing new when the day is judged again, later the same day', async () => {
        const before = await notifications();
        now = DAY_END + 12 * 3_600_000;
        await t.app.alerts.checkDaily();
        now = DAY_END + 23 * 3_600_000;
        await t.app.alerts.checkDaily();
        expect(await notifications()).toEqual(before);
        const { rows } = await t.sql.query<{ n: number }>(
          'select count(*)::integer as n from daily_alert_runs where device_id = $1',
          [baseLoad.id],
        );
        expect(Number(rows[0]!.n)).toBe(1);
      });

      it('judges the next day on its own: a base load still high is the same episode, told once', async () => {
        // Monday 2026-03-30 (24 hours) with the night again at 200 W: no second base-load alert.
        const next = DAY_END;
        const nextEnd = addLocalDays(next, 1, TZ);
        expect(startOfLocalDay(nextEnd - 1, TZ)).toBe(next);
        const more: Reading[] = [];
        for (let ts = next + STEP; ts <= nextEnd; ts += STEP) {
          more.push({ deviceKey: baseLoad.key, ts, values: { pave1: hour(ts) < 5 ? 200 : 600 } });
        }
        await store.write(more);
        await store.refreshRollups(nextEnd + 60 * 60_000);
        now = nextEnd + 8 * 3_600_000;
        await t.app.alerts.checkDaily();
        expect((await notifications(baseLoad.id)).map((n) => n.kind)).toEqual(['base-load-rise']);
        const { rows } = await t.sql.query<{ day: string }>(
          'select day from daily_alert_runs where device_id = $1 order by day',
          [baseLoad.id],
        );
        expect(rows.map((r) => r.day)).toEqual(['2026-03-29', '2026-03-30']);
      });
    });
  }
