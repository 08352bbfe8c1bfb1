/**
 * A location's energy flows from readings its meters published over MQTT, on real DuckDB (in memory) and on
 * a real InfluxDB: the API, the embedded broker checking each meter's account, and ingest with its rollup
 * scheduler, as the all-in-one deployment runs them. Four meters of one home (grid, PV, battery, a
 * sub-meter) publish their counters for four hours of a June day in Europe/Warsaw with their device
 * credentials; the flows answer, hour by hour and for the day, is what the counters give by hand.
 */
import type { TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../analytics/testing.ts';
import { type EmbeddedMeterParts, embeddedMeterAccess } from '../plugins/app/meter-access.ts';
import { type EmbeddedMeters, startEmbeddedMeters } from '../testing/embedded-meters.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
/** 2026-06-10 00:00 in Europe/Warsaw (CEST, UTC+2) and the next midnight. */
const DAY = Date.parse('2026-06-09T22:00:00Z');
const DAY_END = DAY + 24 * H;
/** 10:00 local: the meters' first readings; the last is at 14:00. */
const FROM = DAY + 10 * H;
const HOURS = 4;
const TO = FROM + HOURS * H;
/**
 * The clock of the API and of ingest (readings from its future are refused, its rollups close by it): the
 * next morning, whatever the machine's date.
 */
const NOW = Date.parse('2026-06-11T07:00:00Z');
/** How long the stored readings and their rollups may take to show in the API's answers. */
const SETTLE_MS = 15_000;

/**
 * Each meter's energy per hour (kWh), 10:00–14:00. Grid: import I, export E; PV: production P (its
 * export); battery: charge C (its import), discharge D (its export); sub-meter: S (its import).
 */
const PER_HOUR = {
  grid: { eai1: [0.5, 0, 0, 1], eae1: [0, 1, 2, 0] },
  pv: { eae1: [3, 4, 4, 1] },
  battery: { eai1: [1.5, 0, 1, 0], eae1: [0, 0, 0, 2] },
  sub: { eai1: [0.5, 1, 0.25, 1.5] },
} as const;
/** The registers at 10:00: meters that have been counting for a while. */
const START: Record<keyof typeof PER_HOUR, Record<string, number>> = {
  grid: { eai1: 4200.25, eae1: 1310.5 },
  pv: { eae1: 8000 },
  battery: { eai1: 300, eae1: 275.75 },
  sub: { eai1: 900 },
};

/** The register values of a meter at 10:00 + h hours (h = 0..4). */
function registers(name: keyof typeof PER_HOUR, h: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [counter, perHour] of Object.entries(PER_HOUR[name])) {
    out[counter] = START[name][counter]! + perHour.slice(0, h).reduce((a: number, b: number) => a + b, 0);
  }
  return out;
}

/** When a read answered by the API meets `done`; fails after `SETTLE_MS`, naming what it waited for. */
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + SETTLE_MS;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`not within ${SETTLE_MS / 1000} s: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`location energy flows from MQTT publishes on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let embedded: EmbeddedMeters;
    let account: Account;
    let home: number;
    const parts: EmbeddedMeterParts = {};
    const ids: Record<string, number> = {};
    const meters: MqttClient[] = [];

    /** Claims a meter into the home with its role; answers its device key and MQTT account. */
    async function claim(name: string, mac: string, typeCode: number, role: string) {
      const res = await as(t.app, account, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac, name, typeCode, locationId: home, role },
      });
      if (res.statusCode !== 201) throw new Error(`claim ${name}: ${res.statusCode} ${res.body}`);
      const body = res.json() as {
        id: number;
        role: string;
        mqtt: { username: string; password: string; topics: { native: string } };
      };
      expect(body.role).toBe(role);
      ids[name] = body.id;
      return { key: mac.replaceAll(':', ''), ...body.mqtt };
    }

    /** Connects as the meter does: its own account, a client id of its own. */
    async function connect(key: string, username: string, password: string): Promise<MqttClient> {
      const client = await mqtt.connectAsync(embedded.broker.url, {
        clientId: `kw-flows-${key}`,
        username,
        password,
        reconnectPeriod: 0,
        connectTimeout: 5000,
      });
      meters.push(client);
      return client;
    }

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      t = await buildTestApp('pglite', {
        store,
        now: () => NOW,
        meterAccess: embeddedMeterAccess(parts),
        config: { mqttPublic: { port: 1883, tls: false } },
      });
      embedded = await startEmbeddedMeters({
        devices: () => t.app.devices,
        store,
        parts,
        now: () => NOW,
        // The scheduler refreshes the rollups the flows are read from, as in a deployment (there every 10 s).
        rollupIntervalMs: 50,
      });
      account = await signUp(t.app);
      const created = await as(t.app, account, {
        method: 'POST',
        url: '/api/locations',
        payload: { name: 'Home', timezone: 'Europe/Warsaw' },
      });
      home = created.json().id;

      const grid = await claim('grid', 'a0:b1:c4:00:00:11', 16, 'grid');
      const pv = await claim('pv', 'a0:b1:c4:00:00:22', 10, 'production');
      const battery = await claim('battery', 'a0:b1:c4:00:00:33', 1, 'storage');
      const sub = await claim('sub', 'a0:b1:c4:00:00:44', 2, 'consumer');
      for (const m of [grid, pv, battery, sub])
        expect(m.topics.native).toBe(`kilowatch/meters/${m.key}/readings`);

      // Each meter publishes on its native topic at QoS 1, in its own way: the grid meter one reading a
      // message with a voltage and a sequence number, the inverter ISO timestamps, the battery its first
      // three hours as one array (a backlog after a reconnect) and then one a message.
      const publish = (client: MqttClient, key: string, payload: unknown) =>
        client.publishAsync(`kilowatch/meters/${key}/readings`, JSON.stringify(payload), { qos: 1 });
      const at = (h: number) => FROM + h * H;
      const gridMeter = await connect(grid.key, grid.username, grid.password);
      const pvMeter = await connect(pv.key, pv.username, pv.password);
      const batteryMeter = await connect(battery.key, battery.username, battery.password);
      const subMeter = await connect(sub.key, sub.username, sub.password);
      await Promise.all([
        (async () => {
          for (let h = 0; h <= HOURS; h++)
            await publish(gridMeter, grid.key, {
              ts: at(h),
              seq: h + 1,
              values: { ...registers('grid', h), vave1: 231.5 },
            });
        })(),
        (async () => {
          for (let h = 0; h <= HOURS; h++)
            await publish(pvMeter, pv.key, { ts: new Date(at(h)).toISOString(), values: registers('pv', h) });
        })(),
        (async () => {
          await publish(
            batteryMeter,
            battery.key,
            [0, 1, 2].map((h) => ({ ts: at(h), values: registers('battery', h) })),
          );
          for (let h = 3; h <= HOURS; h++)
            await publish(batteryMeter, battery.key, { ts: at(h), values: registers('battery', h) });
        })(),
        (async () => {
          for (let h = 0; h <= HOURS; h++)
            await publish(subMeter, sub.key, { ts: at(h), values: registers('sub', h) });
        })(),
      ]);

      // Stored: every device's five readings in its data log, and its hours in its energy (from the
      // rollups, once the scheduler has refreshed them).
      for (const name of ['grid', 'pv', 'battery', 'sub']) {
        const id = ids[name]!;
        await until(`the ${name} meter's five readings in its data log`, async () => {
          const res = await as(t.app, account, {
            method: 'GET',
            url: `/api/devices/${id}/readings?from=${iso(FROM)}&to=${iso(TO + 1000)}&limit=100`,
          });
          return res.statusCode === 200 && res.json().items.length === HOURS + 1;
        });
        await until(`the ${name} meter's ${HOURS} hours of energy`, async () => {
          const res = await as(t.app, account, {
            method: 'GET',
            url: `/api/devices/${id}/energy?from=${iso(FROM)}&to=${iso(TO)}&interval=1h`,
          });
          if (res.statusCode !== 200) return false;
          const e = res.json() as { t: number[]; import: (number | null)[]; export: (number | null)[] };
          return (
            e.t.length === HOURS &&
            e.t.every((_, i) => (e.import[i] ?? null) !== null || (e.export[i] ?? null) !== null)
          );
        });
      }
      // Nothing was refused on the way.
      expect(embedded.runtime.deadLetters()).toEqual([]);
      for (const id of Object.values(ids)) {
        const conn = await as(t.app, account, { method: 'GET', url: `/api/devices/${id}/connection` });
        expect(conn.json()).toMatchObject({ connected: true, lastReadingAt: TO });
        expect(conn.json().lastRejection).toBeUndefined();
      }
    });

    afterAll(async () => {
      for (const m of meters) await m.endAsync().catch(() => {});
      await embedded?.stop();
      await t?.close();
      await stop?.();
    });

    const flows = (from: number, to: number, interval: string) =>
      as(t.app, account, {
        method: 'GET',
        url: `/api/locations/${home}/flows?from=${iso(from)}&to=${iso(to)}&interval=${interval}`,
      });

    it('answers each hour with the energies and shares the counters give: H = I + P − E − C + D', async () => {
      const res = await flows(FROM, TO, '1h');
      expect(res.statusCode).toBe(200);
      const hours = res.json();
      expect(hours).toMatchObject({
        locationId: home,
        interval: '1h',
        tz: 'Europe/Warsaw',
        step: '1h',
        unit: 'kWh',
        t: [0, 1, 2, 3].map((h) => iso(FROM + h * H)),
        roles: {
          [ids.grid!]: 'grid',
          [ids.pv!]: 'production',
          [ids.battery!]: 'storage',
          [ids.sub!]: 'consumer',
        },
      });
      // 10–11: PV 3 feeds the home 2 and the battery 1, the grid the battery's other 0.5.
      // 11–12: PV 4, 1 exported. 12–13: PV 4, 2 exported, 1 charged.
      // 13–14: PV 1, the battery 2 and the grid 1 into the home.
      expect({
        import: hours.import,
        export: hours.export,
        production: hours.production,
        charge: hours.charge,
        discharge: hours.discharge,
        consumption: hours.consumption,
        subMeters: hours.subMeters,
        untracked: hours.untracked,
        selfConsumption: hours.selfConsumption,
        selfSufficiency: hours.selfSufficiency,
        inconsistent: hours.inconsistent,
      }).toEqual({
        import: [0.5, 0, 0, 1],
        export: [0, 1, 2, 0],
        production: [3, 4, 4, 1],
        charge: [1.5, 0, 1, 0],
        discharge: [0, 0, 0, 2],
        // 0.5 + 3 − 0 − 1.5 + 0, 0 + 4 − 1 − 0 + 0, 0 + 4 − 2 − 1 + 0, 1 + 1 − 0 − 0 + 2
        consumption: [2, 3, 1, 4],
        subMeters: [0.5, 1, 0.25, 1.5],
        untracked: [1.5, 2, 0.75, 2.5],
        // (P − E) / P: 3/3, 3/4, 2/4, 1/1; 1 − I / H: 1 − 0.5/2, 1, 1, 1 − 1/4
        selfConsumption: [1, 0.75, 0.5, 1],
        selfSufficiency: [0.75, 1, 1, 0.75],
        inconsistent: [false, false, false, false],
      });
      expect(hours.flows).toEqual({
        productionToHome: [2, 3, 1, 1],
        productionToBattery: [1, 0, 1, 0],
        productionToGrid: [0, 1, 2, 0],
        batteryToHome: [0, 0, 0, 2],
        batteryToGrid: [0, 0, 0, 0],
        gridToHome: [0, 0, 0, 1],
        gridToBattery: [0.5, 0, 0, 0],
      });
      // What each device adds in its role: I − E, P, D − C, S.
      expect(hours.devices).toEqual({
        [ids.grid!]: [0.5, -1, -2, 1],
        [ids.pv!]: [3, 4, 4, 1],
        [ids.battery!]: [-1.5, 0, -1, 2],
        [ids.sub!]: [0.5, 1, 0.25, 1.5],
      });
      expect(hours.totals).toMatchObject({ consumption: 10, selfConsumption: 0.75, selfSufficiency: 0.85 });
    });

    it('sums the local day: the same energies, shares from the day’s totals', async () => {
      const res = await flows(DAY, DAY_END, '1d');
      expect(res.statusCode).toBe(200);
      const day = res.json();
      const totals = {
        import: 1.5,
        export: 3,
        production: 12,
        charge: 2.5,
        discharge: 2,
        // 1.5 + 12 − 3 − 2.5 + 2
        consumption: 10,
        subMeters: 3.25,
        untracked: 6.75,
        // (12 − 3) / 12 and 1 − 1.5 / 10
        selfConsumption: 0.75,
        selfSufficiency: 0.85,
        inconsistent: false,
      };
      expect(day).toMatchObject({
        interval: '1d',
        tz: 'Europe/Warsaw',
        step: '1h',
        t: [iso(DAY)],
        ...Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, [v]])),
        devices: { [ids.grid!]: [-1.5], [ids.pv!]: [12], [ids.battery!]: [-0.5], [ids.sub!]: [3.25] },
        flows: {
          productionToHome: [7],
          productionToBattery: [2],
          productionToGrid: [3],
          batteryToHome: [2],
          batteryToGrid: [0],
          gridToHome: [1],
          gridToBattery: [0.5],
        },
      });
      expect(day.totals).toMatchObject(totals);
      // Hour by hour over the day: buckets are (start, end], so 09:00–10:00 holds the first readings and
      // nothing before them (0); the hours holding no grid reading leave import and export unknown.
      const hours = (await flows(DAY, DAY_END, '1h')).json();
      expect(hours.t).toHaveLength(24);
      const unknown = (n: number) => new Array(n).fill(null);
      expect(hours.import).toEqual([...unknown(9), 0, 0.5, 0, 0, 1, ...unknown(10)]);
      expect(hours.export).toEqual([...unknown(9), 0, 0, 1, 2, 0, ...unknown(10)]);
      expect(hours.totals).toMatchObject(totals);
    });
  });
}
