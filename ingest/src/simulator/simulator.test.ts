import { type ColumnBatch, createDuckDbStore } from '@kilowatch/tsdb';
import { describe, expect, it } from 'vitest';
import { decodeMessage } from '../decoders/index.ts';
import { backfillHistory } from './backfill.ts';
import { DEMO_DEVICES, type SimulatedDevice } from './devices.ts';
import { simulatedReading } from './readings.ts';

const MIN = 60_000;
const byKind = (kind: SimulatedDevice['kind'], typeCode?: number) =>
  DEMO_DEVICES.find(
    (d) => d.kind === kind && (typeCode === undefined || d.typeCode === typeCode),
  ) as SimulatedDevice;

describe('demo devices', () => {
  it('cover every kind and the type codes of the details pages', () => {
    expect(DEMO_DEVICES.map((d) => d.typeCode).sort((a, b) => a - b)).toEqual([1, 2, 10, 13, 16, 17]);
    expect(new Set(DEMO_DEVICES.map((d) => d.kind))).toEqual(
      new Set(['three-phase', 'single-phase', 'solar', 'energy', 'thermostat']),
    );
    for (const d of DEMO_DEVICES) expect(d.deviceKey).toMatch(/^[0-9a-f]{12}$/);
  });

  it('add up at the demo home: grid import − export + PV = the house, the heat pump and 150 W unmetered', () => {
    const byName = (name: string) => DEMO_DEVICES.find((d) => d.name === name)!;
    const grid = byName('Grid connection');
    const pv = byName('Roof PV 8 kWp');
    const house = byName('House main meter');
    const pump = byName('Heat pump meter');
    expect([grid.role, pump.role]).toEqual(['grid', 'consumer']);
    const sum = (d: SimulatedDevice, prefix: 'eai' | 'eae', ts: number) => {
      const v = simulatedReading(d, ts).values;
      return v[`${prefix}1`]! + v[`${prefix}2`]! + v[`${prefix}3`]!;
    };
    // A June day and a December day: sunny noon export and a winter evening on the grid.
    for (const day of ['2026-06-21T00:00:00Z', '2026-12-21T00:00:00Z']) {
      const a = Date.parse(day);
      const b = a + 24 * 60 * MIN;
      const delta = (d: SimulatedDevice, prefix: 'eai' | 'eae') => sum(d, prefix, b) - sum(d, prefix, a);
      const home = delta(grid, 'eai') - delta(grid, 'eae') + delta(pv, 'eae') - delta(pv, 'eai');
      const metered = delta(house, 'eai') + delta(pump, 'eai');
      // 150 W for 24 h is 3.6 kWh, within the registers' rounding (and the PV's standby draw).
      expect(home - metered).toBeGreaterThan(3.4);
      expect(home - metered).toBeLessThan(3.9);
    }
    const noon = Date.parse('2026-06-21T10:00:00Z');
    expect(sum(grid, 'eae', noon + 60 * MIN) - sum(grid, 'eae', noon)).toBeGreaterThan(1);
  });

  it.each(DEMO_DEVICES.map((d) => [d.name, d] as const))(
    '%s: a year of hourly readings all pass ingest validation',
    (_n, device) => {
      const from = Date.parse('2026-01-01T00:00:00Z');
      for (let ts = from; ts < from + 365 * 24 * 60 * MIN; ts += 60 * MIN + 7 * MIN) {
        const r = simulatedReading(device, ts);
        const decoded = decodeMessage(
          `kilowatch/meters/${device.deviceKey}/readings`,
          JSON.stringify({ ts, values: r.values }),
          {
            now: ts,
          },
        );
        if (decoded.kind !== 'readings')
          throw new Error(`${device.name} at ${new Date(ts).toISOString()}: ${JSON.stringify(decoded)}`);
      }
    },
  );
});

describe('simulated readings', () => {
  const house = byKind('three-phase');
  const ts = Date.parse('2026-11-22T18:30:00Z');

  it('are deterministic given the seed', () => {
    expect(simulatedReading(house, ts, { seed: 7 })).toEqual(simulatedReading(house, ts, { seed: 7 }));
    expect(simulatedReading(house, ts, { seed: 7 }).values.vave1).not.toBe(
      simulatedReading(house, ts, { seed: 8 }).values.vave1,
    );
  });

  it('a three-phase household meter reports ~40 values near 230 V, 50 Hz, PF 0.9–0.99', () => {
    const { values } = simulatedReading(house, ts);
    expect(Object.keys(values).length).toBeGreaterThanOrEqual(38);
    for (const n of [1, 2, 3]) {
      expect(values[`vave${n}`]).toBeGreaterThan(220);
      expect(values[`vave${n}`]).toBeLessThan(240);
      expect(values[`pfave${n}`]).toBeGreaterThanOrEqual(0.88);
      expect(values[`pfave${n}`]).toBeLessThanOrEqual(0.995);
      expect(values[`pmin${n}`]).toBeLessThanOrEqual(values[`pave${n}`] as number);
      expect(values[`pmax${n}`]).toBeGreaterThanOrEqual(values[`pave${n}`] as number);
    }
    expect(Math.abs((values.frq1 as number) - 50)).toBeLessThan(0.2);
  });

  it('evening load is higher than night load; winter higher than summer', () => {
    const mean = (from: number) => {
      let s = 0;
      for (let i = 0; i < 30; i++) s += simulatedReading(house, from + i * MIN).values.power3phases as number;
      return s / 30;
    };
    expect(mean(Date.parse('2026-11-18T18:00:00Z'))).toBeGreaterThan(
      2 * mean(Date.parse('2026-11-18T02:00:00Z')),
    );
    expect(mean(Date.parse('2026-01-14T18:00:00Z'))).toBeGreaterThan(
      mean(Date.parse('2026-07-15T18:00:00Z')),
    );
  });

  it('solar produces nothing at night, most at noon in June, more in June than in December', () => {
    const pv = byKind('solar');
    const p = (iso: string) =>
      simulatedReading(pv, Date.parse(iso), { seed: 3 }).values.power3phases as number;
    expect(p('2026-06-20T23:00:00Z')).toBe(0);
    expect(simulatedReading(pv, Date.parse('2026-06-20T23:00:00Z')).values.vdc1).toBe(0);
    let june = 0;
    let december = 0;
    for (let d = 1; d <= 20; d++) {
      june += p(`2026-06-${String(d).padStart(2, '0')}T10:40:00Z`);
      december += p(`2026-12-${String(d).padStart(2, '0')}T10:40:00Z`);
    }
    expect(june).toBeGreaterThan(2 * december);
    expect(simulatedReading(pv, Date.parse('2026-06-20T10:40:00Z')).values.vdc1).toBeGreaterThan(300);
  });

  it('a thermostat reports temperature, set point and relay state', () => {
    const { values } = simulatedReading(byKind('thermostat'), Date.parse('2026-01-14T10:00:00Z'));
    expect(Object.keys(values).sort()).toEqual(['rel1', 'tempmain', 'tempset']);
    expect(values.tempset).toBe(21);
    expect([0, 1]).toContain(values.rel1);
  });

  it.each(DEMO_DEVICES.filter((d) => d.kind !== 'thermostat').map((d) => [d.name, d] as const))(
    '%s: counters only ever increase over two days',
    (_n, device) => {
      const from = Date.parse('2026-03-28T00:00:00Z'); // spans the spring DST change
      let prev = simulatedReading(device, from).values;
      let grew = false;
      for (let ts = from + MIN; ts < from + 2 * 1440 * MIN; ts += MIN) {
        const { values } = simulatedReading(device, ts);
        for (const [name, v] of Object.entries(values)) {
          if (!/^(eai|eae|eri|ere|energy3phases_|renergy3phases_)/.test(name)) continue;
          expect(v, name).toBeGreaterThanOrEqual(prev[name] as number);
          if (v > (prev[name] as number)) grew = true;
        }
        prev = values;
      }
      expect(grew).toBe(true);
    },
  );

  it('resets counters deliberately when configured', () => {
    const every = 1;
    const before = simulatedReading(house, Date.parse('2026-05-10T23:59:00Z'), {
      counterResetEveryDays: every,
    }).values.eai1 as number;
    const after = simulatedReading(house, Date.parse('2026-05-11T00:01:00Z'), {
      counterResetEveryDays: every,
    }).values.eai1 as number;
    expect(after).toBeLessThan(before);
    expect(after).toBeGreaterThanOrEqual(0);
  });
});

describe('backfillHistory', () => {
  it('writes every device at 1-minute resolution into DuckDB', async () => {
    const store = await createDuckDbStore();
    try {
      const from = Date.parse('2026-11-01T00:00:00Z');
      const { readings } = await backfillHistory(store, DEMO_DEVICES, {
        from,
        to: from + 2 * 1440 * MIN,
        batchSize: 5000,
      });
      expect(readings).toBe(2 * 1440 * DEMO_DEVICES.length);
      expect((await store.devices()).sort()).toEqual(DEMO_DEVICES.map((d) => d.deviceKey).sort());
      const page = await store.readRaw({
        deviceKey: byKind('three-phase').deviceKey,
        from,
        to: from + 10 * MIN,
        limit: 100,
      });
      expect(page.items.map((r) => r.ts - from)).toEqual(Array.from({ length: 10 }, (_, i) => i * MIN));
    } finally {
      await store.close();
    }
  });

  it("generated in a worker thread, stores the same readings, rollups and energy as on the caller's thread", async () => {
    const here = await createDuckDbStore();
    const there = await createDuckDbStore();
    try {
      const from = Date.parse('2026-10-24T00:00:00Z');
      const to = from + 1440 * MIN;
      const opts = { from, to, batchSize: 4000, seed: 7 };
      const progress: number[] = [];
      // What reaches the store: readings laid out in columns already (by the thread); once the store asks
      // for the next batch, the one before has gone back to the thread (its buffers detached here).
      const kinds = new Set<string>();
      const released: boolean[] = [];
      const bulk = there.writeBulk.bind(there);
      there.writeBulk = (batches) =>
        bulk(
          (async function* () {
            let previous: ColumnBatch | null = null;
            for await (const x of batches) {
              kinds.add(Array.isArray(x) ? 'readings' : 'columns');
              if (previous) released.push(previous.ts.byteLength === 0 && previous.dev.byteLength === 0);
              previous = Array.isArray(x) ? null : (x as ColumnBatch);
              yield x;
            }
          })(),
        );
      const a = await backfillHistory(here, DEMO_DEVICES, opts);
      const b = await backfillHistory(there, DEMO_DEVICES, {
        ...opts,
        thread: true,
        onProgress: (done) => progress.push(done),
      });
      expect(b).toEqual(a);
      expect([...kinds]).toEqual(['columns']);
      expect(released.length).toBeGreaterThan(0);
      expect(released.every(Boolean)).toBe(true);
      expect(b.readings).toBe(1440 * DEMO_DEVICES.length);
      expect(progress.at(-1)).toBe(b.readings);
      await here.refreshRollups(to);
      await there.refreshRollups(to);
      for (const d of DEMO_DEVICES) {
        const raw = { deviceKey: d.deviceKey, from, to, limit: 2000 };
        expect((await there.readRaw(raw)).items).toEqual((await here.readRaw(raw)).items);
        expect(await there.latest(d.deviceKey)).toEqual(await here.latest(d.deviceKey));
      }
      const energy = {
        deviceKey: byKind('three-phase').deviceKey,
        counters: ['eai1', 'eai2', 'eai3'],
        from,
        to,
        interval: '1h',
        tz: 'Europe/Warsaw',
      } as const;
      const e = await there.energy(energy);
      expect(e.energy.eai1!.reduce<number>((s, y) => s + (y ?? 0), 0)).toBeGreaterThan(0);
      expect(e).toEqual(await here.energy(energy));
    } finally {
      await here.close();
      await there.close();
    }
  }, 90_000);
});
