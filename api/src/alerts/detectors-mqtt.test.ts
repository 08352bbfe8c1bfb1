/**
 * The detector alerts from readings meters published over MQTT, on real DuckDB (in memory) and on a real
 * InfluxDB: the embedded broker checking each meter's account, ingest storing the readings and handing the
 * committed ones to the evaluator, the account's webhook received by an HTTP server of the test. The
 * servers' clock is fixed (NOON): the readings are minutes before it.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalLiveSource } from '../hub/live-source.ts';
import { type EmbeddedMeterParts, embeddedMeterAccess } from '../plugins/app/meter-access.ts';
import { type EmbeddedMeters, startEmbeddedMeters } from '../testing/embedded-meters.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

/** 12:00 in Europe/Warsaw (CEST): outside the night silence. */
const NOON = Date.parse('2026-06-10T10:00:00Z');
const SETTLE_MS = 15_000;

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
  status: number;
}

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`detector alerts from MQTT publishes on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let meters: EmbeddedMeters;
    let account: Account;
    let home: number;
    let server: Server;
    let secret: string;
    const parts: EmbeddedMeterParts = {};
    const clients: MqttClient[] = [];
    const hits: Hit[] = [];
    /** Notification ids the webhook server has answered 500 once. */
    const failedOnce = new Set<number>();
    const retryDelays: number[] = [];
    let macs = 0;

    /** Claims a three-phase meter with these notification settings; answers its id and a connected client. */
    async function meter(settings: Record<string, unknown>) {
      const mac = `a0:b1:c5:00:00:${(++macs).toString(16).padStart(2, '0')}`;
      const res = await as(t.app, account, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac, name: `meter ${macs}`, typeCode: 16, locationId: home },
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
        clientId: `kw-detectors-${key}`,
        username: body.mqtt.username,
        password: body.mqtt.password,
        reconnectPeriod: 0,
        connectTimeout: 5000,
      });
      clients.push(client);
      const publish = (ts: number, values: Record<string, number>) =>
        client.publishAsync(`kilowatch/meters/${key}/readings`, JSON.stringify({ ts, values }), { qos: 1 });
      return { id: body.id, publish };
    }

    const notifications = async (deviceId: number) =>
      (
        (await as(t.app, account, { method: 'GET', url: '/api/notifications?limit=100' })).json().items as {
          id: number;
          deviceId: number;
          kind: string;
          phase: number | null;
          value: number | null;
          threshold: number | null;
          at: number;
        }[]
      )
        .filter((n) => n.deviceId === deviceId)
        .reverse();

    /** Waits for a notification of this kind (a sentinel: the device's readings before it were evaluated). */
    const waitFor = (deviceId: number, kind: string) =>
      until(`a ${kind} notification of device ${deviceId}`, async () => {
        const all = await notifications(deviceId);
        return all.some((n) => n.kind === kind) ? all : undefined;
      });

    /** Readings every 10 s from `from`: the phase currents, and a voltage. */
    async function currents(
      m: { publish: (ts: number, v: Record<string, number>) => Promise<unknown> },
      from: number,
      seconds: number[],
      l1: number,
      vave1 = 230,
    ) {
      for (const s of seconds)
        await m.publish(from + s * 1000, { iave1: l1, iave2: 5, iave3: 5, vave1, vave2: 230, vave3: 230 });
    }

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      const live = createLocalLiveSource();
      t = await buildTestApp('pglite', {
        store,
        live,
        now: () => NOON,
        meterAccess: embeddedMeterAccess(parts),
        config: { mqttPublic: { port: 1883, tls: false } },
        liveServices: {
          alerts: {
            // The checks run when the tests call them, with the instant they give.
            silenceCheckMs: 3_600_000,
            webhooks: {
              allowLoopback: true,
              sleep: async (ms) => void retryDelays.push(ms),
            },
          },
        },
      });
      meters = await startEmbeddedMeters({ devices: () => t.app.devices, store, parts, now: () => NOON });
      meters.runtime.bus.onReading((r) => live.publish(r));

      // The webhook's receiver: each notification's first delivery answered 500, the next 200.
      server = createServer((req: IncomingMessage, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          const id = (JSON.parse(body) as { id: number }).id;
          const status = failedOnce.has(id) ? 200 : 500;
          failedOnce.add(id);
          hits.push({ body, signature: req.headers['x-kilowatch-signature'] as string | undefined, status });
          res.writeHead(status).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

      account = await signUp(t.app);
      home = (
        await as(t.app, account, {
          method: 'POST',
          url: '/api/locations',
          payload: { name: 'Home', timezone: 'Europe/Warsaw' },
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
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
    });

    afterAll(async () => {
      for (const c of clients) await c.endAsync().catch(() => {});
      await meters?.stop();
      await t?.close();
      await stop?.();
      await new Promise((r) => server?.close(r));
    });

    it('raises one phase-overload for an overload held 60 s, with its value and threshold, and not again while it holds', async () => {
      const m = await meter({ fuseA: 25, imbalanceShare: null });
      const from = NOON - 10 * 60_000;
      // 24 A on L1 (above 25 A × 90 % = 22.5 A) from 0 s to 120 s, then back to normal with a voltage drop.
      await currents(m, from, [0, 10, 20, 30, 40, 50, 60], 24);
      await currents(m, from, [70, 80, 90, 100, 110, 120], 24.5);
      await currents(m, from, [130], 5, 190);
      const all = await waitFor(m.id, 'voltage-drop');
      expect(all.map((n) => n.kind)).toEqual(['phase-overload', 'voltage-drop']);
      expect(all[0]).toMatchObject({ phase: 1, value: 24, threshold: 22.5, at: from + 60_000 });
    });

    it('raises none for an overload of 30 s', async () => {
      const m = await meter({ fuseA: 25, imbalanceShare: null });
      const from = NOON - 9 * 60_000;
      await currents(m, from, [0, 10, 20, 30], 24);
      await currents(m, from, [40, 50, 60, 70], 5);
      await currents(m, from, [80], 5, 190);
      expect((await waitFor(m.id, 'voltage-drop')).map((n) => n.kind)).toEqual(['voltage-drop']);
    });

    it('raises a phase-imbalance held for the duration (value and threshold in %)', async () => {
      const m = await meter({});
      const from = NOON - 8 * 60_000;
      // 24, 5 and 5 A: (24 − 5) / 11.33 = 168 % of the mean, above the default 50 %.
      await currents(m, from, [0, 10, 20, 30, 40, 50, 60, 70], 24);
      await currents(m, from, [80], 24, 190);
      const all = await waitFor(m.id, 'voltage-drop');
      expect(all.map((n) => n.kind)).toEqual(['phase-imbalance', 'voltage-drop']);
      expect(all[0]).toMatchObject({ phase: null, value: 168, threshold: 50 });
    });

    it('tells nothing while muted: an overload held under mute-all stays untold after it ends', async () => {
      const m = await meter({ fuseA: 25, imbalanceShare: null, muteAll: true });
      const from = NOON - 7 * 60_000;
      const before = t.app.alerts.stats().evaluated;
      await currents(m, from, [0, 10, 20, 30, 40, 50, 60, 70, 80], 24);
      // Once they were all evaluated (muted: nothing told), unmute: the next reading (normal currents, a
      // voltage drop) is told, and the overload that ended under mute is not.
      await until('the muted readings evaluated', async () =>
        t.app.alerts.stats().evaluated >= before + 9 ? true : undefined,
      );
      await t.app.alerts.checkSilence(NOON);
      expect(await notifications(m.id)).toEqual([]);
      const put = await as(t.app, account, {
        method: 'PUT',
        url: `/api/devices/${m.id}/notifications`,
        payload: { ...SETTINGS, muteAll: false },
      });
      // An older client's body (no detector fields): the stored ones are kept.
      expect(put.json()).toMatchObject({ fuseA: 25, imbalanceShare: null, muteAll: false });
      await currents(m, from, [90], 5, 190);
      expect((await waitFor(m.id, 'voltage-drop')).map((n) => n.kind)).toEqual(['voltage-drop']);
    });

    it('finds an offline meter in the periodic check by its last reading: one notification per outage', async () => {
      const m = await meter({ offline: true, offlineFactor: 5 });
      // A reading a minute for five minutes, up to 10 minutes before noon (the last one a voltage drop).
      const from = NOON - 14 * 60_000;
      for (let i = 0; i < 4; i++) await m.publish(from + i * 60_000, { vave1: 230 });
      await m.publish(from + 4 * 60_000, { vave1: 190 });
      await waitFor(m.id, 'voltage-drop');
      const last = from + 4 * 60_000;
      // Four minutes of silence: not yet (offline after 5 × 1 min).
      await t.app.alerts.checkOffline(last + 4 * 60_000);
      expect((await notifications(m.id)).map((n) => n.kind)).toEqual(['voltage-drop']);
      await t.app.alerts.checkOffline(NOON);
      await t.app.alerts.checkOffline(NOON + 60_000);
      const all = await notifications(m.id);
      expect(all.map((n) => n.kind)).toEqual(['voltage-drop', 'meter-offline']);
      expect(all[1]).toMatchObject({ value: 10, threshold: 5, at: NOON });
    });

    it('validates the new settings and the webhook address, naming the field', async () => {
      const m = await meter({});
      const bad = await as(t.app, account, {
        method: 'PUT',
        url: `/api/devices/${m.id}/notifications`,
        payload: { ...SETTINGS, fuseA: 'big' },
      });
      expect(bad.statusCode).toBe(400);
      expect(Object.keys(bad.json().errors)).toEqual(['fuseA']);
      const got = await as(t.app, account, { method: 'GET', url: `/api/devices/${m.id}/notifications` });
      expect(got.json()).toEqual({
        ...SETTINGS,
        fuseA: null,
        overloadShare: 0.9,
        overloadSeconds: 60,
        imbalanceShare: 0.5,
        offline: false,
        offlineFactor: 5,
        baseLoad: false,
        baseLoadShare: 0.3,
        unusual: false,
        unusualShare: 0.5,
        solar: false,
        solarShare: 0.4,
        email: false,
      });
      const hook = await as(t.app, account, {
        method: 'PUT',
        url: '/api/account/webhook',
        payload: { url: 'ftp://example.com/x' },
      });
      expect(hook.statusCode).toBe(400);
      expect(Object.keys(hook.json().errors)).toEqual(['url']);
      // The secret is shown once: not by GET.
      const shown = (await as(t.app, account, { method: 'GET', url: '/api/account/webhook' })).json();
      expect(shown.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hook$/);
      expect(shown.secret).toBeUndefined();
    });

    it('POSTs each notification to the webhook, signed with the secret, and retries a 500', async () => {
      const overload = await until('the phase-overload delivered', async () => {
        const mine = hits.filter((h) => JSON.parse(h.body).kind === 'phase-overload');
        return mine.some((h) => h.status === 200) ? mine : undefined;
      });
      expect(overload.map((h) => h.status)).toEqual([500, 200]);
      for (const h of overload) {
        const expected = `sha256=${createHmac('sha256', secret).update(h.body).digest('hex')}`;
        expect(h.signature).toBe(expected);
      }
      expect(overload[0]!.body).toBe(overload[1]!.body);
      expect(JSON.parse(overload[0]!.body)).toMatchObject({
        type: 'notification',
        kind: 'phase-overload',
        phase: 1,
        value: 24,
        threshold: 22.5,
      });
      // The first retry waits 1 s.
      expect(retryDelays[0]).toBe(1_000);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      expect(metrics).toMatch(/kilowatch_webhook_deliveries_total\{result="delivered"\} [1-9]/);
      expect(metrics).toMatch(/kilowatch_webhook_retries_total [1-9]/);
    });
  });
}
