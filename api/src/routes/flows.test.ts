/**
 * A location's energy flows through `inject`, on real DuckDB (in memory) and on a real InfluxDB, with known
 * counters: a June day with PV, a battery and a sub-meter, and a spring DST day with a sub-meter reading more
 * than the home.
 */
import { MESSAGES, type Reading } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../analytics/testing.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
/** 2026-06-10 00:00 in Europe/Warsaw (CEST). */
const JUNE = Date.parse('2026-06-09T22:00:00Z');
/** 2026-03-29 00:00 CET and the next midnight, CEST: 23 hours. */
const SPRING = Date.parse('2026-03-28T23:00:00Z');
const SPRING_END = Date.parse('2026-03-29T22:00:00Z');

/** Rounds every number to 9 decimals (sums of tenths are not exact in binary). */
function close<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (_k, v) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v)),
  );
}

let macSeq = 0x4200;

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`location energy flows on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let account: Account;
    let home: number;
    let spring: number;
    const ids: Record<string, number> = {};

    async function place(name: string): Promise<number> {
      const res = await as(t.app, account, {
        method: 'POST',
        url: '/api/locations',
        payload: { name, timezone: 'Europe/Warsaw' },
      });
      return res.json().id;
    }
    async function device(name: string, locationId: number, typeCode: number, role?: string) {
      const key = `a0b1c3${(macSeq++).toString(16).padStart(6, '0')}`;
      const res = await as(t.app, account, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac: key.match(/../g)!.join(':'), name, typeCode, locationId, ...(role ? { role } : {}) },
      });
      if (res.statusCode !== 201) throw new Error(`claim: ${res.statusCode} ${res.body}`);
      ids[name] = res.json().id;
      return key;
    }
    /** Hourly cumulative counters from `from` for `hours` hours: `perHour(h)` gives each hour's kWh per counter. */
    function hourly(
      deviceKey: string,
      from: number,
      hours: number,
      perHour: (h: number) => Record<string, number>,
    ): Reading[] {
      const total: Record<string, number> = { ...perHour(0) };
      for (const k of Object.keys(total)) total[k] = 100;
      const out: Reading[] = [{ deviceKey, ts: from, values: { ...total } }];
      for (let h = 0; h < hours; h++) {
        for (const [k, v] of Object.entries(perHour(h))) total[k] = total[k]! + v;
        out.push({ deviceKey, ts: from + (h + 1) * H, values: { ...total } });
      }
      return out;
    }

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      t = await buildTestApp('pglite', { store, now: () => Date.parse('2026-11-26T09:00:00Z') });
      account = await signUp(t.app);
      home = await place('Home');
      spring = await place('Spring');
      const tariff = await as(t.app, account, {
        method: 'POST',
        url: `/api/locations/${home}/tariffs`,
        payload: { name: 'G11', group: 'G11', zone1Price: 0.5, zone2Price: 0.5, validFrom: '2026-01-01' },
      });
      await as(t.app, account, {
        method: 'PUT',
        url: `/api/locations/${home}`,
        payload: { name: 'Home', timezone: 'Europe/Warsaw', tariffId: tariff.json().id },
      });
      const sun = (h: number) => h >= 6 && h < 20;
      const grid = await device('grid', home, 16);
      const pv = await device('pv', home, 10);
      const battery = await device('battery', home, 1, 'storage');
      const sub = await device('sub', home, 2);
      const springGrid = await device('spring grid', spring, 13);
      const springSub = await device('spring sub', spring, 2);
      await store.write([
        // Night: 1 kWh an hour from the grid. Day: PV 3, of which 1 to the home, 0.5 to the battery, 1.5 out.
        ...hourly(grid, JUNE, 24, (h) => ({ eai1: sun(h) ? 0 : 1, eae1: sun(h) ? 1.5 : 0 })),
        ...hourly(pv, JUNE, 24, (h) => ({ eae1: sun(h) ? 3 : 0 })),
        ...hourly(battery, JUNE, 24, (h) => ({ eai1: sun(h) ? 0.5 : 0, eae1: 0 })),
        ...hourly(sub, JUNE, 24, () => ({ eai1: 0.5 })),
        // The spring DST day: 1 kWh an hour from the grid, a sub-meter reading 1.5.
        ...hourly(springGrid, SPRING, 23, () => ({ eai1: 1, eae1: 0 })),
        ...hourly(springSub, SPRING, 23, () => ({ eai1: 1.5 })),
      ]);
      await store.refreshRollups(Date.parse('2026-11-20T00:00:00Z'));
    }, 120_000);

    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    const flows = (location: number, from: number, to: number, interval: string) =>
      as(t.app, account, {
        method: 'GET',
        url: `/api/locations/${location}/flows?from=${iso(from)}&to=${iso(to)}&interval=${interval}`,
      });

    it('sums a day with PV, a battery and a sub-meter: energies, shares, flows hour by hour, cost', async () => {
      const res = await flows(home, JUNE, JUNE + 24 * H, '1d');
      expect(res.statusCode).toBe(200);
      const day = close(res.json());
      expect(day).toMatchObject({
        locationId: home,
        interval: '1d',
        tz: 'Europe/Warsaw',
        step: '1h',
        unit: 'kWh',
        t: [iso(JUNE)],
        import: [10],
        export: [21],
        production: [42],
        charge: [7],
        discharge: [0],
        consumption: [24],
        subMeters: [12],
        untracked: [12],
        selfConsumption: [0.5],
        inconsistent: [false],
        cost: { import: [5], exportValue: [null], currency: 'PLN', unpriced: expect.any(Array) },
        roles: {
          [ids.grid!]: 'grid',
          [ids.pv!]: 'production',
          [ids.battery!]: 'storage',
          [ids.sub!]: 'consumer',
        },
        devices: { [ids.grid!]: [-11], [ids.pv!]: [42], [ids.battery!]: [-7], [ids.sub!]: [12] },
      });
      // Answers carry six decimals.
      expect(day.selfSufficiency[0]).toBeCloseTo(1 - 10 / 24, 5);
      expect(day.flows).toEqual({
        productionToHome: [14],
        productionToBattery: [7],
        productionToGrid: [21],
        batteryToHome: [0],
        batteryToGrid: [0],
        gridToHome: [10],
        gridToBattery: [0],
      });
      expect(day.totals).toMatchObject({ consumption: 24, production: 42, inconsistent: false });
      expect(day.totals.cost).toEqual({ import: 5, exportValue: null, currency: 'PLN' });
    });

    it('answers hour by hour: a night hour from the grid, a sunny hour from the PV', async () => {
      const res = await flows(home, JUNE, JUNE + 24 * H, '1h');
      expect(res.statusCode).toBe(200);
      const hours = close(res.json());
      expect(hours.t).toHaveLength(24);
      expect(hours.t[12]).toBe(iso(JUNE + 12 * H));
      expect(hours.consumption.every((h: number) => h === 1)).toBe(true);
      expect([hours.flows.gridToHome[2], hours.flows.productionToHome[2]]).toEqual([1, 0]);
      expect([hours.flows.productionToHome[12], hours.flows.productionToBattery[12]]).toEqual([1, 0.5]);
      expect(hours.flows.productionToGrid[12]).toBe(1.5);
      expect([hours.selfSufficiency[2], hours.selfSufficiency[12]]).toEqual([0, 1]);
      expect(hours.totals.consumption).toBe(24);
    });

    it('sums the 23 hours of the spring DST day, and reports a sub-meter reading more than the home', async () => {
      const res = await flows(spring, SPRING, SPRING_END, '1d');
      expect(res.statusCode).toBe(200);
      const day = close(res.json());
      expect(day.t).toEqual([iso(SPRING)]);
      expect(day).toMatchObject({
        consumption: [23],
        subMeters: [34.5],
        untracked: [-11.5],
        inconsistent: [true],
        production: [0],
        cost: { import: [null], currency: null },
      });
      expect(day.totals.inconsistent).toBe(true);
      const hours = (await flows(spring, SPRING, SPRING_END, '1h')).json();
      expect(hours.t).toHaveLength(23);
    });

    it('values the net export at the location’s prices, quarter prices averaged, an hour without one named', async () => {
      const lines = ['start,price'];
      for (let q = 0; q < 4; q++) lines.push(`${iso(JUNE + 6 * H + q * 15 * 60_000)},${(q + 1) / 10}`);
      for (let h = 7; h < 19; h++) lines.push(`${iso(JUNE + h * H)},0.2`);
      const put = await as(t.app, account, {
        method: 'PUT',
        url: `/api/locations/${home}/prices`,
        payload: lines.join('\n'),
        headers: { 'content-type': 'text/csv' },
      });
      expect(put.json()).toEqual({ stored: 16, held: 16 });
      const day = close((await flows(home, JUNE, JUNE + 24 * H, '1d')).json());
      // 12 hours × 1.5 kWh × 0.2, and 1.5 kWh at the mean of 0.1–0.4; 19:00–20:00 exported without a price.
      expect(day.cost).toMatchObject({ exportValue: [3.975], unpriced: [iso(JUNE + 19 * H)] });
      expect(day.totals.cost.exportValue).toBe(3.975);
      const hours = close((await flows(home, JUNE, JUNE + 24 * H, '1h')).json());
      expect(hours.cost.exportValue.slice(5, 8)).toEqual([null, 0.375, 0.3]);
      expect(hours.cost.exportValue[19]).toBeNull();
    });

    it('refuses someone else’s location, a bad interval and a range too long', async () => {
      const stranger = await signUp(t.app);
      const foreign = await as(t.app, stranger, {
        method: 'GET',
        url: `/api/locations/${home}/flows?from=${iso(JUNE)}&to=${iso(JUNE + H)}`,
      });
      expect(foreign.statusCode).toBe(404);
      expect((await flows(home, JUNE, JUNE + H, 'week')).statusCode).toBe(400);
      const long = await flows(home, JUNE - 5 * 365 * 24 * H, JUNE, '15m');
      expect(long.statusCode).toBe(400);
      expect(long.json().message).toBe(MESSAGES.rangeTooLong);
      // A century by month is few intervals but too many hours to allocate.
      const century = await flows(
        home,
        Date.parse('1971-01-01T00:00:00Z'),
        Date.parse('2099-01-01T00:00:00Z'),
        '1mo',
      );
      expect(century.statusCode).toBe(400);
      expect(century.json().message).toBe(MESSAGES.rangeTooLong);
      // Ten years by month are taken.
      expect(
        (await flows(home, Date.parse('2017-01-01T00:00:00Z'), Date.parse('2027-01-01T00:00:00Z'), '1mo'))
          .statusCode,
      ).toBe(200);
    });
  });
}
