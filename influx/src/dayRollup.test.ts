/**
 * Day rollups (`rollup_1d`): energy per local day of the kept zones, summed from 15-minute energies.
 * Pure accumulation against core's `energyPerBucket` over calendar days, then against a real influxd:
 * equal to raw over DST days, re-opened by late data, built for a database that had none.
 */
import { randomBytes } from 'node:crypto';
import {
  addLocalDays,
  type CounterPoint,
  calendarBucketStarts,
  counterRules,
  energyPerBucket,
  HOUR_MS,
  type Reading,
  zonedTimeToUtc,
} from '@kilowatch/core';
import { type InfluxTestServer, influxSkipReason, startInfluxServer } from '@kilowatch/testkit';
import { type EnergyQuery, StoreError } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InfluxClient } from './client.ts';
import { DayEnergy, decodeEvents, QUARTER_MS, quarterBuckets } from './rollup.ts';
import { ROLLUP_DAY, rowsOf } from './schema.ts';
import { createInfluxStore, type InfluxTelemetryStore } from './store.ts';

const MIN = 60_000;
const WARSAW = 'Europe/Warsaw';

/**
 * A register read every `stepMin` minutes over [from, to) with rises, jitter, a reset, an implausible
 * jump and a gap, deterministic for a seed.
 */
function counterHistory(from: number, to: number, stepMin: number, seed: number): CounterPoint[] {
  const pts: CounterPoint[] = [];
  let v = 1000 + seed;
  let i = 0;
  for (let t = from; t < to; t += stepMin * MIN, i++) {
    if (i === 50)
      v = 3; // reset
    else if (i === 120)
      v += 5_000; // implausible
    else if (i % 23 === 7)
      v -= 0.004; // jitter
    else v += ((i * 7 + seed) % 11) * 0.05;
    if (i % 97 >= 90) continue; // gaps
    pts.push({ ts: t, value: Math.round(v * 1000) / 1000 });
  }
  return pts;
}

function expectCloseSeries(got: readonly (number | null)[] | undefined, want: readonly (number | null)[]) {
  expect(got).toBeDefined();
  expect(got!.length).toBe(want.length);
  want.forEach((w, i) => {
    if (w === null) expect(got![i], `bucket ${i}`).toBeNull();
    else expect(got![i], `bucket ${i}`).toBeCloseTo(w, 9);
  });
}

describe('DayEnergy', () => {
  it.each([
    [WARSAW, 2025, 3, 30, 23],
    [WARSAW, 2025, 10, 26, 25],
    ['Asia/Kolkata', 2025, 3, 30, 24],
    ['Asia/Kathmandu', 2025, 3, 30, 24],
  ])(
    'sums 15-minute energies into the local days of %s around %i-%i-%i (%i h), equal to energyPerBucket',
    (tz, y, m, d, hours) => {
      const day = zonedTimeToUtc(y, m, d, 0, 0, 0, tz);
      const from = addLocalDays(day, -2, tz);
      const to = addLocalDays(day, 3, tz);
      expect(addLocalDays(day, 1, tz) - day).toBe(hours * HOUR_MS);
      const pts = counterHistory(from - 3 * HOUR_MS, to, 5, 3);
      const starts = calendarBucketStarts(from, to, 'day', tz);
      const reference = energyPerBucket(pts, [pts[0]!.ts, ...starts], to, counterRules('eai1'));

      const baselines = new Map<string, CounterPoint | null>();
      const rows = pts.map((p) => ({ ts: p.ts, values: { eai1: p.value } }));
      quarterBuckets(rows, from - 3 * HOUR_MS, from, baselines); // the baseline entering the range
      const days = new DayEnergy(starts, to);
      for (const q of quarterBuckets(rows, from, to, baselines).values()) days.addQuarter(q);
      expectCloseSeries(
        starts.map((s) => days.energyOf(s)?.get('eai1') ?? null),
        reference.energy.slice(1),
      );
      const lines = days.lines(ROLLUP_DAY, 'dev 1', tz).join('\n');
      const inRange = reference.events.filter((e) => e.at >= from);
      expect(inRange.length).toBeGreaterThan(0);
      for (const e of inRange) expect(lines).toContain(`${e.kind === 'reset' ? 'r' : 'i'}:${e.at}:`);
    },
  );

  it('writes one line per day that holds a counter reading, events in time order, ignoring quarters outside', () => {
    const day = zonedTimeToUtc(2025, 6, 1, 0, 0, 0, WARSAW);
    const next = addLocalDays(day, 1, WARSAW);
    const days = new DayEnergy([day, next], addLocalDays(next, 1, WARSAW));
    days.add(day + QUARTER_MS, 'eai1', 1.5, 'i:20:10:3000');
    days.add(day, 'eai1', 0.5, 'r:5:1:-10');
    days.add(day, 'eae1', 0, '');
    days.add(day - QUARTER_MS, 'eai1', 100, ''); // the day before: not kept
    const lines = days.lines(ROLLUP_DAY, 'a,b c', WARSAW);
    expect(lines).toEqual([
      `rollup_1d,device=a\\,b\\ c,tz=Europe/Warsaw eai1_e=2,eai1_ev="r:5:1:-10;i:20:10:3000",eae1_e=0,eae1_ev="" ${day}`,
    ]);
    const ev = /eai1_ev="([^"]*)"/.exec(lines[0]!)![1]!;
    expect(decodeEvents(ev).map((e) => e.kind)).toEqual(['reset', 'implausible']);
    expect(days.energyOf(next)).toBeUndefined();
  });
});

const skip = influxSkipReason();
if (skip) console.warn(skip);

describe.skipIf(skip !== null)('day rollups against a real influxd', () => {
  let server: InfluxTestServer;
  let store: InfluxTelemetryStore;
  let client: InfluxClient;
  const device = () => randomBytes(6).toString('hex');

  beforeAll(async () => {
    server = await startInfluxServer();
    store = await createInfluxStore({
      url: server.url,
      database: server.database,
      batchSize: 700,
      dayZones: [WARSAW, 'Asia/Kolkata'],
    });
    client = new InfluxClient({ url: server.url, database: server.database });
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    await server?.stop();
  });

  const dayPoints = async (d: string, tz: string): Promise<number> => {
    const [res] = await client.query(
      `SELECT "eai1_e" FROM ${ROLLUP_DAY} WHERE "device" = '${d}' AND "tz" = '${tz}'`,
    );
    return rowsOf(res?.series).length;
  };

  const sameAsRaw = async (q: EnergyQuery) => {
    const auto = await store.energy(q);
    const raw = await store.energy({ ...q, source: 'raw' });
    expect(auto.t).toEqual(raw.t);
    for (const c of q.counters) expectCloseSeries(auto.energy[c], raw.energy[c]!);
    expect(auto.resets).toEqual(raw.resets);
    expect(auto.implausible.map((e) => [e.counter, e.from, e.to])).toEqual(
      raw.implausible.map((e) => [e.counter, e.from, e.to]),
    );
    return auto;
  };

  it.each([
    [WARSAW, 3, 30],
    [WARSAW, 10, 26],
    ['Asia/Kolkata', 10, 26],
  ])(
    'daily and monthly energy in %s around 2025-%i-%i equal raw, written in several batches and refreshes',
    async (tz, m, d) => {
      const dev = device();
      const day = zonedTimeToUtc(2025, m, d, 0, 0, 0, tz);
      const from = addLocalDays(day, -3, tz);
      const to = addLocalDays(day, 3, tz);
      const pts = counterHistory(from - 2 * HOUR_MS, to, 4, 11);
      const readings: Reading[] = pts.map((p, i) => ({
        deviceKey: dev,
        ts: p.ts,
        values: { eai1: p.value, eai2: 10 + i * 0.01, eae1: 5 },
      }));
      // Three slices, each refreshed before the next arrives: days are completed incrementally.
      const cut1 = Math.floor(readings.length / 3);
      const cut2 = Math.floor((2 * readings.length) / 3);
      for (const part of [readings.slice(0, cut1), readings.slice(cut1, cut2), readings.slice(cut2)]) {
        await store.write(part);
        await store.refreshRollups(part[part.length - 1]!.ts + HOUR_MS);
      }
      expect(await dayPoints(dev, tz)).toBe(calendarBucketStarts(from - 2 * HOUR_MS, to, 'day', tz).length);
      const daily = await sameAsRaw({
        deviceKey: dev,
        counters: ['eai1', 'eai', 'eae1'],
        from,
        to,
        interval: '1d',
        tz,
      });
      expect(daily.t).toContain(day);
      expect(daily.resets.length + daily.implausible.length).toBeGreaterThan(0);
      await sameAsRaw({
        deviceKey: dev,
        counters: ['eai'],
        from: from - 40 * 24 * HOUR_MS,
        to,
        interval: '1mo',
        tz,
      });
    },
  );

  it('re-opens a closed day when late data arrives, and the day equals raw again', async () => {
    const dev = device();
    const day = zonedTimeToUtc(2025, 3, 30, 0, 0, 0, WARSAW); // the 23-hour day
    const next = addLocalDays(day, 1, WARSAW);
    const readings: Reading[] = [];
    for (let t = day - HOUR_MS, v = 0; t < next + 6 * HOUR_MS; t += 30 * MIN, v += 1)
      if (t < day + 5 * HOUR_MS || t >= day + 9 * HOUR_MS)
        readings.push({ deviceKey: dev, ts: t, values: { eai1: v } });
    await store.write(readings);
    await store.refreshRollups(next + 6 * HOUR_MS);
    const q: EnergyQuery = {
      deviceKey: dev,
      counters: ['eai1'],
      from: day,
      to: next + 1,
      interval: '1d',
      tz: WARSAW,
    };
    const before = await sameAsRaw(q);
    // Hours later, readings of the gap arrive: a reset inside the gap and a lower register after it.
    await store.write([
      { deviceKey: dev, ts: day + 6 * HOUR_MS, values: { eai1: 1 } },
      { deviceKey: dev, ts: day + 7 * HOUR_MS, values: { eai1: 2.5 } },
    ]);
    const run = await store.refreshRollups(next + 7 * HOUR_MS);
    expect(run.buckets).toBeGreaterThan(0);
    const after = await sameAsRaw(q);
    expect(after.energy.eai1![0]).not.toBeCloseTo(before.energy.eai1![0]!, 6);
    expect(after.resets.map((r) => r.at)).toEqual([day + 6 * HOUR_MS]);
    // The next day starts from the same baseline as before: unchanged.
    expect(after.energy.eai1![1]).toBeCloseTo(before.energy.eai1![1]!, 9);
  });

  it('answers concurrent daily energy of several devices with one request, each equal to raw', async () => {
    const day = zonedTimeToUtc(2025, 10, 26, 0, 0, 0, WARSAW);
    const devices = [device(), device(), `kw "odd", key = ${device()}`, device()];
    const readings: Reading[] = [];
    devices.slice(0, 3).forEach((d, k) => {
      for (const p of counterHistory(day - 26 * HOUR_MS, day + 49 * HOUR_MS, 15, k))
        readings.push({ deviceKey: d, ts: p.ts, values: { eai1: p.value, eai2: p.value / 2 } });
    });
    await store.write(readings);
    await store.refreshRollups(day + 50 * HOUR_MS);
    const q = (deviceKey: string): EnergyQuery => ({
      deviceKey,
      counters: ['eai', 'eai1'],
      from: addLocalDays(day, -1, WARSAW),
      to: addLocalDays(day, 2, WARSAW),
      interval: '1d',
      tz: WARSAW,
    });
    await store.energy(q(devices[0]!)); // the zone's readiness is known from here on
    const before = store.stats().requests;
    const answers = await Promise.all(devices.map((d) => store.energy(q(d))));
    expect(store.stats().requests - before).toBe(1);
    for (const [i, d] of devices.entries()) {
      const raw = await store.energy({ ...q(d), source: 'raw' });
      expectCloseSeries(answers[i]!.energy.eai, raw.energy.eai!);
      expectCloseSeries(answers[i]!.energy.eai1, raw.energy.eai1!);
      expect(answers[i]!.resets).toEqual(raw.resets);
    }
    expect(answers[3]!.energy.eai).toEqual([null, null, null]);
    expect(answers[0]!.energy.eai).not.toEqual(answers[1]!.energy.eai);
  });

  it('answers a zone it does not keep from hourly rollups, equal to raw', async () => {
    const dev = device();
    const tz = 'America/New_York';
    const day = zonedTimeToUtc(2025, 11, 2, 0, 0, 0, tz); // 25 hours
    const readings: Reading[] = [];
    for (let t = day - 2 * HOUR_MS, v = 0; t < day + 30 * HOUR_MS; t += 15 * MIN, v += 0.25)
      readings.push({ deviceKey: dev, ts: t, values: { eai1: v } });
    await store.write(readings);
    await store.refreshRollups(day + 31 * HOUR_MS);
    expect(await dayPoints(dev, tz)).toBe(0);
    const res = await sameAsRaw({
      deviceKey: dev,
      counters: ['eai1'],
      from: day,
      to: addLocalDays(day, 1, tz),
      interval: '1d',
      tz,
    });
    expect(res.energy.eai1).toEqual([25]);
  });

  it('builds day rollups for a database whose rollups were made without them', async () => {
    const database = `kw_days_${randomBytes(3).toString('hex')}`;
    const created = await fetch(
      `${server.url}/query?q=${encodeURIComponent(`CREATE DATABASE "${database}"`)}`,
      {
        method: 'POST',
      },
    );
    expect(created.ok).toBe(true);
    const older = await createInfluxStore({ url: server.url, database, dayZones: [] });
    const dev = device();
    const day = zonedTimeToUtc(2025, 10, 26, 0, 0, 0, WARSAW);
    const pts = counterHistory(day - 30 * HOUR_MS, day + 50 * HOUR_MS, 10, 5);
    await older.write(pts.map((p) => ({ deviceKey: dev, ts: p.ts, values: { eai1: p.value } })));
    await older.refreshRollups(day + 51 * HOUR_MS);
    await older.close();

    const newer = await createInfluxStore({ url: server.url, database, dayZones: [WARSAW] });
    const q: EnergyQuery = {
      deviceKey: dev,
      counters: ['eai1'],
      from: addLocalDays(day, -1, WARSAW),
      to: addLocalDays(day, 2, WARSAW),
      interval: '1d',
      tz: WARSAW,
    };
    const fromHours = await newer.energy(q); // no day rollups yet: answered from hourly rollups
    const c = new InfluxClient({ url: server.url, database });
    const count = async () =>
      rowsOf((await c.query(`SELECT "eai1_e" FROM ${ROLLUP_DAY} WHERE "tz" = '${WARSAW}'`))[0]?.series)
        .length;
    expect(await count()).toBe(0);
    await newer.refreshRollups(day + 52 * HOUR_MS);
    expect(await count()).toBe(
      calendarBucketStarts(pts[0]!.ts, pts[pts.length - 1]!.ts + 1, 'day', WARSAW).length,
    );
    const fromDays = await newer.energy(q);
    const raw = await newer.energy({ ...q, source: 'raw' });
    expectCloseSeries(fromDays.energy.eai1, raw.energy.eai1!);
    expectCloseSeries(fromHours.energy.eai1, raw.energy.eai1!);
    expect(fromDays.resets).toEqual(raw.resets);
    await newer.close();
  });

  it('refuses an unknown zone in dayZones', async () => {
    await expect(
      createInfluxStore({ url: server.url, database: server.database, dayZones: ['Mars/Olympus'] }),
    ).rejects.toThrow(StoreError);
  });
});

describe.skipIf(skip !== null)('day rollups against an influxd with a small max-row-limit', () => {
  let server: InfluxTestServer;

  beforeAll(async () => {
    server = await startInfluxServer({ maxRowLimit: 4 });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('answers the shared request for several devices in full, each equal to raw', async () => {
    const store = await createInfluxStore({ url: server.url, database: server.database });
    const day = zonedTimeToUtc(2025, 3, 30, 0, 0, 0, WARSAW);
    const devices = ['a-meter', 'b-meter', 'c-meter'];
    const readings: Reading[] = [];
    devices.forEach((d, k) => {
      for (const p of counterHistory(day - 3 * 24 * HOUR_MS, day + 3 * 24 * HOUR_MS, 30, k))
        readings.push({ deviceKey: d, ts: p.ts, values: { eai1: p.value } });
    });
    await store.write(readings);
    await store.refreshRollups(day + 4 * 24 * HOUR_MS);
    const q = (deviceKey: string): EnergyQuery => ({
      deviceKey,
      counters: ['eai1'],
      from: addLocalDays(day, -3, WARSAW),
      to: addLocalDays(day, 3, WARSAW),
      interval: '1d',
      tz: WARSAW,
    });
    await store.energy(q(devices[0]!));
    const answers = await Promise.all(devices.map((d) => store.energy(q(d))));
    for (const [i, d] of devices.entries()) {
      const raw = await store.energy({ ...q(d), source: 'raw' });
      expect(answers[i]!.t).toHaveLength(6);
      expect(answers[i]!.energy.eai1!.every((v) => v !== null)).toBe(true);
      expectCloseSeries(answers[i]!.energy.eai1, raw.energy.eai1!);
    }
    await store.close();
  });
});
