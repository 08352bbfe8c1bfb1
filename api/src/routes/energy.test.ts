/**
 * Energy, DST, heatmap and tariff numbers through `inject`, on real DuckDB (in memory) and on a real
 * InfluxDB (influxd on a loopback port), with known data: the same answers from both engines.
 */
import { type Reading, startOfLocalDay, startOfLocalMonth, startOfLocalYear } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, steadyCounter } from '../analytics/testing.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
const WARSAW_SPRING = Date.parse('2026-03-28T23:00:00Z'); // 2026-03-29 00:00 CET
const WARSAW_SPRING_END = Date.parse('2026-03-29T22:00:00Z'); // 2026-03-30 00:00 CEST
const WARSAW_AUTUMN = Date.parse('2026-10-24T22:00:00Z'); // 2026-10-25 00:00 CEST
const WARSAW_AUTUMN_END = Date.parse('2026-10-25T23:00:00Z'); // 2026-10-26 00:00 CET
const H8 = Date.parse('2026-01-12T08:00:00Z');
const PROFILE = Date.parse('2026-01-13T11:00:00Z'); // 12:00 CET

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`analytics numbers on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    /** The app's clock: a test about "now" sets the instant it is about. */
    let now = Date.parse('2026-11-26T09:00:00Z');
    let stop: () => Promise<void>;
    let account: Account;
    const m: Record<string, { id: number; deviceKey: string }> = {};

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      t = await buildTestApp('pglite', { store, now: () => now });
      account = await signUp(t.app);
      const loc = await locationOf(t.app, account);
      for (const name of ['dst', 'resets', 'balance', 'tariff', 'hourly', 'netting', 'profile'])
        m[name] = await claimMeter(t.app, account, loc, name);
      const readings: Reading[] = [
        // 1 kWh every hour around both DST changes, from the day before to the day after.
        ...steadyCounter(m.dst!.deviceKey, 'eai1', WARSAW_SPRING - 24 * H, WARSAW_SPRING_END + 24 * H),
        ...steadyCounter(
          m.dst!.deviceKey,
          'eai1',
          WARSAW_AUTUMN - 24 * H,
          WARSAW_AUTUMN_END + 24 * H,
          1,
          9000,
        ),
        // Thursday 2026-04-30 to Sunday 2026-05-03 (Friday 1 May is a public holiday), 1 kWh an hour.
        ...steadyCounter(
          m.tariff!.deviceKey,
          'eai1',
          Date.parse('2026-04-29T22:00:00Z') - H,
          Date.parse('2026-05-03T22:00:00Z'),
        ),
      ];
      const base = Date.parse('2026-06-01T00:00:00Z');
      const resets: [number, number][] = [
        [0, 100],
        [30, 100.5],
        [60, 101],
        [90, 101.4],
        [120, 0.2], // counter reset: contributes nothing
        [150, 0.7],
        // gap 03:00–05:30: the energy across it lands in the hour the meter reappears
        [330, 2.7],
        [360, 2.695], // jitter: ignored
        [390, 3.2],
      ];
      for (const [min, value] of resets) {
        readings.push({ deviceKey: m.resets!.deviceKey, ts: base + min * 60_000, values: { eai1: value } });
      }
      // Hour 0: phase 1 imports 1.0, phase 2 exports 0.6; hour 1: phase 1 imports 0.2, phase 3 exports 0.5.
      const bal = [
        [0, { eai1: 10, eai2: 20, eai3: 30, eae1: 0, eae2: 5, eae3: 7 }],
        [60, { eai1: 11, eai2: 20, eai3: 30, eae1: 0, eae2: 5.6, eae3: 7 }],
        [120, { eai1: 11.2, eai2: 20, eai3: 30, eae1: 0, eae2: 5.6, eae3: 7.5 }],
      ] as const;
      for (const [min, values] of bal) {
        readings.push({
          deviceKey: m.balance!.deviceKey,
          ts: base - H + min * 60_000 + 59 * 60_000,
          values: { ...values },
        });
      }
      // A meter reporting only on the hour: 100, 101, 103, 106 kWh at 08:00..11:00 UTC.
      [100, 101, 103, 106].forEach((v, i) => {
        readings.push({ deviceKey: m.hourly!.deviceKey, ts: H8 + i * H, values: { eai1: v } });
      });
      // Every minute 08:00..10:00 UTC: L1 imports 1.0 then 0.2 kWh an hour, L2 exports 0.6 then 1.2.
      for (let min = 0; min <= 120; min++) {
        const first = Math.min(min, 60) / 60;
        const second = Math.max(min - 60, 0) / 60;
        readings.push({
          deviceKey: m.netting!.deviceKey,
          ts: H8 + min * 60_000,
          values: { eai1: 300 + first * 1.0 + second * 0.2, eae2: 90 + first * 0.6 + second * 1.2 },
        });
      }
      // A 15-minute profile on Tuesday 2026-01-13 from 12:00 to 14:00 Warsaw time (CET): 1 kWh a quarter,
      // but 10 kWh in the quarter 12:45–13:00, stamped 13:00, the start of G12's midday zone 2.
      for (let q = 0, v = 500; q <= 8; q++) {
        if (q > 0) v += q === 4 ? 10 : 1;
        readings.push({
          deviceKey: m.profile!.deviceKey,
          ts: PROFILE + q * 15 * 60_000,
          values: { eai1: v },
        });
      }
      await store.write(readings);
      await store.refreshRollups(Date.parse('2026-11-20T00:00:00Z'));
    }, 120_000);

    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    const get = (url: string) => as(t.app, account, { method: 'GET', url });

    it('gives 23 hourly buckets on 2026-03-29 and 25 on 2026-10-25 in Europe/Warsaw, each day summing its hours', async () => {
      for (const [from, to, hours] of [
        [WARSAW_SPRING, WARSAW_SPRING_END, 23],
        [WARSAW_AUTUMN, WARSAW_AUTUMN_END, 25],
      ] as const) {
        const res = await get(`/api/devices/${m.dst!.id}/energy?from=${iso(from)}&to=${iso(to)}&interval=1h`);
        expect(res.statusCode, res.body).toBe(200);
        const body = res.json();
        expect(body.t).toHaveLength(hours);
        for (const v of body.import) expect(v).toBeCloseTo(1, 9);
        const day = await get(
          `/api/devices/${m.dst!.id}/energy?from=${iso(from - 24 * H)}&to=${iso(to + 24 * H)}&interval=1d`,
        );
        const d = day.json();
        expect(d.tz).toBe('Europe/Warsaw');
        expect(d.t).toEqual([from - 24 * H, from, to]);
        expect(d.import[1]).toBeCloseTo(hours, 9);
        expect(d.import[2]).toBeCloseTo(24, 9);
      }
    });

    it('puts the energy of a reading on the hour in the hour it closes, from rollups and raw', async () => {
      for (const source of ['', '&source=raw']) {
        const res = await get(
          `/api/devices/${m.hourly!.id}/energy?from=${iso(H8)}&to=${iso(H8 + 3 * H)}&interval=1h${source}`,
        );
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ t: [H8, H8 + H, H8 + 2 * H], import: [1, 2, 3] });
      }
    });

    it('nets the hourly balance by the hour the readings close: [0.4, −1.0], the day −0.6', async () => {
      for (const source of ['', '&source=raw']) {
        const hours = (
          await get(
            `/api/devices/${m.netting!.id}/energy?from=${iso(H8)}&to=${iso(H8 + 2 * H)}&interval=1h${source}`,
          )
        ).json();
        expect(hours).toMatchObject({ import: [1, 0.2], export: [0.6, 1.2], balance: [0.4, -1] });
        const day = (
          await get(
            `/api/devices/${m.netting!.id}/energy?from=${iso(H8)}&to=${iso(H8 + 2 * H)}&interval=1d${source}`,
          )
        ).json();
        expect(day.t).toEqual([Date.parse('2026-01-11T23:00:00Z')]);
        expect(day.balance[0]).toBeCloseTo(-0.6, 9);
      }
    });

    it('counts exact energy across a reset, a jitter drop and a gap', async () => {
      const base = Date.parse('2026-06-01T00:00:00Z');
      const res = await get(
        `/api/devices/${m.resets!.id}/energy?from=${iso(base)}&to=${iso(base + 7 * H)}&interval=1h`,
      );
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.t).toEqual([0, 1, 2, 3, 4, 5, 6].map((h) => base + h * H));
      // Each reading closes the hour it ends: the reset at 02:00 closes the second hour (0.4 before it).
      const expected = [1, 0.4, 0.5, null, null, 2.0, 0.5];
      body.import.forEach((v: number | null, i: number) => {
        if (expected[i] === null) expect(v).toBeNull();
        else expect(v).toBeCloseTo(expected[i]!, 9);
      });
    });

    it('nets import against export per hour across phases, and a day sums the hourly balances', async () => {
      const base = Date.parse('2026-06-01T00:00:00Z');
      const res = await get(
        `/api/devices/${m.balance!.id}/energy?from=${iso(base)}&to=${iso(base + 2 * H)}&interval=1h`,
      );
      const body = res.json();
      expect(body.import[0]).toBeCloseTo(1.0, 9);
      expect(body.export[0]).toBeCloseTo(0.6, 9);
      expect(body.balance[0]).toBeCloseTo(0.4, 9);
      expect(body.import[1]).toBeCloseTo(0.2, 9);
      expect(body.export[1]).toBeCloseTo(0.5, 9);
      expect(body.balance[1]).toBeCloseTo(-0.3, 9);
      const day = (
        await get(
          `/api/devices/${m.balance!.id}/energy?from=${iso(base)}&to=${iso(base + 2 * H)}&interval=1d`,
        )
      ).json();
      expect(day.balance[0]).toBeCloseTo(0.1, 9);
      // G11 prices only the billed import of each hour: 0.4 kWh (hour 1's export is not netted against it).
      const loc = await locationOf(t.app, account);
      const tariff = await as(t.app, account, {
        method: 'POST',
        url: `/api/locations/${loc}/tariffs`,
        payload: { name: 'flat', group: 'G11', zone1Price: 1, validFrom: '2026-01-01' },
      });
      const stats = (
        await get(
          `/api/tariffs/${tariff.json().id}/stats?deviceId=${m.balance!.id}&from=${iso(base)}&to=${iso(base + 2 * H)}`,
        )
      ).json();
      expect(stats.total.energy).toBeCloseTo(0.4, 9);
    });

    it('answers energy as the registers read it, without the binary noise of summing doubles', async () => {
      // 101.4 − 101 is 0.4000000000000057 in doubles, 11.2 − 11 is 0.1999999999999993.
      const base = Date.parse('2026-06-01T00:00:00Z');
      const hours = `from=${iso(base)}&to=${iso(base + 7 * H)}`;
      const resets = (await get(`/api/devices/${m.resets!.id}/energy?${hours}&interval=1h`)).json();
      expect(resets.import).toEqual([1, 0.4, 0.5, null, null, 2, 0.5]);
      const balance = (
        await get(
          `/api/devices/${m.balance!.id}/energy?from=${iso(base)}&to=${iso(base + 2 * H)}&interval=1h`,
        )
      ).json();
      expect(balance).toMatchObject({ import: [1, 0.2], export: [0.6, 0.5], balance: [0.4, -0.3] });
      const table = (
        await get(
          `/api/analytics/consumption?deviceIds=${m.balance!.id},${m.resets!.id}&${hours}&interval=1h`,
        )
      ).json();
      expect(table.rows.slice(0, 2).map((r: { balance: number }) => r.balance)).toEqual([0.4, -0.3]);
      expect(table.rows.slice(7, 14).map((r: { import: number | null }) => r.import)).toEqual([
        1,
        0.4,
        0.5,
        null,
        null,
        2,
        0.5,
      ]);
      const heat = (
        await get(`/api/devices/${m.resets!.id}/heatmap?param=eai&kind=daily&${hours}`)
      ).json() as { rows: { data: { x: number; y: number | null }[] }[] };
      const cells = heat.rows.flatMap((r) => r.data.map((c) => c.y)).filter((y) => y !== null);
      // The heatmap starts at local midnight: the first reading (00:00 UTC) closes the cell before it with 0.
      expect(cells.sort()).toEqual([0, 0.4, 0.5, 0.5, 1, 2]);
    });

    it('draws daily heatmap cells across DST: the missing spring hour is empty, the repeated autumn hour holds both', async () => {
      const spring = (
        await get(
          `/api/devices/${m.dst!.id}/heatmap?param=eai&kind=daily&from=${iso(WARSAW_SPRING)}&to=${iso(WARSAW_SPRING_END)}`,
        )
      ).json();
      expect(spring.tz).toBe('Europe/Warsaw');
      expect(spring.unit).toBe('kWh');
      expect(spring.rows.map((r: { id: string }) => r.id)).toEqual(['2026-03-29']);
      const cells = spring.rows[0].data as { x: number; y: number | null }[];
      expect(cells).toHaveLength(24);
      expect(cells[2]!.y).toBeNull();
      expect(cells[1]!.y).toBeCloseTo(1, 9);
      expect(cells[3]!.y).toBeCloseTo(1, 9);
      const autumn = (
        await get(
          `/api/devices/${m.dst!.id}/heatmap?param=eai1&kind=daily&from=${iso(WARSAW_AUTUMN)}&to=${iso(WARSAW_AUTUMN_END)}`,
        )
      ).json();
      const a = autumn.rows[0].data as { x: number; y: number | null }[];
      expect(a[2]!.y).toBeCloseTo(2, 9);
      expect(a[3]!.y).toBeCloseTo(1, 9);
      const total = a.reduce((s, c) => s + (c.y ?? 0), 0);
      expect(total).toBeCloseTo(25, 9);
    });

    it('fills monthly and yearly heatmaps from daily energy with the cells of hourly energy, a last day cut short included', async () => {
      // From the local midnight before the spring change to 06:30 two days after it.
      const range = `from=${iso(WARSAW_SPRING - 24 * H)}&to=${iso(WARSAW_SPRING_END + 6.5 * H)}`;
      for (const kind of ['monthly', 'yearly']) {
        const url = `/api/devices/${m.dst!.id}/heatmap?param=eai&kind=${kind}&${range}`;
        type Rows = { rows: { id: string; data: { x: number | string; y: number | null }[] }[] };
        const rollups = (await get(url)).json() as Rows;
        const raw = (await get(`${url}&source=raw`)).json() as Rows;
        const cells = (h: Rows) => h.rows.flatMap((r) => r.data.map((c) => [r.id, c.x, c.y] as const));
        const a = cells(rollups);
        const b = cells(raw);
        expect(
          a.map(([id, x]) => `${id}/${x}`),
          kind,
        ).toEqual(b.map(([id, x]) => `${id}/${x}`));
        for (const [i, [, , y]] of a.entries()) {
          const want = b[i]![2];
          if (want === null) expect(y).toBeNull();
          else expect(y).toBeCloseTo(want, 9);
        }
        const filled = a
          .map(([, , y]) => y)
          .filter((y) => y !== null)
          .sort((x, y) => x - y);
        // 28 March (the reading at its midnight is the baseline, the one at its end closes it: 24 kWh),
        // 29 March (23 hours) and 30 March up to 06:30 (whole hours from 00:00 to 07:00).
        expect(filled, kind).toHaveLength(3);
        expect(filled[0]).toBeCloseTo(7, 9);
        expect(filled[1]).toBeCloseTo(23, 9);
        expect(filled[2]).toBeCloseTo(24, 9);
      }
    });

    // A December noon (a reading exactly at now closes the hour before it), the spring DST night in Warsaw and
    // a leap day's last hour (1 March already in Warsaw).
    it.each(['2026-12-02T12:00:00Z', '2027-03-28T01:30:00Z', '2028-02-29T23:30:00Z'])(
      "sums today, month, year and billing period from whole days and today's hours as the hours alone add up (now %s)",
      async (at) => {
        const before = now;
        now = Date.parse(at);
        try {
          // An account of this instant: a session opened at another time has ended by then.
          const owner = await signUp(t.app);
          // 1 kWh an hour imported on phase 1 and 0.25 kWh exported on phase 2, every 15 minutes for the last
          // 70 days (two month boundaries; the billing period starts at the meter's claim, today).
          const meter = await claimMeter(t.app, owner, await locationOf(t.app, owner), `summary ${at}`);
          const end = Math.floor(now / (15 * 60_000)) * 15 * 60_000;
          const readings: Reading[] = [];
          for (let ts = end - 70 * 24 * H, i = 0; ts <= end; ts += 15 * 60_000, i++)
            readings.push({
              deviceKey: meter.deviceKey,
              ts,
              values: { eai1: 100 + i / 4, eae2: 5 + i / 16 },
            });
          await store.write(readings);
          await store.refreshRollups(now);
          const summary = (
            await as(t.app, owner, { method: 'GET', url: `/api/devices/${meter.id}/energy/summary` })
          ).json();
          const yearStart = Date.parse(`${new Date(now).getUTCFullYear() - 1}-12-01T00:00:00Z`);
          const hours = (
            await as(t.app, owner, {
              method: 'GET',
              url: `/api/devices/${meter.id}/energy?interval=1h&from=${iso(yearStart)}&to=${iso(now)}`,
            })
          ).json() as {
            t: number[];
            import: (number | null)[];
            export: (number | null)[];
            balance: (number | null)[];
          };
          const sum = (since: number, key: 'import' | 'export' | 'balance') =>
            hours.t.reduce((s, t, i) => (t >= since && t <= now ? s + (hours[key][i] ?? 0) : s), 0);
          const starts = {
            today: startOfLocalDay(now, 'Europe/Warsaw'),
            month: startOfLocalMonth(now, 'Europe/Warsaw'),
            year: startOfLocalYear(now, 'Europe/Warsaw'),
            billing: Date.parse(summary.billingPeriod.start),
          };
          for (const [name, since] of Object.entries(starts)) {
            const got = summary[name] as { import: number; export: number; balance: number };
            expect(got.import, name).toBeCloseTo(sum(since, 'import'), 6);
            expect(got.export, name).toBeCloseTo(sum(since, 'export'), 6);
            expect(got.balance, name).toBeCloseTo(sum(since, 'balance'), 6);
          }
          // The month holds whole days and today's hours: 0.75 kWh net an hour since the month began (or since
          // the first reading, 70 days ago).
          const monthHours = (now - Math.max(starts.month, end - 70 * 24 * H)) / H;
          expect(summary.month.balance).toBeGreaterThan(0.75 * (monthHours - 2));
          expect(summary.month.balance).toBeLessThan(0.75 * (monthHours + 2));
        } finally {
          now = before;
        }
      },
    );

    it('keeps a 10-minute voltage window whole where the reading of a long range splits it', async () => {
      // 9 days of readings every 5 minutes: 270 V on the hour's tens, 190 V five minutes later, so each
      // 10-minute mean is 230 V while either reading alone is outside EN 50160's ±10 %. The range starts at
      // 00:03, so its week-long reads break mid-window.
      const meter = await claimMeter(t.app, account, await locationOf(t.app, account), 'quality');
      const T = Date.UTC(2026, 5, 1);
      const readings: Reading[] = [];
      for (let i = 0; i < 9 * 288; i++)
        readings.push({
          deviceKey: meter.deviceKey,
          ts: T + i * 5 * 60_000,
          values: { vave1: i % 2 ? 190 : 270 },
        });
      await store.write(readings);
      const res = await get(
        `/api/devices/${meter.id}/voltage-quality?from=${iso(T + 3 * 60_000)}&to=${iso(T + 9 * 24 * H)}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      const p1 = res.json().phases[0];
      // One mean per 10 minutes; only the first window (its 270 V reading before the range) is out.
      expect(p1.samples).toBe(9 * 144);
      expect(p1.withinEn50160).toBeCloseTo((9 * 144 - 1) / (9 * 144), 9);
    });

    it('prices the quarter before a zone change in its own zone: the reading at 13:00 closes a zone 1 quarter', async () => {
      const loc = await locationOf(t.app, account);
      const tariff = await as(t.app, account, {
        method: 'POST',
        url: `/api/locations/${loc}/tariffs`,
        payload: { name: 'midday', group: 'G12', zone1Price: 1, zone2Price: 0.5, validFrom: '2026-01-01' },
      });
      expect(tariff.statusCode, tariff.body).toBe(201);
      const res = await get(
        `/api/tariffs/${tariff.json().id}/stats?deviceId=${m.profile!.id}&from=${iso(PROFILE)}&to=${iso(PROFILE + 2 * H)}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      // 12:00–13:00 CET in zone 1: three quarters of 1 kWh and the 10 kWh one ending at 13:00; 13:00–14:00
      // in zone 2: four quarters of 1 kWh.
      expect(res.json().months[0].zones).toEqual([
        { zone: 1, energy: expect.closeTo(13, 9), cost: expect.closeTo(13, 9) },
        { zone: 2, energy: expect.closeTo(4, 9), cost: expect.closeTo(2, 9) },
      ]);
    });

    it('prices a G12w weekend and a public holiday entirely in zone 2', async () => {
      const loc = await locationOf(t.app, account);
      const tariff = await as(t.app, account, {
        method: 'POST',
        url: `/api/locations/${loc}/tariffs`,
        payload: {
          name: 'weekend',
          group: 'G12w',
          zone1Price: 1,
          zone2Price: 0.5,
          fixedPrice: 10,
          validFrom: '2026-01-01',
        },
      });
      expect(tariff.statusCode, tariff.body).toBe(201);
      const from = iso(Date.parse('2026-04-29T22:00:00Z'));
      const to = iso(Date.parse('2026-05-03T22:00:00Z'));
      const res = await get(
        `/api/tariffs/${tariff.json().id}/stats?deviceId=${m.tariff!.id}&from=${from}&to=${to}`,
      );
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.simulated).toBe(true);
      expect(body.months.map((x: { month: string }) => x.month)).toEqual(['2026-04', '2026-05']);
      const [april, may] = body.months;
      // Thursday: 13–15 and 22–06 cheap (10 h), 14 h at the day price.
      expect(april.zones).toEqual([
        { zone: 1, energy: expect.closeTo(14, 9), cost: expect.closeTo(14, 9) },
        { zone: 2, energy: expect.closeTo(10, 9), cost: expect.closeTo(5, 9) },
      ]);
      // Friday 1 May (holiday), Saturday and Sunday: 72 h, all zone 2.
      expect(may.zones).toEqual([{ zone: 2, energy: expect.closeTo(72, 9), cost: expect.closeTo(36, 9) }]);
      expect(body.total.cost).toBeCloseTo(14 + 5 + 10 + 36 + 10, 9);

      const cmp = (await get(`/api/tariffs/compare?deviceId=${m.tariff!.id}&from=${from}&to=${to}`)).json();
      expect(cmp.simulated).toBe(true);
      expect(cmp.groups.map((g: { group: string }) => g.group).sort()).toEqual([
        'G11',
        'G12',
        'G12as',
        'G12n',
        'G12r',
        'G12w',
      ]);
      const costs = cmp.groups.map((g: { cost: number }) => g.cost);
      expect([...costs].sort((a, b) => a - b)).toEqual(costs);
      // The meter's own location has no G12w tariff: reference prices, same zone split as above.
      const g12w = cmp.groups.find((g: { group: string }) => g.group === 'G12w');
      expect(g12w.zones.map((z: { energy: number }) => z.energy)).toEqual([
        expect.closeTo(14, 9),
        expect.closeTo(82, 9),
      ]);
      expect(g12w.cost).toBeCloseTo(
        14 * g12w.prices.zone1 + 82 * g12w.prices.zone2 + 2 * g12w.prices.fixed,
        9,
      );
    });
  });
}
