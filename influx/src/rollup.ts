/**
 * Rollup buckets computed in JS from raw readings with core's counter rules (InfluxQL cannot express
 * resets, jitter and implausible jumps). 15-minute buckets come from raw; 30-minute and hourly buckets
 * add up 15-minute ones: gauge sum/count/min/max combine, and because each counter step belongs to the
 * bucket its later reading closes (`(start, end]`), a coarse bucket's energy is the sum of its quarters'.
 */
import {
  bucketIndexOf,
  COMBINED_PARAMS,
  COUNTER_NAMES,
  type CounterEvent,
  type CounterPoint,
  combinePhases,
  counterBucketStart,
  counterRules,
  energyPerBucket,
  fixedBucketStart,
  ROLLUP_STEP_MS,
} from '@kilowatch/core';
import type { RawRow } from '@kilowatch/tsdb';
import { escapeKey, escapeMeasurement, formatFloat, quoteString } from './lineProtocol.ts';

export const QUARTER_MS = ROLLUP_STEP_MS['15m'];

export interface GaugeAgg {
  sum: number;
  count: number;
  min: number;
  max: number;
}

export interface RollupBucket {
  start: number;
  gauges: Map<string, GaugeAgg>;
  /** Energy per counter; present when the bucket holds a reading of that counter. */
  energy: Map<string, number>;
  /** Resets and implausible jumps per counter (15-minute buckets only). */
  events: Map<string, CounterEvent[]>;
  /** Each counter's baseline after the bucket (15-minute buckets only). */
  baselines: Map<string, CounterPoint>;
}

const COUNTERS = new Set(COUNTER_NAMES);

function addGauge(gauges: Map<string, GaugeAgg>, name: string, v: number): void {
  const g = gauges.get(name);
  if (!g) gauges.set(name, { sum: v, count: 1, min: v, max: v });
  else {
    g.sum += v;
    g.count++;
    if (v < g.min) g.min = v;
    if (v > g.max) g.max = v;
  }
}

function bucketAt(map: Map<number, RollupBucket>, start: number): RollupBucket {
  let b = map.get(start);
  if (!b) {
    b = { start, gauges: new Map(), energy: new Map(), events: new Map(), baselines: new Map() };
    map.set(start, b);
  }
  return b;
}

/**
 * 15-minute buckets from `start` to `end` (both on 15-minute boundaries) from the device's raw rows in time
 * order: gauges of the rows in [start, end), counter steps of the rows in (start, end], each in the quarter
 * it closes (`(start, end]`, core `counterBucketStart`). `baselines` holds each counter's last reading at or
 * before `start` and is advanced to `end`, so consecutive ranges chain.
 */
export function quarterBuckets(
  rows: readonly RawRow[],
  start: number,
  end: number,
  baselines: Map<string, CounterPoint | null>,
): Map<number, RollupBucket> {
  const out = new Map<number, RollupBucket>();
  const counterPoints = new Map<string, CounterPoint[]>();
  for (const row of rows) {
    if (row.ts < start || row.ts > end) continue;
    if (row.ts > start) {
      for (const name in row.values) {
        if (!COUNTERS.has(name)) continue;
        const p = { ts: row.ts, value: row.values[name]! };
        const pts = counterPoints.get(name);
        if (pts) pts.push(p);
        else counterPoints.set(name, [p]);
      }
    }
    if (row.ts === end) continue;
    const b = bucketAt(out, fixedBucketStart(row.ts, QUARTER_MS));
    for (const name in row.values) addGauge(b.gauges, name, row.values[name]!);
    for (const c of COMBINED_PARAMS) {
      const v = combinePhases(c, row.values);
      if (v !== undefined) addGauge(b.gauges, c.name, v);
    }
  }
  for (const [counter, pts] of counterPoints) {
    const rules = counterRules(counter);
    let baseline = baselines.get(counter) ?? null;
    // Bucket by bucket (the same steps as one pass), keeping the baseline after each 15-minute bucket so a
    // later recompute can start from it exactly: a jitter drop keeps the higher register as baseline.
    for (let i = 0; i < pts.length; ) {
      const bs = counterBucketStart(pts[i]!.ts, QUARTER_MS);
      let j = i;
      while (j < pts.length && pts[j]!.ts <= bs + QUARTER_MS) j++;
      const res = energyPerBucket(pts.slice(i, j), [bs], bs + QUARTER_MS, rules, baseline);
      baseline = res.baseline;
      const b = bucketAt(out, bs);
      b.energy.set(counter, res.energy[0] ?? 0);
      if (baseline) b.baselines.set(counter, baseline);
      if (res.events.length > 0) b.events.set(counter, res.events);
      i = j;
    }
    baselines.set(counter, baseline);
  }
  return out;
}

/** Coarser buckets (30 min, 1 h) from 15-minute ones. */
export function coarsen(quarters: Iterable<RollupBucket>, stepMs: number): Map<number, RollupBucket> {
  const out = new Map<number, RollupBucket>();
  for (const q of quarters) {
    const b = bucketAt(out, fixedBucketStart(q.start, stepMs));
    for (const [name, g] of q.gauges) {
      const cur = b.gauges.get(name);
      if (!cur) b.gauges.set(name, { ...g });
      else {
        cur.sum += g.sum;
        cur.count += g.count;
        if (g.min < cur.min) cur.min = g.min;
        if (g.max > cur.max) cur.max = g.max;
      }
    }
    for (const [c, e] of q.energy) b.energy.set(c, (b.energy.get(c) ?? 0) + e);
  }
  return out;
}

/** `r:<at>:<from>:<delta>;i:…` — events kept in one string field of the 15-minute bucket. */
export function encodeEvents(events: readonly CounterEvent[]): string {
  return events.map((e) => `${e.kind === 'reset' ? 'r' : 'i'}:${e.at}:${e.from}:${e.delta}`).join(';');
}

export function decodeEvents(s: string): CounterEvent[] {
  if (!s) return [];
  const out: CounterEvent[] = [];
  for (const part of s.split(';')) {
    const [k, at, from, delta] = part.split(':');
    if ((k !== 'r' && k !== 'i') || at === undefined || from === undefined || delta === undefined) continue;
    out.push({
      kind: k === 'r' ? 'reset' : 'implausible',
      at: Number(at),
      from: Number(from),
      delta: Number(delta),
    });
  }
  return out;
}

/**
 * Fields of a rollup point: `<p>_sum/_count/_min/_max`, `<counter>_e`; at 15 minutes also `<counter>_ev`
 * (events) and `<counter>_bv`/`_bt` (baseline value and time after the bucket).
 */
export function bucketFields(b: RollupBucket, withEvents: boolean): Record<string, number | string> {
  const f: Record<string, number | string> = {};
  for (const [name, g] of b.gauges) {
    const k = keysOf(name);
    f[k.sum] = g.sum;
    f[k.count] = g.count;
    f[k.min] = g.min;
    f[k.max] = g.max;
  }
  for (const [c, e] of b.energy) {
    const k = keysOf(c);
    f[k.e] = e;
    if (withEvents) {
      // Always written where the counter has a reading, so a recompute clears stale events.
      f[k.ev] = encodeEvents(b.events.get(c) ?? []);
      const base = b.baselines.get(c);
      if (base) {
        f[k.bv] = base.value;
        f[k.bt] = base.ts;
      }
    }
  }
  return f;
}

/**
 * The line-protocol line of a rollup point, built directly (the same text as `encodeLine` of
 * `bucketFields`): catalogue names need no escaping, and refreshes write hundreds of fields per line.
 */
export function bucketLine(
  measurement: string,
  deviceTag: string,
  b: RollupBucket,
  withEvents: boolean,
): string {
  let line = '';
  for (const [name, g] of b.gauges) {
    const k = keysOf(name);
    line += `,${k.sum}=${formatFloat(g.sum)},${k.count}=${g.count},${k.min}=${formatFloat(g.min)},${k.max}=${formatFloat(g.max)}`;
  }
  for (const [c, e] of b.energy) {
    const k = keysOf(c);
    line += `,${k.e}=${formatFloat(e)}`;
    if (withEvents) {
      line += `,${k.ev}=${quoteString(encodeEvents(b.events.get(c) ?? []))}`;
      const base = b.baselines.get(c);
      if (base) line += `,${k.bv}=${formatFloat(base.value)},${k.bt}=${base.ts}`;
    }
  }
  if (line === '') return '';
  return `${escapeMeasurement(measurement)},device=${escapeKey(deviceTag)} ${line.slice(1)} ${b.start}`;
}

interface FieldKeys {
  sum: string;
  count: string;
  min: string;
  max: string;
  e: string;
  ev: string;
  bv: string;
  bt: string;
}
const fieldKeys = new Map<string, FieldKeys>();

/** Rollup field names of a parameter, built once. */
export function keysOf(name: string): FieldKeys {
  let k = fieldKeys.get(name);
  if (!k) {
    k = {
      sum: `${name}_sum`,
      count: `${name}_count`,
      min: `${name}_min`,
      max: `${name}_max`,
      e: `${name}_e`,
      ev: `${name}_ev`,
      bv: `${name}_bv`,
      bt: `${name}_bt`,
    };
    fieldKeys.set(name, k);
  }
  return k;
}

/** Index of the bucket holding `ts` (starts ascending), or -1 outside [starts[0], end). */
export function bucketIndex(starts: readonly number[], end: number, ts: number): number {
  return ts >= end ? -1 : bucketIndexOf(starts, ts);
}

interface DayAgg {
  energy: Map<string, number>;
  /** Encoded event strings of the day's quarters, in the order added. */
  events: Map<string, string[]>;
}

/**
 * Energy per local day of one zone, summed from 15-minute energies (a quarter never straddles a local
 * midnight: every zone's offset is a multiple of 15 minutes), with the day's resets and implausible
 * jumps. `starts` are the local midnights of the days (from `calendarBucketStarts`), `end` the last one's
 * end; quarters outside [starts[0], end) are ignored.
 */
export class DayEnergy {
  private readonly days: (DayAgg | undefined)[];

  constructor(
    readonly starts: readonly number[],
    readonly end: number,
  ) {
    this.days = new Array(starts.length);
  }

  private at(ts: number): DayAgg | undefined {
    const i = bucketIndex(this.starts, this.end, ts);
    if (i < 0) return undefined;
    let d = this.days[i];
    if (!d) {
      d = { energy: new Map(), events: new Map() };
      this.days[i] = d;
    }
    return d;
  }

  /** Adds one quarter's energy of a counter and its encoded events (`encodeEvents`, may be empty). */
  add(quarterStart: number, counter: string, energy: number, events: string): void {
    const d = this.at(quarterStart);
    if (!d) return;
    d.energy.set(counter, (d.energy.get(counter) ?? 0) + energy);
    const evs = d.events.get(counter);
    if (events) {
      if (evs) evs.push(events);
      else d.events.set(counter, [events]);
    } else if (!evs) d.events.set(counter, []);
  }

  addQuarter(q: RollupBucket): void {
    for (const [c, e] of q.energy) this.add(q.start, c, e, encodeEvents(q.events.get(c) ?? []));
  }

  /** Energy of a day per counter (tests and answers); undefined when the day holds no counter reading. */
  energyOf(dayStart: number): ReadonlyMap<string, number> | undefined {
    const i = bucketIndex(this.starts, this.end, dayStart);
    return i < 0 ? undefined : this.days[i]?.energy;
  }

  /**
   * Line-protocol lines of the days holding a counter reading: `<c>_e` (the day's energy) and `<c>_ev`
   * (its events, empty when none — always written so a recompute clears stale ones).
   */
  lines(measurement: string, deviceTag: string, zone: string): string[] {
    const out: string[] = [];
    const head = `${escapeMeasurement(measurement)},device=${escapeKey(deviceTag)},tz=${escapeKey(zone)} `;
    this.days.forEach((d, i) => {
      if (!d || d.energy.size === 0) return;
      let fields = '';
      for (const [c, e] of d.energy) {
        const k = keysOf(c);
        const evs = (d.events.get(c) ?? []).flatMap(decodeEvents).sort((a, b) => a.at - b.at);
        fields += `,${k.e}=${formatFloat(e)},${k.ev}=${quoteString(encodeEvents(evs))}`;
      }
      out.push(`${head}${fields.slice(1)} ${this.starts[i]}`);
    });
    return out;
  }
}
