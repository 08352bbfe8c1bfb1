import {
  type CounterPoint,
  combinedValues,
  counterRules,
  energyPerBucket,
  fixedBucketStarts,
  HOUR_MS,
} from '@kilowatch/core';
import type { RawRow } from '@kilowatch/tsdb';
import { describe, expect, it } from 'vitest';
import { encodeLine } from './lineProtocol.ts';
import {
  bucketFields,
  bucketLine,
  coarsen,
  decodeEvents,
  encodeEvents,
  QUARTER_MS,
  quarterBuckets,
} from './rollup.ts';

const T0 = Date.UTC(2025, 0, 6);
const MIN = 60_000;

describe('combinedValues', () => {
  it.each([
    [{ vave1: 230, vave2: 232, vave3: 234 }, 'vave', 232],
    [{ vave1: 230, vave3: 240 }, 'vave', 235],
    [{ pave1: 100, pave2: -40 }, 'pave', 60],
    [{ eai1: 1, eai2: 2, eai3: 3 }, 'eai', 6],
  ])('%j → %s = %d', (values, name, expected) => {
    expect(new Map(combinedValues(values)).get(name)).toBe(expected);
  });

  it('leaves out a combined name with no phase present', () => {
    expect(new Map(combinedValues({ frq1: 50 })).has('vave')).toBe(false);
  });
});

describe('quarterBuckets and coarsen', () => {
  it('match energyPerBucket over the same range, chained across windows', () => {
    const pts: CounterPoint[] = [];
    let v = 1000;
    for (let i = 0; i < 600; i++) {
      // Deterministic mix of rises, jitter, a reset and an implausible jump.
      if (i === 200) v = 5;
      else if (i === 400) v += 50_000;
      else if (i % 17 === 0) v -= 0.005;
      else v += (i % 5) * 0.1;
      if (i % 50 < 45) pts.push({ ts: T0 + i * 3 * MIN, value: v });
    }
    const rows: RawRow[] = pts.map((p) => ({ ts: p.ts, values: { eai1: p.value } }));
    const end = T0 + 30 * HOUR_MS;
    const starts = fixedBucketStarts(T0, end, QUARTER_MS);
    const reference = energyPerBucket(pts, starts, end, counterRules('eai1'));

    // The reading on T0 is the baseline entering the first quarter ((start, end]), as a refresh seeds it.
    const baselines = new Map<string, CounterPoint | null>([['eai1', pts[0]!]]);
    const quarters = new Map([
      ...quarterBuckets(rows, T0, T0 + 12 * HOUR_MS, baselines),
      ...quarterBuckets(rows, T0 + 12 * HOUR_MS, end, baselines),
    ]);
    starts.forEach((s, i) => {
      const e = quarters.get(s)?.energy.get('eai1');
      if (reference.energy[i] === null) expect(e).toBeUndefined();
      else expect(e).toBeCloseTo(reference.energy[i]!, 9);
    });
    const events = [...quarters.values()].flatMap((b) => b.events.get('eai1') ?? []);
    expect(events.map((e) => e.kind)).toEqual(reference.events.map((e) => e.kind));
    expect(events.map((e) => e.kind)).toEqual(['reset', 'implausible']);

    const hours = coarsen(quarters.values(), HOUR_MS);
    const hourStarts = fixedBucketStarts(T0, end, HOUR_MS);
    const hourly = energyPerBucket(pts, hourStarts, end, counterRules('eai1'));
    hourStarts.forEach((s, i) => {
      const e = hours.get(s)?.energy.get('eai1');
      if (hourly.energy[i] === null) expect(e).toBeUndefined();
      else expect(e).toBeCloseTo(hourly.energy[i]!, 9);
    });
  });

  it('puts a counter reading on a quarter edge in the quarter it closes, a gauge sample in the one it opens', () => {
    const rows: RawRow[] = [0, 15, 30].map((m, i) => ({
      ts: T0 + m * MIN,
      values: { eai1: 10 + i, vave1: 230 },
    }));
    // The window (T0, T0 + 30 min]: the reading on T0 is the baseline, the one on its end closes it.
    const baselines = new Map<string, CounterPoint | null>([['eai1', { ts: T0, value: 10 }]]);
    const quarters = quarterBuckets(rows, T0, T0 + 30 * MIN, baselines);
    expect([...quarters.keys()].sort()).toEqual([T0, T0 + QUARTER_MS]);
    expect(quarters.get(T0)!.energy.get('eai1')).toBe(1);
    expect(quarters.get(T0 + QUARTER_MS)!.energy.get('eai1')).toBe(1);
    expect(quarters.get(T0)!.gauges.get('vave1')!.count).toBe(1);
    expect(quarters.get(T0 + QUARTER_MS)!.gauges.get('vave1')!.count).toBe(1);
    expect(baselines.get('eai1')).toEqual({ ts: T0 + 30 * MIN, value: 12 });
  });

  it('combines gauge sum, count, min and max into coarser buckets', () => {
    const rows: RawRow[] = [0, 10, 20, 50].map((m, i) => ({ ts: T0 + m * MIN, values: { vave1: 230 + i } }));
    const quarters = quarterBuckets(rows, T0, T0 + HOUR_MS, new Map());
    expect(quarters.size).toBe(3);
    const hour = coarsen(quarters.values(), HOUR_MS).get(T0)!;
    expect(hour.gauges.get('vave1')).toEqual({ sum: 926, count: 4, min: 230, max: 233 });
    expect(hour.gauges.get('vave')).toEqual({ sum: 926, count: 4, min: 230, max: 233 });
    expect(bucketFields(hour, false)).toMatchObject({
      vave1_sum: 926,
      vave1_count: 4,
      vave1_min: 230,
      vave1_max: 233,
    });
  });

  it('writes an empty event field where a counter has readings, so recomputes clear stale events', () => {
    const quarters = quarterBuckets([{ ts: T0 + MIN, values: { eai1: 1 } }], T0, T0 + QUARTER_MS, new Map());
    expect(bucketFields(quarters.get(T0)!, true)).toMatchObject({ eai1_e: 0, eai1_ev: '' });
  });
});

describe('bucketLine', () => {
  it('is the line encodeLine makes of bucketFields', () => {
    const rows: RawRow[] = [
      { ts: T0 + MIN, values: { vave1: 230.5, eai1: 10, pave1: -0 } },
      { ts: T0 + 2 * MIN, values: { vave1: 231, vave2: 229, eai1: 5 } },
    ];
    const q = quarterBuckets(rows, T0, T0 + HOUR_MS, new Map()).get(T0)!;
    expect(q.events.get('eai1')).toHaveLength(1);
    for (const withEvents of [true, false]) {
      expect(bucketLine('rollup_15m', 'a1b2c3d4e5f6', q, withEvents)).toBe(
        encodeLine('rollup_15m', { device: 'a1b2c3d4e5f6' }, bucketFields(q, withEvents), T0),
      );
    }
  });
});

describe('event encoding', () => {
  it('round-trips resets and implausible jumps', () => {
    const events = [
      { kind: 'reset' as const, at: T0 + 1, from: T0, delta: -98.5 },
      { kind: 'implausible' as const, at: T0 + 5, from: T0 + 1, delta: 2000 },
    ];
    expect(decodeEvents(encodeEvents(events))).toEqual(events);
    expect(decodeEvents('')).toEqual([]);
  });
});
