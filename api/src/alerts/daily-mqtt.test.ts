/**
 * The daily detector alerts from history meters published over MQTT, on real DuckDB (in memory) and on a
 * real InfluxDB: the embedded broker checking each meter's account, ingest storing the backdated readings,
 * the day judged after it ends in Europe/Warsaw — Sunday 2026-03-29, the spring DST day of 23 hours — at
 * the instant the test gives (the servers' and ingest's clock is the test's), and the notification POSTed,
 * signed, to the account's webhook received by an HTTP server of the test. Then the intraday solar check
 * (solar-live.ts): a PV meter at zero through an hour of daylight while the location's grid meter imports.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { addLocalDays } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalLiveSource } from '../hub/live-source.ts';
import { type EmbeddedMeterParts, embeddedMeterAccess } from '../plugins/app/meter-access.ts';
import { type EmbeddedMeters, startEmbeddedMeters } from '../testing/embedded-meters.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const TZ = 'Europe/Warsaw';
/** The judged day: Sunday 2026-03-29, 00:00 CET (23:00Z the day before) to 00:00 CEST (22:00Z). */
const DAY = Date.parse('2026-03-28T23:00:00Z');
const DAY_END = Date.parse('2026-03-29T22:00:00Z');
/** 07:30 CEST on Monday: the day is over and the night silence too. */
const MORNING = DAY_END + 7.5 * 3_600_000;
const STEP = 15 * 60_000;
const SETTLE_MS = 30_000;

const SETTINGS = {
  enabled: true,
  voltageDrop: 207,
  voltageRise: 253,
  totalConsumption: 0,
  disableAtNight: true,
  interval: 60,
  muteAll: false,
};

async function until<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + SETTLE_MS;
  for (;;) {
    const out = await read();
    if (out !== undefined) return out;
    if (performance.now() > deadline) throw new Error(`not within ${SETTLE_MS / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Hit {
  body: string;
  signature: string | undefined;
}

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`daily detector alerts from MQTT publishes on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let meters: EmbeddedMeters;
    let account: Account;
    let home: number;
    let server: Server;
    let secret: string;
    let now = MORNING;
    const parts: EmbeddedMeterParts = {};
    const clients: MqttClient[] = [];
    const hits: Hit[] = [];
    /** Readings ingest committed, by device key. */
    const committed = new Map<string, number>();
    let macs = 0;

    /** Claims a meter with these notification settings; answers its id, key and a connected client. */
    async function meter(settings: Record<string, unknown>, claim: Record<string, unknown> = {}) {
      const mac = `a0:b1:c7:00:00:${(++macs).toString(16).padStart(2, '0')}`;
      const res = await as(t.app, account, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac, name: `meter ${macs}`, typeCode: 16, locationId: home, ...claim },
      });
      if (res.statusCode !== 201) throw new Error(`claim: ${res.statusCode} ${res.body}`);
      const body = res.json() as { id: number; mqtt: { username: string; password: string } };
      const put = await as(t.app, account, {
        method: 'PUT',
        url: `/api/devices/${body.id}/notifications`,
        payload: { ...SETTINGS, ...settings },
      });
      expect(put.statusCode).toBe(200);
      const key = mac.replaceAll(':', '');
      const client = await mqtt.connectAsync(meters.broker.url, {
        clientId: `kw-daily-${key}`,
        username: body.mqtt.username,
        password: body.mqtt.password,
        reconnectPeriod: 0,
        connectTimeout: 5000,
      });
      clients.push(client);
      /** Publishes the readings a message at a time (a day's worth each, the array form). */
      const publish = async (readings: { ts: number; values: Record<string, number> }[]) => {
        for (let i = 0; i < readings.length; i += 96) {
          await client.publishAsync(
            `kilowatch/meters/${key}/readings`,
            JSON.stringify(readings.slice(i, i + 96)),
            { qos: 1 },
          );
        }
        await until(`the ${readings.length} readings of ${key} committed`, async () =>
          (committed.get(key) ?? 0) >= readings.length ? true : undefined,
        );
      };
      return { id: body.id, key, publish };
    }

    const notifications = async (deviceId: number) =>
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
        .filter((n) => n.deviceId === deviceId)
        .reverse();

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      const live = createLocalLiveSource();
      t = await buildTestApp('pglite', {
        store,
        live,
        now: () => now,
        meterAccess: embeddedMeterAccess(parts),
        config: { mqttPublic: { port: 1883, tls: false } },
        liveServices: {
          alerts: {
            // The checks run when the tests call them, with the instant they give.
            silenceCheckMs: 3_600_000,
            webhooks: { allowLoopback: true, sleep: async () => {} },
          },
        },
      });
      meters = await startEmbeddedMeters({ devices: () => t.app.devices, store, parts, now: () => now });
      meters.runtime.bus.onReading((r) => {
        committed.set(r.deviceKey, (committed.get(r.deviceKey) ?? 0) + 1);
        live.publish(r);
      });

      server = createServer((req: IncomingMessage, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          hits.push({ body, signature: req.headers['x-kilowatch-signature'] as string | undefined });
          res.writeHead(200).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

      account = await signUp(t.app);
      home = (
        await as(t.app, account, {
          method: 'POST',
          url: '/api/locations',
          payload: { name: 'Home', timezone: TZ },
        })
      ).json().id;
      const port = (server.address() as AddressInfo).port;
      const hook = await as(t.app, account, {
        method: 'PUT',
        url: '/api/account/webhook',
        payload: { url: `http://127.0.0.1:${port}/hook` },
      });
      expect(hook.statusCode).toBe(200);
      secret = hook.json().secret;
    });

    afterAll(async () => {
      for (const c of clients) await c.endAsync().catch(() => {});
      await meters?.stop();
      await t?.close();
      await stop?.();
      await new Promise((r) => server?.close(r));
    });

    it('judges six weeks of a counter published over MQTT: one unusual-consumption alert, signed to the webhook', async () => {
      const m = await meter({ unusual: true });
      const quiet = await meter({ unusual: true });
      // 400 W all day (9.6 kWh a 24-hour day) for six weeks, 1,500 W through the judged Sunday (34.5 kWh in
      // its 23 hours); the quiet meter keeps 400 W.
      const history = (judgedPower: number) => {
        const out: { ts: number; values: Record<string, number> }[] = [];
        let kwh = 1000;
        let last: number | undefined;
        for (let ts = addLocalDays(DAY, -43, TZ); ts <= DAY_END; ts += STEP) {
          const power = ts > DAY && ts <= DAY_END ? judgedPower : 400;
          if (last !== undefined) kwh += (power * (ts - last)) / 3_600_000_000;
          last = ts;
          out.push({ ts, values: { eai1: Math.round(kwh * 1000) / 1000 } });
        }
        return out;
      };
      await m.publish(history(1500));
      await quiet.publish(history(400));
      await store.refreshRollups(DAY_END + 60 * 60_000);

      // Two checks at once (as two replicas would): one notification.
      await Promise.all([t.app.alerts.checkDaily(now), t.app.alerts.checkDaily(now)]);
      const all = await notifications(m.id);
      expect(all.map((n) => n.kind)).toEqual(['unusual-consumption']);
      // Six Sundays of 9.6 kWh (no spread): threshold 9.6 × 1.5 = 14.4; the 23-hour Sunday used 34.5.
      expect(all[0]).toMatchObject({ threshold: 14.4, at: DAY });
      expect(all[0]!.value).toBeCloseTo(34.5, 1);
      expect(await notifications(quiet.id)).toEqual([]);

      const hit = await until('the unusual-consumption delivered', async () =>
        hits.find((h) => JSON.parse(h.body).kind === 'unusual-consumption'),
      );
      expect(hit.signature).toBe(`sha256=${createHmac('sha256', secret).update(hit.body).digest('hex')}`);
      expect(JSON.parse(hit.body)).toMatchObject({
        type: 'notification',
        id: all[0]!.id,
        deviceId: m.id,
        kind: 'unusual-consumption',
        at: DAY,
        threshold: 14.4,
      });

      // Judged again later the same day: nothing new, nothing sent again.
      await t.app.alerts.checkDaily(now + 4 * 3_600_000);
      expect((await notifications(m.id)).map((n) => n.kind)).toEqual(['unusual-consumption']);
      expect(hits.filter((h) => JSON.parse(h.body).kind === 'unusual-consumption')).toHaveLength(1);
    });

    it('finds a PV meter at zero for an hour of daylight while the grid imports: one alert per run, signed to the webhook', async () => {
      // Monday 2026-03-30 (CEST, UTC+2): daylight is 09:00–15:00 local, 07:00Z–13:00Z.
      const at = (hhmm: string) => Date.parse(`2026-03-30T${hhmm}:00+02:00`);
      const roof = (
        await as(t.app, account, {
          method: 'POST',
          url: '/api/locations',
          payload: { name: 'Roof', timezone: TZ },
        })
      ).json().id;
      const grid = await meter({}, { locationId: roof, role: 'grid' });
      const pv = await meter({ solar: true }, { locationId: roof, typeCode: 10, role: 'production' });
      // A reading every 5 minutes from 06:00 to 11:30 local: the grid imports 800 W throughout; the PV meter
      // feeds out 2 kW until 09:30, then nothing.
      const series = (power: (ts: number) => number, counter: string) => {
        const out: { ts: number; values: Record<string, number> }[] = [];
        let kwh = 500;
        let last: number | undefined;
        for (let ts = at('06:00'); ts <= at('11:30'); ts += 5 * 60_000) {
          if (last !== undefined) kwh += (power(ts) * (ts - last)) / 3_600_000_000;
          last = ts;
          out.push({ ts, values: { [counter]: Math.round(kwh * 1000) / 1000 } });
        }
        return out;
      };
      now = at('11:31');
      await grid.publish(series(() => 800, 'eai1'));
      await pv.publish(series((ts) => (ts <= at('09:30') ? 2000 : 0), 'eae1'));
      await store.refreshRollups(now);

      // At 10:15 the run is half an hour old: nothing yet.
      await t.app.alerts.checkSolarLive(at('10:15'));
      expect(await notifications(pv.id)).toEqual([]);
      // At 11:00 it has lasted an hour: one alert, dated at the run's start; two checks at once write it once.
      await Promise.all([t.app.alerts.checkSolarLive(at('11:00')), t.app.alerts.checkSolarLive(at('11:00'))]);
      const all = await notifications(pv.id);
      expect(all.map((n) => n.kind)).toEqual(['solar-underperformance']);
      // The quarter 09:30–09:45 is the first at zero (samples at each quarter's end): the run starts at 09:45
      // and reaches its hour at 10:45.
      expect(all[0]).toMatchObject({ at: at('09:45'), value: 60, threshold: 60 });
      expect(all[0]!.message).toMatch(/No solar production for \d+ min in daylight while importing 800 W/);
      expect(await notifications(grid.id)).toEqual([]);

      // The run goes on: not told again.
      await t.app.alerts.checkSolarLive(at('11:30'));
      expect(await notifications(pv.id)).toHaveLength(1);

      const hit = await until('the solar alert delivered', async () =>
        hits.find((h) => JSON.parse(h.body).kind === 'solar-underperformance'),
      );
      expect(hit.signature).toBe(`sha256=${createHmac('sha256', secret).update(hit.body).digest('hex')}`);
      expect(JSON.parse(hit.body)).toMatchObject({ id: all[0]!.id, deviceId: pv.id, threshold: 60 });
    });
  });
}
