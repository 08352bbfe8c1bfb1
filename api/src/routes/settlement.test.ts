/**
 * A location's prosumer settlement through `inject`, on real DuckDB (in memory) and on a real InfluxDB: a
 * grid meter that exports in May and imports in June, settled month by month under net-metering and then
 * net-billing against a price series and the location's tariff.
 */
import type { Reading } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { iso } from '../analytics/testing.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
/** 2026-05-01 00:00 in Europe/Warsaw (CEST), and the next two month starts. */
const MAY = Date.parse('2026-04-30T22:00:00Z');
const JUNE = Date.parse('2026-05-31T22:00:00Z');
const JULY = Date.parse('2026-06-30T22:00:00Z');
/** The hours the meter exports (1 kWh each): 10:00–20:00 local on 15 May, priced at 0.40. */
const EXPORTING = Array.from({ length: 10 }, (_, k) => Date.parse('2026-05-15T08:00:00Z') + k * H);
/** One more exporting hour, 12:00 local on 20 May, which the price series leaves out. */
const UNPRICED = Date.parse('2026-05-20T10:00:00Z');
/** Importing hours (1 kWh each): two on the night of 16 May, ten on 10 June. */
const IMPORTING = [
  Date.parse('2026-05-15T22:00:00Z'),
  Date.parse('2026-05-15T23:00:00Z'),
  ...Array.from({ length: 10 }, (_, k) => Date.parse('2026-06-10T08:00:00Z') + k * H),
];

/** Rounds every number to 9 decimals. */
function close<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (_k, v) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v)),
  );
}

let macSeq = 0x5200;

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`prosumer settlement on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let account: Account;
    let home: number;
    let tariffId: number;
    let deviceId: number;

    const putLocation = (settlement?: unknown) =>
      as(t.app, account, {
        method: 'PUT',
        url: `/api/locations/${home}`,
        payload: {
          name: 'Prosumer',
          timezone: 'Europe/Warsaw',
          tariffId,
          ...(settlement ? { settlement } : {}),
        },
      });
    const settlement = (from: number, to: number) =>
      as(t.app, account, {
        method: 'GET',
        url: `/api/locations/${home}/settlement?from=${iso(from)}&to=${iso(to)}`,
      });

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      t = await buildTestApp('pglite', { store, now: () => Date.parse('2026-11-26T09:00:00Z') });
      account = await signUp(t.app);
      home = (
        await as(t.app, account, {
          method: 'POST',
          url: '/api/locations',
          payload: { name: 'Prosumer', timezone: 'Europe/Warsaw' },
        })
      ).json().id;
      tariffId = (
        await as(t.app, account, {
          method: 'POST',
          url: `/api/locations/${home}/tariffs`,
          payload: { name: 'G11', group: 'G11', zone1Price: 0.5, validFrom: '2026-01-01' },
        })
      ).json().id;
      const key = `a0b1c4${(macSeq++).toString(16).padStart(6, '0')}`;
      const claimed = await as(t.app, account, {
        method: 'POST',
        url: '/api/devices',
        payload: { mac: key.match(/../g)!.join(':'), name: 'grid', typeCode: 16, locationId: home },
      });
      expect(claimed.statusCode).toBe(201);
      deviceId = claimed.json().id;
      const billing = await as(t.app, account, {
        method: 'PUT',
        url: `/api/devices/${claimed.json().id}`,
        payload: { name: 'grid', locationId: home, billingStart: '2026-01-01', billingMonths: 1 },
      });
      expect(billing.statusCode).toBe(200);
      // Hourly cumulative counters from 1 May to 1 July.
      const readings: Reading[] = [];
      let imp = 100;
      let exp = 100;
      for (let ts = MAY; ts <= JULY; ts += H) {
        readings.push({ deviceKey: key, ts, values: { eai1: imp, eae1: exp } });
        if (IMPORTING.includes(ts)) imp += 1;
        if (EXPORTING.includes(ts) || ts === UNPRICED) exp += 1;
      }
      await store.write(readings);
      await store.refreshRollups(Date.parse('2026-11-20T00:00:00Z'));
      const prices = await as(t.app, account, {
        method: 'PUT',
        url: `/api/locations/${home}/prices`,
        payload: { prices: EXPORTING.map((s) => ({ start: iso(s), price: 0.4 })) },
      });
      expect(prices.statusCode).toBe(200);
    }, 120_000);

    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    it('answers 409 while the location has no settlement, and 400 naming a missing installed power', async () => {
      const none = await settlement(MAY, JULY);
      expect(none.statusCode).toBe(409);
      expect(none.json().message).toMatch(/no prosumer settlement/);
      const bad = await putLocation({ scheme: 'net-metering', since: '2026-05-01' });
      expect(bad.statusCode).toBe(400);
      expect(Object.keys(bad.json().errors)).toEqual(['settlement.installedKw']);
      const badScheme = await putLocation({ scheme: 'feed-in', since: '2026-05-01' });
      expect(badScheme.statusCode).toBe(400);
      expect((await settlement(MAY, JULY)).statusCode).toBe(409);
    });

    it('banks 0.8 of May’s export under net-metering and draws June’s import from it', async () => {
      const put = await putLocation({ scheme: 'net-metering', installedKw: 6, since: '2026-05-01' });
      expect(put.statusCode).toBe(200);
      expect(put.json().settlement).toEqual({ scheme: 'net-metering', installedKw: 6, since: '2026-05-01' });
      // A later edit that leaves the settlement out keeps it.
      expect((await putLocation()).json().settlement.scheme).toBe('net-metering');

      const res = await settlement(MAY, JULY);
      expect(res.statusCode).toBe(200);
      const body = close(res.json());
      expect(body).toMatchObject({
        scheme: 'net-metering',
        ratio: 0.8,
        unit: 'kWh',
        step: '1h',
        since: '2026-05-01',
      });
      // May: 11 kWh out (8.8 banked), 2 in; June: 10 in, 6.8 of them drawn from May's credit.
      expect(body.periods).toEqual([
        {
          period: { start: iso(MAY), end: iso(JUNE) },
          scheme: 'net-metering',
          credited: 8.8,
          drawable: 2,
          used: 2,
          payable: 0,
          expired: 0,
          left: 6.8,
          expiring: 0,
        },
        {
          period: { start: iso(JUNE), end: iso(JULY) },
          scheme: 'net-metering',
          credited: 0,
          drawable: 10,
          used: 6.8,
          payable: 3.2,
          expired: 0,
          left: 0,
          expiring: 0,
        },
      ]);
      // Asked for June alone, May's credit still comes in.
      const june = close((await settlement(JUNE, JULY)).json());
      expect(june.periods).toHaveLength(1);
      expect(june.periods[0]).toMatchObject({ used: 6.8, payable: 3.2 });
    });

    it('values each exporting hour at its price under net-billing, names the unpriced one, offsets the energy cost', async () => {
      const put = await putLocation({ scheme: 'net-billing', since: '2026-05-01' });
      expect(put.json().settlement).toEqual({
        scheme: 'net-billing',
        installedKw: null,
        since: '2026-05-01',
      });
      const body = close((await settlement(MAY, JULY)).json());
      expect(body).toMatchObject({
        scheme: 'net-billing',
        ratio: null,
        unit: 'PLN',
        unpriced: [iso(UNPRICED)],
      });
      // May: 10 kWh × 0.40 = 4.00 credited, 2 kWh × 0.50 = 1.00 of energy drawn; June: 5.00 of energy, 3.00 drawn.
      expect(
        body.periods.map((p: Record<string, number>) => [p.credited, p.drawable, p.used, p.payable, p.left]),
      ).toEqual([
        [4, 1, 1, 0, 3],
        [0, 5, 3, 2, 0],
      ]);
    });

    it('prices a dynamic tariff at each hour’s market price plus its own, and names the hours without one', async () => {
      const dynamic = await as(t.app, account, {
        method: 'POST',
        url: `/api/locations/${home}/tariffs`,
        payload: { name: 'Spot', group: 'dynamic', zone1Price: 0.1, fixedPrice: 5, validFrom: '2026-01-01' },
      });
      expect(dynamic.statusCode).toBe(201);
      const range = `deviceId=${deviceId}&from=${iso(MAY)}&to=${iso(JULY)}`;
      const stats = () =>
        as(t.app, account, { method: 'GET', url: `/api/tariffs/${dynamic.json().id}/stats?${range}` });
      const compare = () => as(t.app, account, { method: 'GET', url: `/api/tariffs/compare?${range}` });

      // The series prices only the exporting hours: every importing hour is named, none is priced at zero.
      const unpricedStats = close((await stats()).json());
      expect(unpricedStats.unpriced).toEqual(IMPORTING.map(iso));
      expect(unpricedStats.total).toEqual({ energy: 0, cost: 10 });
      const uncovered = (await compare()).json();
      expect(uncovered.dynamic).toEqual({ covered: false, unpriced: IMPORTING.map(iso) });
      expect(uncovered.groups.map((g: { group: string }) => g.group)).not.toContain('dynamic');
      expect(uncovered.groups).toHaveLength(6);

      // Prices for the importing hours: 0.30 at night on 16 May, 0.20 on 10 June.
      const put = await as(t.app, account, {
        method: 'PUT',
        url: `/api/locations/${home}/prices`,
        payload: { prices: IMPORTING.map((s, k) => ({ start: iso(s), price: k < 2 ? 0.3 : 0.2 })) },
      });
      expect(put.statusCode).toBe(200);
      try {
        const priced = close((await stats()).json());
        expect(priced.unpriced).toEqual([]);
        // May: 2 kWh × (0.30 + 0.10) + 5 fixed; June: 10 kWh × (0.20 + 0.10) + 5 fixed.
        expect(
          priced.months.map((m: { month: string; energy: number; cost: number }) => [
            m.month,
            m.energy,
            m.cost,
          ]),
        ).toEqual([
          ['2026-05', 2, 5.8],
          ['2026-06', 10, 8],
        ]);
        expect(priced.total).toEqual({ energy: 12, cost: 13.8 });
        const covered = close((await compare()).json());
        expect(covered.dynamic).toEqual({ covered: true, unpriced: [] });
        const spot = covered.groups.find((g: { group: string }) => g.group === 'dynamic');
        // The user's own dynamic tariff prices the group: 0.8 + 3.0 of energy, 2 × 5 fixed.
        expect(spot).toMatchObject({ energy: 12, cost: 13.8 });
        expect(covered.groups).toHaveLength(7);
      } finally {
        const del = await as(t.app, account, {
          method: 'DELETE',
          url: `/api/locations/${home}/prices?from=${iso(IMPORTING[0]!)}&to=${iso(IMPORTING[1]! + H)}`,
        });
        expect(del.statusCode).toBe(204);
        await as(t.app, account, {
          method: 'DELETE',
          url: `/api/locations/${home}/prices?from=${iso(JUNE)}&to=${iso(JULY)}`,
        });
      }
    });
  });
}
