/** Series, latest, data log, summary, consumption, comparisons and voltage quality through `inject` on DuckDB. */
import type { Reading } from '@kilowatch/core';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
const DAY0 = Date.parse('2026-11-01T00:00:00Z');

describe('telemetry routes on DuckDB', () => {
  let t: TestApp;
  let store: TelemetryStore;
  let alice: Account;
  let bob: Account;
  let meter: Meter;
  let second: Meter;
  let bobMeter: Meter;

  beforeAll(async () => {
    store = await createDuckDbStore();
    t = await buildTestApp('pglite', { store, now: () => DAY0 + 2 * 86_400_000 });
    alice = await signUp(t.app);
    bob = await signUp(t.app);
    const loc = await locationOf(t.app, alice);
    meter = await claimMeter(t.app, alice, loc, 'Main');
    second = await claimMeter(t.app, alice, loc, 'Garage');
    bobMeter = await claimMeter(t.app, bob, await locationOf(t.app, bob), 'Bob');
    const readings: Reading[] = [];
    // Two days of one-minute readings: phase voltages 230/240/200 V, a counter rising 1 kWh per hour.
    for (let i = 0; i < 2 * 24 * 60; i++) {
      const ts = DAY0 + i * 60_000;
      readings.push({
        deviceKey: meter.deviceKey,
        ts,
        values: { vave1: 230, vave2: 240 + (i % 2), vave3: 200, eai1: 500 + i / 60 },
      });
      if (i % 15 === 0)
        readings.push({ deviceKey: second.deviceKey, ts, values: { vave1: 231, eai1: 10 + i / 30 } });
    }
    await store.write(readings);
    await store.refreshRollups(DAY0 + 3 * 86_400_000);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await store?.close();
  });

  const get = (who: Account, url: string) => as(t.app, who, { method: 'GET', url });

  it('answers a series with the interval chosen for ≤ 2,000 points, min/avg/max and the location zone', async () => {
    const res = await get(
      alice,
      `/api/devices/${meter.id}/series?params=vave1,vave2&from=${iso(DAY0)}&to=${iso(DAY0 + 2 * 86_400_000)}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.interval).toBe('15m');
    expect(body.tz).toBe('Europe/Warsaw');
    expect(body.t).toHaveLength(192);
    expect(body.series.vave1.avg[0]).toBeCloseTo(230, 9);
    expect(body.series.vave2.min[0]).toBeCloseTo(240, 9);
    expect(body.series.vave2.max[0]).toBeCloseTo(241, 9);
  });

  it('gives raw readings for a short range and the summed view of a phase-less name', async () => {
    const res = await get(
      alice,
      `/api/devices/${meter.id}/series?params=vave&from=${iso(DAY0)}&to=${iso(DAY0 + H)}&stats=avg`,
    );
    const body = res.json();
    expect(body.interval).toBe('raw');
    expect(body.t).toHaveLength(60);
    expect(body.series.vave.avg[0]).toBeCloseTo((230 + 240 + 200) / 3, 9);
    expect(body.series.vave.min).toBeUndefined();
  });

  it('has null for gaps in bucketed series', async () => {
    const res = await get(
      alice,
      `/api/devices/${meter.id}/series?params=vave1&from=${iso(DAY0 - 2 * H)}&to=${iso(DAY0 + H)}&interval=1h`,
    );
    expect(res.json().series.vave1.avg).toEqual([null, null, expect.closeTo(230, 9)]);
  });

  it('refuses a range past 100,000 points per series with "Data range is too long."', async () => {
    const res = await get(
      alice,
      `/api/devices/${meter.id}/series?params=vave1&from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z&interval=raw`,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toBe('Data range is too long.');
  });

  it.each([
    ['no range', 'params=vave1', 'Date range is required.'],
    ['no params', `from=${iso(DAY0)}&to=${iso(DAY0 + H)}`, 'Please select at least one parameter.'],
    [
      'unknown param',
      `params=bogus&from=${iso(DAY0)}&to=${iso(DAY0 + H)}`,
      'Please select at least one parameter.',
    ],
  ])('answers 400 with a clear message: %s', async (_name, qs, message) => {
    const res = await get(alice, `/api/devices/${meter.id}/series?${qs}`);
    expect(res.statusCode).toBe(400);
    expect(
      Object.values(res.json().errors ?? {})
        .flat()
        .concat(res.json().message),
    ).toContain(message);
  });

  it("answers 404 for another user's device on every telemetry route", async () => {
    const r = `from=${iso(DAY0)}&to=${iso(DAY0 + H)}`;
    for (const url of [
      `/api/devices/${bobMeter.id}/series?params=vave1&${r}`,
      `/api/devices/${bobMeter.id}/latest`,
      `/api/devices/${bobMeter.id}/energy?${r}`,
      `/api/devices/${bobMeter.id}/energy/summary`,
      `/api/devices/${bobMeter.id}/heatmap?param=eai&kind=daily&${r}`,
      `/api/devices/${bobMeter.id}/readings?${r}`,
      `/api/devices/${bobMeter.id}/voltage-quality?${r}`,
      `/api/analytics/consumption?deviceIds=${meter.id},${bobMeter.id}&${r}`,
      `/api/tariffs/compare?deviceId=${bobMeter.id}&${r}`,
    ]) {
      const res = await get(alice, url);
      expect(res.statusCode, url).toBe(404);
    }
  });

  it('pages the data log by cursor with UTC timestamps', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const qs: string = `from=${iso(DAY0)}&to=${iso(DAY0 + 5 * 60_000)}&params=vave1,eai1&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const body = (await get(alice, `/api/devices/${meter.id}/readings?${qs}`)).json();
      for (const item of body.items) seen.push(item.ts);
      expect(Object.keys(body.items[0].values).sort()).toEqual(['eai1', 'vave1']);
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([
      '2026-11-01 00:00:00',
      '2026-11-01 00:01:00',
      '2026-11-01 00:02:00',
      '2026-11-01 00:03:00',
      '2026-11-01 00:04:00',
    ]);
  });

  it('returns the newest values', async () => {
    const body = (await get(alice, `/api/devices/${meter.id}/latest`)).json();
    expect(body.ts).toBe(DAY0 + (2 * 24 * 60 - 1) * 60_000);
    expect(body.values.vave1).toBe(230);
  });

  it('sums today, month, year and billing period in the location zone and adds meter-value offsets to the total', async () => {
    const before = (await get(alice, `/api/devices/${meter.id}/energy/summary`)).json();
    expect(before.unit).toBe('kWh');
    // Now = 2026-11-03 00:00 UTC = 01:00 Warsaw: today holds one hour (no readings after 2 days), month all 48 h.
    expect(before.month.import).toBeCloseTo(48 - 1 / 60, 6);
    expect(before.year.import).toBeCloseTo(before.month.import, 9);
    const offset = await as(t.app, alice, {
      method: 'POST',
      url: `/api/devices/${meter.id}/meter-value`,
      payload: { param: 'eai1', value: 10_000, at: iso(DAY0 + 2 * 86_400_000 - 60_000) },
    });
    expect(offset.statusCode, offset.body).toBe(200);
    const after = (await get(alice, `/api/devices/${meter.id}/energy/summary`)).json();
    expect(after.total.import).toBeCloseTo(10_000, 6);
    expect(after.month.import).toBeCloseTo(before.month.import, 9);
  });

  it('builds a consumption table for several devices', async () => {
    const res = await get(
      alice,
      `/api/analytics/consumption?deviceIds=${meter.id},${second.id}&from=${iso(DAY0)}&to=${iso(DAY0 + 2 * H)}&interval=1h`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().rows as { deviceId: number; import: number }[];
    expect(rows.filter((r) => r.deviceId === meter.id)).toHaveLength(2);
    // The first reading (00:00) is the baseline and the one at 01:00 closes the first hour: four steps.
    const garage = rows.filter((r) => r.deviceId === second.id).map((r) => r.import);
    expect(garage).toEqual([expect.closeTo(2, 9), expect.closeTo(2, 9)]);
  });

  it('gives the same consumption table from raw readings (source=raw) as from rollups', async () => {
    const url = `/api/analytics/consumption?deviceIds=${meter.id},${second.id}&from=${iso(DAY0)}&to=${iso(DAY0 + 2 * 86_400_000)}&interval=1d`;
    const rolled = await get(alice, url);
    const raw = await get(alice, `${url}&source=raw`);
    expect(rolled.statusCode, rolled.body).toBe(200);
    expect(raw.statusCode, raw.body).toBe(200);
    type Row = { deviceId: number; bucket: number; import: number | null };
    const rows = (r: typeof raw) => (r.json().rows as Row[]).map((x) => [x.deviceId, x.bucket, x.import]);
    // Three local days (the range starts at 01:00 in Warsaw), both meters: 1 kWh/h on Main from its first
    // minute, 2 kWh/h on Garage from its first 15 minutes.
    expect(rows(rolled)).toHaveLength(6);
    expect(rows(rolled).reduce((s, [, , e]) => s + (e as number), 0)).toBeCloseTo(48 - 1 / 60 + 96 - 0.5, 6);
    for (const [i, [dev, bucket, e]] of rows(raw).entries()) {
      expect([dev, bucket]).toEqual(rows(rolled)[i]!.slice(0, 2));
      expect(e).toBeCloseTo(rows(rolled)[i]![2] as number, 9);
    }
    const bad = await get(alice, `${url}&source=cache`);
    expect(bad.statusCode).toBe(400);
  });

  it('keeps the order the devices were asked in, however many are read at a time', async () => {
    const carol = await signUp(t.app);
    const loc = await locationOf(t.app, carol);
    const meters: Meter[] = [];
    for (let i = 0; i < 7; i++) meters.push(await claimMeter(t.app, carol, loc, `Carol ${i}`));
    // Each meter's counter rises (i + 1) kWh per hour, so a row tells which meter it came from: the hour
    // holds its four 15-minute steps (the fourth ends at 01:00 and closes the hour).
    const readings: Reading[] = [];
    for (const [i, m] of meters.entries())
      for (let k = 0; k <= 4; k++)
        readings.push({
          deviceKey: m.deviceKey,
          ts: DAY0 + k * 15 * 60_000,
          values: { eai1: 100 + ((i + 1) * k) / 4 },
        });
    await store.write(readings);
    await store.refreshRollups(DAY0 + 3 * 86_400_000);
    const order = [5, 0, 6, 2, 4, 1, 3].map((i) => meters[i]!);
    const res = await get(
      carol,
      `/api/analytics/consumption?deviceIds=${order.map((m) => m.id).join(',')}&from=${iso(DAY0)}&to=${iso(DAY0 + H)}&interval=1h`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().rows as { deviceId: number; import: number }[];
    expect(rows.map((r) => r.deviceId)).toEqual(order.map((m) => m.id));
    expect(rows.map((r) => r.import)).toEqual([6, 1, 7, 3, 5, 2, 4].map((e) => expect.closeTo(e, 9)));
  });

  it('keeps comparisons per user with the SPEC messages, and answers one block per member', async () => {
    const bad = await as(t.app, alice, {
      method: 'POST',
      url: '/api/comparisons',
      payload: { name: 'ab', members: [] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.name).toEqual(['The comparison name must be between 3 and 30 characters.']);
    expect(bad.json().errors.members).toEqual(['Select at least one parameter to compare.']);
    const foreign = await as(t.app, alice, {
      method: 'POST',
      url: '/api/comparisons',
      payload: { name: 'mixed', members: [{ deviceId: bobMeter.id, param: 'vave1' }] },
    });
    expect(foreign.statusCode).toBe(404);
    const created = await as(t.app, alice, {
      method: 'POST',
      url: '/api/comparisons',
      payload: {
        name: 'Voltages',
        members: [
          { deviceId: meter.id, param: 'vave1' },
          { deviceId: second.id, param: 'vave1' },
        ],
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id;
    expect((await get(bob, `/api/comparisons/${id}`)).statusCode).toBe(404);
    const data = (
      await get(alice, `/api/comparisons/${id}/data?from=${iso(DAY0)}&to=${iso(DAY0 + 2 * 86_400_000)}`)
    ).json();
    expect(data.interval).toBe('15m');
    expect(data.blocks.map((b: { deviceId: number }) => b.deviceId)).toEqual([meter.id, second.id]);
    expect(data.blocks[1].data.series.vave1.avg[0]).toBeCloseTo(231, 9);
    const renamed = await as(t.app, alice, {
      method: 'PUT',
      url: `/api/comparisons/${id}`,
      payload: { name: 'Phase one', members: [{ deviceId: meter.id, param: 'vave1' }] },
    });
    expect(renamed.json().members).toHaveLength(1);
    expect((await get(alice, '/api/comparisons')).json()).toHaveLength(1);
    expect((await as(t.app, bob, { method: 'DELETE', url: `/api/comparisons/${id}` })).statusCode).toBe(404);
    expect((await as(t.app, alice, { method: 'DELETE', url: `/api/comparisons/${id}` })).statusCode).toBe(
      204,
    );
  });

  it('draws weekly, monthly and yearly heatmaps; energy cells add up, gauge cells average', async () => {
    const r = `from=${iso(DAY0)}&to=${iso(DAY0 + 2 * 86_400_000)}`;
    const monthly = (await get(alice, `/api/devices/${meter.id}/heatmap?param=eai&kind=monthly&${r}`)).json();
    expect(monthly.rows.map((x: { id: string }) => x.id)).toEqual(['2026-11']);
    const cells = monthly.rows[0].data as { x: number; y: number | null }[];
    expect(cells).toHaveLength(31);
    expect(cells.reduce((s, c) => s + (c.y ?? 0), 0)).toBeCloseTo(48 - 1 / 60, 6);
    expect(cells[30]!.y).toBeNull();
    const weekly = (await get(alice, `/api/devices/${meter.id}/heatmap?param=vave1&kind=weekly&${r}`)).json();
    expect(weekly.unit).toBe('V');
    expect(weekly.rows.map((x: { id: string }) => x.id)).toEqual([
      'Mon',
      'Tue',
      'Wed',
      'Thu',
      'Fri',
      'Sat',
      'Sun',
    ]);
    const sunday = weekly.rows[6].data as { y: number | null }[];
    expect(sunday.filter((c) => c.y !== null).every((c) => Math.abs(c.y! - 230) < 1e-9)).toBe(true);
    const yearly = (await get(alice, `/api/devices/${meter.id}/heatmap?param=eai&kind=yearly&${r}`)).json();
    expect(yearly.rows).toHaveLength(7);
    const bad = await get(alice, `/api/devices/${meter.id}/heatmap?param=eai&kind=hourly&${r}`);
    expect(bad.statusCode).toBe(400);
  });

  it('reports voltage quality per phase from 10-minute means', async () => {
    const res = await get(
      alice,
      `/api/devices/${meter.id}/voltage-quality?from=${iso(DAY0)}&to=${iso(DAY0 + 86_400_000)}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const [p1, p2, p3] = res.json().phases;
    expect(p1.samples).toBe(144);
    expect(p1.withinEn50160).toBe(1);
    expect(p1.en50160Met).toBe(true);
    // 240.5 V is 4.6 % above 230 V: inside the default warning band of 10 %.
    expect(p2.withinWarning).toBe(1);
    // 200 V is 13 % low: outside EN 50160's ±10 %, inside the default critical band of 15 %.
    expect(p3.withinEn50160).toBe(0);
    expect(p3.withinCritical).toBe(1);
    expect(p3.en50160Met).toBe(false);
  });
});
