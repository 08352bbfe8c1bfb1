/**
 * Answers sized to the screen (`points`, docs/api.md §Telemetry) on both engines: a long range of
 * readings with one spike and one gap, asked for with and without `points`, as a chart and as a
 * comparison's data. Fixed past instants and a fixed clock.
 */
import type { Reading } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, iso, locationOf, type Meter } from '../analytics/testing.ts';
import { ENGINES } from '../testing/engines.ts';
import { type Account, as, buildTestApp, signUp, type TestApp } from '../testing/helper.ts';

const H = 3_600_000;
const STEP = 30 * 60_000;
const FROM = Date.parse('2025-01-01T00:00:00Z');
const DAYS = 240;
const TO = FROM + DAYS * 24 * H;
const SPIKE = Date.parse('2025-05-17T13:30:00Z');
const DIP = Date.parse('2025-03-02T08:00:00Z');
/** Meter one is silent for five days. */
const GAP = [Date.parse('2025-07-10T00:00:00Z'), Date.parse('2025-07-15T00:00:00Z')] as const;
const POINTS = 200;

interface Block {
  interval: string;
  from: number;
  to: number;
  tz: string;
  t: number[];
  series: Record<string, { avg?: (number | null)[]; min?: (number | null)[]; max?: (number | null)[] }>;
  reduced?: { points: number; from: number };
}

const values = (c: (number | null)[] | undefined) => (c ?? []).filter((x): x is number => x !== null);

/** The reduced answer covers the full one: same range, zone and interval, its rows at the full one's stamps. */
function expectSameSpan(reduced: Block, full: Block) {
  expect([reduced.interval, reduced.from, reduced.to, reduced.tz]).toEqual([
    full.interval,
    full.from,
    full.to,
    full.tz,
  ]);
  expect(reduced.reduced).toEqual({ points: POINTS, from: full.t.length });
  const stamps = new Set(full.t);
  expect(reduced.t.every((x) => stamps.has(x))).toBe(true);
  expect(reduced.t[0]).toBe(full.t[0]);
  // The last row falls in the last pixel column.
  expect(reduced.t.at(-1)!).toBeGreaterThanOrEqual(full.to - (full.to - full.from) / POINTS - H);
  expect([...reduced.t].sort((a, b) => a - b)).toEqual(reduced.t);
}

for (const engine of ENGINES) {
  describe.skipIf(engine.skip !== null)(`answers sized to the screen on ${engine.name}`, () => {
    let t: TestApp;
    let store: TelemetryStore;
    let stop: () => Promise<void>;
    let alice: Account;
    let one: Meter;
    let two: Meter;

    beforeAll(async () => {
      const opened = await engine.open();
      store = opened.store;
      stop = opened.stop;
      t = await buildTestApp('pglite', { store, now: () => TO + 30 * 24 * H });
      alice = await signUp(t.app);
      const loc = await locationOf(t.app, alice);
      one = await claimMeter(t.app, alice, loc, 'One');
      two = await claimMeter(t.app, alice, loc, 'Two');
      const readings: Reading[] = [];
      for (let ts = FROM, i = 0; ts < TO; ts += STEP, i++) {
        if (!(ts >= GAP[0] && ts < GAP[1]))
          readings.push({
            deviceKey: one.deviceKey,
            ts,
            values: { vave1: ts === SPIKE ? 400 : 230 + (i % 7) / 10 },
          });
        readings.push({
          deviceKey: two.deviceKey,
          ts,
          values: { vave1: ts === DIP ? 180 : 231 + (i % 5) / 10 },
        });
      }
      for (let i = 0; i < readings.length; i += 10_000) await store.write(readings.slice(i, i + 10_000));
      await store.refreshRollups(TO + H);
    }, 180_000);

    afterAll(async () => {
      await t?.close();
      await stop?.();
    });

    const get = async (url: string): Promise<Block & Record<string, unknown>> => {
      const res = await as(t.app, alice, { method: 'GET', url });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const range = `from=${iso(FROM)}&to=${iso(TO)}`;

    it('reduces a long chart to the screen, its spike and gap exact; without points the answer is as before', async () => {
      const url = `/api/devices/${one.id}/series?params=vave1&interval=1h&${range}`;
      const full = await get(url);
      expect(full.t).toHaveLength(DAYS * 24);
      expect(full).not.toHaveProperty('reduced');
      // A `points` the answer fits in changes nothing.
      expect(await get(`${url}&points=10000`)).toEqual(full);

      const reduced = await get(`${url}&points=${POINTS}`);
      expectSameSpan(reduced, full);
      // One row per pixel column, and one more where the gap starts and where it ends.
      expect(reduced.t.length).toBeLessThanOrEqual(POINTS + 2);
      const s = reduced.series.vave1!;
      const f = full.series.vave1!;
      expect(Math.max(...values(s.max))).toBe(400);
      expect(Math.max(...values(s.max))).toBe(Math.max(...values(f.max)));
      expect(Math.min(...values(s.min))).toBe(Math.min(...values(f.min)));
      // The spike's pixel column holds it.
      const k = reduced.t.findLastIndex((x) => x <= SPIKE);
      expect(s.max![k]).toBe(400);
      // The gap stays a gap: a null row at its first empty hour, values again from its end.
      const g = reduced.t.indexOf(GAP[0]);
      expect(g).toBeGreaterThan(0);
      expect([s.avg![g], s.min![g], s.max![g]]).toEqual([null, null, null]);
      expect(reduced.t[g + 1]).toBe(GAP[1]);
      expect(s.avg![g + 1]).not.toBeNull();
      expect(values(s.avg)).toHaveLength(reduced.t.length - 1);
      // The averages stay the readings' level.
      for (const x of values(s.avg)) expect(x).toBeGreaterThan(229.9);
      // The answer without points is unchanged by having been asked with them.
      expect(await get(url)).toEqual(full);
    });

    it('reduces every member of a comparison, bands and plain averages alike', async () => {
      const created = await as(t.app, alice, {
        method: 'POST',
        url: '/api/comparisons',
        payload: {
          name: 'Two meters',
          members: [
            { deviceId: one.id, param: 'vave1' },
            { deviceId: two.id, param: 'vave1' },
          ],
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const base = `/api/comparisons/${created.json().id}/data?interval=1h&${range}`;
      for (const stats of ['avg,min,max', 'avg']) {
        const full = await get(`${base}&stats=${stats}`);
        expect(await get(`${base}&stats=${stats}&points=10000`)).toEqual(full);
        const reduced = await get(`${base}&stats=${stats}&points=${POINTS}`);
        expect(reduced.interval).toBe(full.interval);
        const blocks = (x: typeof full) => x.blocks as { deviceId: number; data: Block }[];
        expect(blocks(reduced).map((b) => b.deviceId)).toEqual([one.id, two.id]);
        for (const [i, b] of blocks(reduced).entries()) {
          const fb = blocks(full)[i]!.data;
          expect(fb).not.toHaveProperty('reduced');
          expectSameSpan(b.data, fb);
          const s = b.data.series.vave1!;
          const f = fb.series.vave1!;
          if (stats === 'avg') {
            // M4: a pixel column's first, last, lowest and highest hour, as they were.
            expect(b.data.t.length).toBeLessThanOrEqual(4 * POINTS + 2);
            expect(s.min).toBeUndefined();
            expect(Math.max(...values(s.avg))).toBe(Math.max(...values(f.avg)));
            expect(Math.min(...values(s.avg))).toBe(Math.min(...values(f.avg)));
            b.data.t.forEach((x, k) => {
              expect(s.avg![k]).toBe(f.avg![fb.t.indexOf(x)]);
            });
          } else {
            expect(b.data.t.length).toBeLessThanOrEqual(POINTS + 2);
            expect(Math.max(...values(s.max))).toBe(Math.max(...values(f.max)));
            expect(Math.min(...values(s.min))).toBe(Math.min(...values(f.min)));
          }
        }
        const [first, second] = blocks(reduced).map((b) => b.data.series.vave1!);
        if (stats !== 'avg') {
          expect(Math.max(...values(first!.max))).toBe(400);
          expect(Math.min(...values(second!.min))).toBe(180);
        }
      }
    });

    it.each([
      ['too few', '9'],
      ['too many', '10001'],
      ['not a number', 'wide'],
    ])('answers 400 naming the range for points %s', async (_name, points) => {
      for (const url of [
        `/api/devices/${one.id}/series?params=vave1&${range}&points=${points}`,
        `/api/comparisons/999999/data?${range}&points=${points}`,
      ]) {
        const res = await as(t.app, alice, { method: 'GET', url });
        expect(res.statusCode, url).toBe(400);
        expect(res.json().errors.points).toEqual([
          'Must be greater than or equal to 10, and less than or equal to 10000.',
        ]);
      }
    });
  });
}
