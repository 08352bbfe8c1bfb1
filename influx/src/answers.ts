/**
 * Bucketed answers: series and energy, from rollups (`auto`) or straight from raw readings (`raw`) with
 * the same arithmetic. Daily and monthly buckets are local-calendar buckets of the zone summed from hourly
 * rollups, or 15-minute ones where the zone's offset is not whole hours (docs/domain.md §Time).
 */
import {
  CALENDAR_UNIT_OF,
  COMBINED_PARAMS,
  type CounterEvent,
  type CounterPoint,
  calendarBuckets,
  combinedParamDef,
  combinedValues,
  counterRules,
  DEFAULT_TIMEZONE,
  energyPerBucket,
  equalLengthRuns,
  fineRollup,
  fixedBucketStarts,
  isCalendarInterval,
  isQueryableParam,
  isRollupInterval,
  isStoredParam,
  isValidTimeZone,
  paramDef,
  sumIntoBuckets,
  sumSeries,
} from '@kilowatch/core';
import {
  checkTimeRange,
  type EnergyQuery,
  type EnergyResult,
  ROLLUP_STEP_MS,
  type RollupInterval,
  type SeriesQuery,
  type SeriesResult,
  type Stat,
  StoreError,
  seriesStats,
} from '@kilowatch/tsdb';
import type { InfluxClient, StatementResult } from './client.ts';
import type { DayRollups } from './dayRollupReader.ts';
import { ident } from './lineProtocol.ts';
import { bucketIndex, decodeEvents, type GaugeAgg } from './rollup.ts';
import { deviceWhere, READINGS, ROLLUP_MEASUREMENT, type Row, readRawRange, rowsOf } from './schema.ts';

const STATS: readonly Stat[] = ['avg', 'min', 'max'];
const COMBINED = new Map(COMBINED_PARAMS.map((c) => [c.name, c]));

function reject(msg: string): StoreError {
  return new StoreError(msg, 'rejected');
}

/** The port's range check (`from == to` is an empty range) and a device key. */
export function checkRange(deviceKey: unknown, from: number, to: number): void {
  if (typeof deviceKey !== 'string' || deviceKey.length === 0) throw reject('deviceKey is required');
  checkTimeRange(from, to);
}

function zoneOf(tz: string | undefined): string {
  const zone = tz ?? DEFAULT_TIMEZONE;
  if (!isValidTimeZone(zone)) throw reject(`unknown time zone: ${zone}`);
  return zone;
}

/** Bucket starts, the end of the last bucket, and the rollup the buckets are summed from. */
interface Buckets {
  starts: number[];
  end: number;
  fine: RollupInterval;
}

function bucketsFor(interval: string, from: number, to: number, tz: string): Buckets {
  if (isRollupInterval(interval)) {
    const step = ROLLUP_STEP_MS[interval];
    const starts = fixedBucketStarts(from, to, step);
    return { starts, end: starts[starts.length - 1]! + step, fine: interval };
  }
  if (isCalendarInterval(interval)) {
    const c = calendarBuckets(from, to, CALENDAR_UNIT_OF[interval], tz);
    return { starts: c.starts, end: c.end, fine: fineRollup(c) };
  }
  throw reject(`unknown interval: ${interval}`);
}

function merge(into: (GaugeAgg | undefined)[], i: number, g: GaugeAgg): void {
  const cur = into[i];
  if (!cur) into[i] = { ...g };
  else {
    cur.sum += g.sum;
    cur.count += g.count;
    cur.min = Math.min(cur.min, g.min);
    cur.max = Math.max(cur.max, g.max);
  }
}

/** Stored parameters a query name needs (the phases of a combined name). */
function storedOf(name: string): readonly string[] {
  return COMBINED.get(name)?.of ?? [name];
}

export async function series(client: InfluxClient, q: SeriesQuery): Promise<SeriesResult> {
  checkRange(q.deviceKey, q.from, q.to);
  const tz = zoneOf(q.tz);
  if (!Array.isArray(q.params) || q.params.length === 0)
    throw reject('params must name at least one parameter');
  for (const p of q.params) if (!isQueryableParam(p)) throw reject(`unknown parameter: ${p}`);
  const stats = seriesStats(q.stats);
  if (q.from === q.to) {
    const series = Object.fromEntries(
      q.params.map((p) => [p, Object.fromEntries(stats.map((st) => [st, []]))]),
    );
    return { interval: q.interval, from: q.from, to: q.to, tz, t: [], series };
  }

  if (q.interval === 'raw') {
    const stored = [...new Set(q.params.flatMap(storedOf))];
    const rows = await readRawRange(client, q.deviceKey, q.from, q.to, stored);
    const out: SeriesResult = { interval: 'raw', from: q.from, to: q.to, tz, t: [], series: {} };
    const cols = q.params.map(() => [] as (number | null)[]);
    for (const row of rows) {
      const combined = new Map(combinedValues(row.values));
      const vals = q.params.map((p) => (isStoredParam(p) ? row.values[p] : combined.get(p)) ?? null);
      if (vals.every((v) => v === null)) continue;
      out.t.push(row.ts);
      vals.forEach((v, i) => {
        cols[i]!.push(v);
      });
    }
    q.params.forEach((p, i) => {
      out.series[p] = Object.fromEntries(stats.map((s) => [s, cols[i]!]));
    });
    return out;
  }

  const b = bucketsFor(q.interval, q.from, q.to, tz);
  const aggs = new Map<string, (GaugeAgg | undefined)[]>(
    q.params.map((p) => [p, new Array(b.starts.length)]),
  );
  if (q.source === 'raw') await rawGauges(client, q, b, aggs);
  else await rollupGauges(client, q, stats, b, aggs);
  const out: SeriesResult = { interval: q.interval, from: q.from, to: q.to, tz, t: b.starts, series: {} };
  for (const p of q.params) {
    const a = aggs.get(p)!;
    const s: SeriesResult['series'][string] = {};
    for (const stat of stats) {
      s[stat] = b.starts.map((_, i) => {
        const g = a[i];
        if (!g) return null;
        return stat === 'avg' ? g.sum / g.count : stat === 'min' ? g.min : g.max;
      });
    }
    out.series[p] = s;
  }
  return out;
}

/** The rollup fields each statistic needs: an average its sum, a minimum the min, a maximum the max. */
function rollupAggregates(stats: readonly Stat[]): ('sum' | 'count' | 'min' | 'max')[] {
  const out: ('sum' | 'count' | 'min' | 'max')[] = ['count'];
  if (stats.includes('avg')) out.unshift('sum');
  if (stats.includes('min')) out.push('min');
  if (stats.includes('max')) out.push('max');
  return out;
}

/** The neutral value of each aggregate's merge, for what was not read. */
const NEUTRAL = { sum: 0, count: 0, min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY };

/**
 * Gauges from rollups. Fixed buckets read the rollup rows themselves. Local days are summed on the server
 * (`bucketStatements`): a year of days comes back as 365 rows instead of 8,760.
 */
async function rollupGauges(
  client: InfluxClient,
  q: SeriesQuery,
  stats: readonly Stat[],
  b: Buckets,
  aggs: Map<string, (GaugeAgg | undefined)[]>,
): Promise<void> {
  const aggregates = rollupAggregates(stats);
  const outer = { sum: 'sum', count: 'sum', min: 'min', max: 'max' } as const;
  const fields = q.params.flatMap((p) =>
    aggregates.map((f) =>
      q.interval === '1d'
        ? `${outer[f]}(${ident(`${p}_${f}`)}) AS ${ident(`${p}_${f}`)}`
        : ident(`${p}_${f}`),
    ),
  );
  const statements = bucketStatements(ROLLUP_MEASUREMENT[b.fine], q, fields, b, null);
  mergeColumns(await client.query(statements.join('; ')), q.params, b, aggs);
}

/**
 * InfluxQL summing `fields` of one device into the buckets. Fixed buckets: one statement, grouped by
 * `groupMs` when given (raw readings) or not at all (rollup rows are the buckets). Local days: each run
 * of equally long, equally aligned days (those between two clock changes) is one
 * `GROUP BY time(length, offset)` statement, and every other day (23 or 25 hours) one of its own.
 */
function bucketStatements(
  measurement: string,
  q: SeriesQuery,
  fields: readonly string[],
  b: Buckets,
  groupMs: number | null,
): string[] {
  const select = `SELECT ${fields.join(', ')} FROM ${measurement} WHERE `;
  if (q.interval === '1d')
    return calendarRuns(b).map(
      (r) =>
        select +
        deviceWhere(q.deviceKey, r.from, r.to) +
        (r.step ? ` GROUP BY time(${r.step}ms, ${r.offset}ms) fill(none)` : ''),
    );
  return [
    select +
      deviceWhere(q.deviceKey, b.starts[0], b.end) +
      (groupMs ? ` GROUP BY time(${groupMs}ms) fill(none)` : ''),
  ];
}

/**
 * Merges answer rows holding `<param>_count` and any of `_sum`, `_min`, `_max` into the buckets; what was
 * not asked takes the neutral value of its merge. Columns are read by position (a year of hours is 8,760
 * rows, and an object per row cost more than the arithmetic); rows come in time order within a series, so
 * the bucket follows a cursor.
 */
function mergeColumns(
  results: readonly StatementResult[],
  params: readonly string[],
  b: Buckets,
  aggs: Map<string, (GaugeAgg | undefined)[]>,
): void {
  for (const res of results)
    for (const s of res.series ?? []) {
      const at = (c: string) => s.columns.indexOf(c);
      const time = at('time');
      const cols = params.map((p) => ({
        agg: aggs.get(p)!,
        count: at(`${p}_count`),
        sum: at(`${p}_sum`),
        min: at(`${p}_min`),
        max: at(`${p}_max`),
      }));
      let i = 0;
      for (const v of s.values) {
        const t = v[time] as number;
        if (t < b.starts[0]! || t >= b.end) continue;
        if (t < b.starts[i]!) i = 0;
        while (i + 1 < b.starts.length && b.starts[i + 1]! <= t) i++;
        for (const c of cols) {
          const count = v[c.count];
          if (typeof count !== 'number' || count === 0) continue;
          merge(c.agg, i, {
            sum: c.sum >= 0 ? (v[c.sum] as number) : NEUTRAL.sum,
            count,
            min: c.min >= 0 ? (v[c.min] as number) : NEUTRAL.min,
            max: c.max >= 0 ? (v[c.max] as number) : NEUTRAL.max,
          });
        }
      }
    }
}

/** A time range of one InfluxQL statement: `step` set when it groups a run of equal buckets. */
interface CalendarRun {
  from: number;
  to: number;
  step?: number;
  offset?: number;
}

/**
 * Core's runs of equally long buckets (local days between two clock changes) as statement ranges: a run of
 * two or more is grouped by `time(step, offset)`, a bucket of its own (a DST day, a month) is not grouped.
 */
export function calendarRuns(b: { starts: readonly number[]; end: number }): CalendarRun[] {
  return equalLengthRuns(b).map((r) =>
    r.count >= 2
      ? { from: r.from, to: r.to, step: r.step, offset: ((r.from % r.step) + r.step) % r.step }
      : { from: r.from, to: r.to },
  );
}

/**
 * Stored gauges by `GROUP BY time()` on the server; combined ones per reading in JS. Only the
 * aggregates the statistics asked for need are computed (each is its own pass over the field's data):
 * an average needs the sum, a minimum the min, a maximum the max, and the count tells a bucket with
 * readings from one without.
 */
async function rawGauges(
  client: InfluxClient,
  q: SeriesQuery,
  b: Buckets,
  aggs: Map<string, (GaugeAgg | undefined)[]>,
): Promise<void> {
  const stored = q.params.filter(isStoredParam);
  const combined = q.params.filter((p) => !isStoredParam(p));
  if (stored.length > 0) {
    const aggregates = rollupAggregates(q.stats.length > 0 ? q.stats : STATS);
    const fields = stored.flatMap((p) => aggregates.map((f) => `${f}(${ident(p)}) AS ${ident(`${p}_${f}`)}`));
    const statements = bucketStatements(READINGS, q, fields, b, ROLLUP_STEP_MS[b.fine]);
    mergeColumns(await client.query(statements.join('; ')), stored, b, aggs);
  }
  if (combined.length > 0) {
    const phases = [...new Set(combined.flatMap(storedOf))];
    const rows = await readRawRange(client, q.deviceKey, b.starts[0]!, b.end, phases);
    for (const row of rows) {
      const i = bucketIndex(b.starts, b.end, row.ts);
      if (i < 0) continue;
      const vals = new Map(combinedValues(row.values));
      for (const p of combined) {
        const v = vals.get(p);
        if (v !== undefined) merge(aggs.get(p)!, i, { sum: v, count: 1, min: v, max: v });
      }
    }
  }
}

function counterPhases(name: string): readonly string[] {
  const def = paramDef(name);
  if (def?.kind === 'counter') return [name];
  const c = combinedParamDef(name);
  if (c?.kind === 'counter') return c.of;
  throw reject(`not an energy counter: ${name}`);
}

/** Per-counter energies summed into the answer's buckets, and the events, from rollup rows. */
function fromRollupRows(
  rows: readonly Row[],
  stored: readonly string[],
  starts: readonly number[],
  perCounter: Map<string, (number | null)[]>,
  events: { counter: string; ev: CounterEvent }[] | null,
): void {
  const fineStarts = rows.map((r) => r.time as number);
  for (const c of stored) {
    const vals = rows.map((r) => {
      const v = r[`${c}_e`];
      return typeof v === 'number' ? v : null;
    });
    perCounter.set(c, sumIntoBuckets(fineStarts, vals, starts));
    if (events)
      for (const r of rows) {
        const s = r[`${c}_ev`];
        if (typeof s === 'string' && s) for (const ev of decodeEvents(s)) events.push({ counter: c, ev });
      }
  }
}

export async function energy(client: InfluxClient, q: EnergyQuery, days?: DayRollups): Promise<EnergyResult> {
  checkRange(q.deviceKey, q.from, q.to);
  const tz = zoneOf(q.tz);
  if (!Array.isArray(q.counters) || q.counters.length === 0)
    throw reject('counters must name at least one counter');
  const phasesOf = new Map(q.counters.map((c) => [c, counterPhases(c)]));
  const stored = [...new Set([...phasesOf.values()].flat())];
  if (q.from === q.to) {
    const energy = Object.fromEntries(q.counters.map((c) => [c, []]));
    return { interval: q.interval, tz, t: [], energy, implausible: [], resets: [] };
  }
  const b = bucketsFor(q.interval, q.from, q.to, tz);
  const perCounter = new Map<string, (number | null)[]>();
  const events: { counter: string; ev: CounterEvent }[] = [];

  if (q.source === 'raw') {
    // The whole history up to the range is replayed, so the baseline entering the first bucket is exactly
    // the one the rollups carried forward (a jitter drop keeps the higher register). Counter buckets are
    // (start, end]: the reading on the range's end closes its last bucket.
    const rows = await readRawRange(client, q.deviceKey, 0, b.end + 1, stored);
    for (const c of stored) {
      const pts: CounterPoint[] = [];
      for (const r of rows) {
        const v = r.values[c];
        if (v !== undefined) pts.push({ ts: r.ts, value: v });
      }
      const res = energyPerBucket(pts, b.starts, b.end, counterRules(c));
      perCounter.set(c, res.energy);
      for (const ev of res.events) events.push({ counter: c, ev });
    }
  } else if ((q.interval === '1d' || q.interval === '1mo') && (await days?.dayRollupsReady(tz))) {
    // One point per local day with its energy and events: daily and monthly answers never read hours.
    const fields = stored.flatMap((c) =>
      q.events === false ? [ident(`${c}_e`)] : [ident(`${c}_e`), ident(`${c}_ev`)],
    );
    const rows = await days!.reader.read(q.deviceKey, fields, b.starts[0]!, b.end, tz);
    fromRollupRows(rows, stored, b.starts, perCounter, events);
  } else {
    // Energy from the rollup that fits, events from the 15-minute one: two statements, one request. The
    // events scan every quarter of the range (InfluxDB filters fields by reading them), so it is left out
    // when they are not asked for.
    const where = deviceWhere(q.deviceKey, b.starts[0], b.end);
    const evFields = stored.map((c) => ident(`${c}_ev`));
    const [res, evRes] = await client.query(
      `SELECT ${stored.map((c) => ident(`${c}_e`)).join(', ')} FROM ${ROLLUP_MEASUREMENT[b.fine]} WHERE ${where}` +
        (q.events === false
          ? ''
          : `; SELECT ${evFields.join(', ')} FROM ${ROLLUP_MEASUREMENT['15m']} WHERE ${where} AND (${evFields.map((f) => `${f} != ''`).join(' OR ')})`),
    );
    fromRollupRows(rowsOf(res?.series), stored, b.starts, perCounter, null);
    for (const row of rowsOf(evRes?.series)) {
      for (const c of stored) {
        const s = row[`${c}_ev`];
        if (typeof s === 'string') for (const ev of decodeEvents(s)) events.push({ counter: c, ev });
      }
    }
  }

  const out: EnergyResult = {
    interval: q.interval,
    tz,
    t: b.starts,
    energy: {},
    implausible: [],
    resets: [],
  };
  for (const [name, phases] of phasesOf) {
    out.energy[name] = sumSeries(phases.map((p) => perCounter.get(p)!));
  }
  events.sort((x, y) => x.ev.at - y.ev.at || x.counter.localeCompare(y.counter));
  for (const { counter, ev } of events) {
    if (ev.kind === 'reset') out.resets.push({ counter, at: ev.at });
    else out.implausible.push({ counter, from: ev.from, to: ev.at, delta: ev.delta });
  }
  return out;
}

/** Exposed for tests: the rollup a daily or monthly answer is summed from. */
export function fineRollupFor(interval: '1d' | '1mo', from: number, to: number, tz: string): RollupInterval {
  return bucketsFor(interval, from, to, tz).fine;
}
