/**
 * The series reader: gauges (and counters' register values) per bucket — from the rollup tables, or
 * aggregated from raw readings (`source: 'raw'`) — and raw points. Several devices' series that share a
 * range, interval, zone and source are read in one query (`seriesMany`).
 */
import { DEFAULT_TIMEZONE, fineRollup, isQueryableParam, isRollupInterval } from '@kilowatch/core';
import {
  checkTimeRange,
  ROLLUP_STEP_MS,
  type SeriesInterval,
  type SeriesQuery,
  type SeriesResult,
  type Stat,
  seriesStats,
} from '../port.ts';
import { bucketStartSql } from './calendar.ts';
import { type DoubleColumn, valueAt } from './chunks.ts';
import { buckets, checkTz, type Db, eachChunk, MAX_BUCKETS, rejected } from './db.ts';
import type { DeviceRegistry } from './devices.ts';
import { q, valueExpr } from './schema.ts';

/** One (device, parameter) a series read fills, and the answers' stat arrays it fills. */
interface SeriesSlot {
  dev: number;
  param: string;
  outs: readonly SeriesResult['series'][string][];
}

export class SeriesReader {
  constructor(
    private readonly db: Db,
    private readonly devices: DeviceRegistry,
    /**
     * Checks the store is open and waits a moment (`READ_WAIT_MS` at most, checkpoints.ts) for the
     * batches journaled during a checkpoint: past it, the answer leaves them out until they are applied.
     */
    private readonly ready: () => Promise<void>,
  ) {}

  /** A series query checked and given its empty answer (every bucket `null`). */
  private prepareSeries(query: SeriesQuery): {
    params: string[];
    stats: Stat[];
    dev: number | undefined;
    tz: string;
    series: SeriesResult['series'];
  } {
    checkTimeRange(query.from, query.to);
    const tz = checkTz(query.tz);
    const params = [...new Set(query.params)];
    for (const p of params) if (!isQueryableParam(p)) throw rejected(`unknown parameter "${p}"`);
    const stats = seriesStats(query.stats);
    if (query.interval !== 'raw' && !isRollupInterval(query.interval) && query.interval !== '1d')
      throw rejected(`unknown interval "${query.interval}"`);
    return { params, stats, dev: this.devices.idOf(query.deviceKey), tz, series: {} };
  }

  private bucketsOf(query: SeriesQuery, tz: string): { starts: number[]; end: number } {
    const b = buckets(query.interval as Exclude<SeriesInterval, 'raw'>, query.from, query.to, tz);
    if (b.starts.length > MAX_BUCKETS) throw rejected('too many buckets; choose a coarser interval');
    return b;
  }

  private static emptySeries(
    params: readonly string[],
    stats: readonly Stat[],
    buckets: number,
  ): SeriesResult['series'] {
    const series: SeriesResult['series'] = {};
    for (const p of params)
      series[p] = Object.fromEntries(stats.map((s) => [s, new Array(buckets).fill(null)]));
    return series;
  }

  async series(query: SeriesQuery): Promise<SeriesResult> {
    await this.ready();
    const { params, stats, dev, tz } = this.prepareSeries(query);
    const base = { interval: query.interval, from: query.from, to: query.to, tz };

    if (query.interval === 'raw') {
      const series: SeriesResult['series'] = {};
      for (const p of params) series[p] = Object.fromEntries(stats.map((s) => [s, []]));
      if (dev === undefined || params.length === 0) return { ...base, t: [], series };
      const exprs = params.map((p) => valueExpr(p));
      const t: number[] = [];
      const vals: (number | null)[][] = params.map(() => []);
      await eachChunk(
        this.db.r,
        `SELECT * FROM (SELECT ts::DOUBLE AS ts, ${exprs.map((e, i) => `(${e})::DOUBLE AS v${i}`).join(', ')}
           FROM readings WHERE device = ${dev} AND ts >= ${query.from} AND ts < ${query.to})
         WHERE ${params.map((_, i) => `v${i} IS NOT NULL`).join(' OR ')} ORDER BY ts`,
        (cols, n) => {
          const tv = cols[0]!.values;
          for (let r = 0; r < n; r++) t.push(tv[r]!);
          for (let i = 0; i < params.length; i++) {
            const c = cols[i + 1]!;
            const out = vals[i]!;
            for (let r = 0; r < n; r++) out.push(valueAt(c, r));
          }
        },
      );
      params.forEach((p, i) => {
        for (const s of stats) series[p]![s] = vals[i]!;
      });
      return { ...base, t, series };
    }

    const { starts, end } = this.bucketsOf(query, tz);
    const series = SeriesReader.emptySeries(params, stats, starts.length);
    if (dev === undefined || params.length === 0 || starts.length === 0)
      return { ...base, t: starts, series };
    const slots = params.map((p) => ({ dev, param: p, outs: [series[p]!] }));
    if (query.source === 'raw') await this.seriesFromRaw(query.interval, starts, end, slots);
    else await this.seriesFromRollups(query.interval, starts, end, slots);
    return { ...base, t: starts, series };
  }

  /**
   * Several devices' series in one query when they share range, interval, zone and source (a
   * comparison's members): one scan of the rollup table (or of the raw readings) instead of one per
   * member. Anything else goes one by one.
   */
  async seriesMany(queries: readonly SeriesQuery[]): Promise<SeriesResult[]> {
    const first = queries[0];
    const shared =
      first !== undefined &&
      first.interval !== 'raw' &&
      queries.every(
        (q) =>
          q.from === first.from &&
          q.to === first.to &&
          q.interval === first.interval &&
          (q.tz ?? DEFAULT_TIMEZONE) === (first.tz ?? DEFAULT_TIMEZONE) &&
          q.source === first.source,
      );
    if (!shared) return Promise.all(queries.map((q) => this.series(q)));
    const interval = first.interval as Exclude<SeriesInterval, 'raw'>;
    await this.ready();
    const prepared = queries.map((q) => this.prepareSeries(q));
    const tz = prepared[0]!.tz;
    const { starts, end } = this.bucketsOf(first, tz);
    const slots = new Map<string, { dev: number; param: string; outs: SeriesResult['series'][string][] }>();
    for (const p of prepared) {
      p.series = SeriesReader.emptySeries(p.params, p.stats, starts.length);
      if (p.dev === undefined || starts.length === 0) continue;
      for (const param of p.params) {
        const key = `${p.dev}:${param}`;
        const slot = slots.get(key) ?? { dev: p.dev, param, outs: [] };
        slot.outs.push(p.series[param]!);
        slots.set(key, slot);
      }
    }
    if (slots.size > 0) {
      if (first.source === 'raw') await this.seriesFromRaw(interval, starts, end, [...slots.values()]);
      else await this.seriesFromRollups(interval, starts, end, [...slots.values()]);
    }
    return prepared.map((p) => ({
      interval: first.interval,
      from: first.from,
      to: first.to,
      tz,
      t: starts,
      series: p.series,
    }));
  }

  /** The slots' parameters and devices, and each slot by key (device × parameters + parameter position). */
  private static slotIndex(slots: readonly SeriesSlot[]) {
    const params = [...new Set(slots.map((s) => s.param))];
    const devs = [...new Set(slots.map((s) => s.dev))];
    const slotOf = new Map(slots.map((s, i) => [s.dev * params.length + params.indexOf(s.param), i]));
    return { params, devs, slotOf };
  }

  /** Where each slot's avg, min and max go (a slot may feed several answers asking the same). */
  private static targetsOf(slots: readonly SeriesSlot[]) {
    return slots.map((slot) => ({
      avg: slot.outs.flatMap((o) => (o.avg ? [o.avg] : [])),
      min: slot.outs.flatMap((o) => (o.min ? [o.min] : [])),
      max: slot.outs.flatMap((o) => (o.max ? [o.max] : [])),
    }));
  }

  /**
   * Buckets aggregated from raw readings (`source: 'raw'`) for (device, parameter) slots, in one query:
   * one row per (device, bucket) with avg, min, max of each parameter.
   */
  private async seriesFromRaw(
    interval: Exclude<SeriesInterval, 'raw'>,
    starts: readonly number[],
    end: number,
    slots: readonly SeriesSlot[],
  ): Promise<void> {
    const s0 = starts[0]!;
    const { params, devs, slotOf } = SeriesReader.slotIndex(slots);
    const inner = `SELECT device, ts, ${params.map((p) => `${valueExpr(p)} AS ${q(p)}`).join(', ')} FROM readings
      WHERE device IN (${devs.join(', ')}) AND ts >= ${s0} AND ts < ${end}`;
    const targets = SeriesReader.targetsOf(slots);
    // Only the statistics some answer asks for are computed: a comparison wants averages alone.
    const aggs: string[] = [];
    const colOf = params.map((p) => {
      const asked = targets.filter((_, i) => slots[i]!.param === p);
      const col = { avg: -1, min: -1, max: -1 };
      for (const st of ['avg', 'min', 'max'] as const) {
        if (!asked.some((t) => t[st].length > 0)) continue;
        col[st] = 2 + aggs.length;
        aggs.push(st === 'avg' ? `sum(${q(p)}) / nullif(count(${q(p)}), 0)` : `${st}(${q(p)})`);
      }
      return col;
    });
    if (aggs.length === 0) return;
    const bucket =
      interval === '1d'
        ? bucketStartSql('ts', starts, end)
        : `ts // ${ROLLUP_STEP_MS[interval]} * ${ROLLUP_STEP_MS[interval]}`;
    const sql = `SELECT device::DOUBLE, (${bucket})::DOUBLE AS b, ${aggs.join(', ')} FROM (${inner}) x GROUP BY device, b`;
    const step = interval === '1d' ? 0 : ROLLUP_STEP_MS[interval];
    const index = new Map(step === 0 ? starts.map((s, i) => [s, i]) : []);
    await eachChunk(this.db.r, sql, (cols, n) => {
      const dv = cols[0]!.values;
      const bv = cols[1]!.values;
      for (let r = 0; r < n; r++) {
        const t = bv[r]!;
        let i = step > 0 ? (t - s0) / step : -1;
        if (starts[i] !== t) i = index.get(t) ?? -1;
        if (i < 0) continue;
        const dev = dv[r]!;
        for (let k = 0; k < params.length; k++) {
          const slot = slotOf.get(dev * params.length + k);
          if (slot === undefined) continue;
          const tg = targets[slot]!;
          const col = colOf[k]!;
          for (const out of tg.avg) out[i] = valueAt(cols[col.avg]!, r);
          for (const out of tg.min) out[i] = valueAt(cols[col.min]!, r);
          for (const out of tg.max) out[i] = valueAt(cols[col.max]!, r);
        }
      }
    });
  }

  /**
   * Buckets from rollups for (device, parameter) slots, all in one query. Column vectors are read in
   * place (no row arrays): a year of hourly buckets is 8,760 rows per slot, each row coming back as
   * bucket, slot key (device × parameters + parameter position), then avg, min, max; calendar days are
   * summed from the fine rollup in SQL, one row per (slot, day).
   */
  private async seriesFromRollups(
    interval: Exclude<SeriesInterval, 'raw'>,
    starts: readonly number[],
    end: number,
    slots: readonly SeriesSlot[],
  ): Promise<void> {
    const s0 = starts[0]!;
    const { params, devs, slotOf } = SeriesReader.slotIndex(slots);
    const inList = params.map((p) => `'${p}'`).join(', ');
    const key = `(device * ${params.length} + list_position([${inList}], param) - 1)::DOUBLE`;
    const where = `WHERE device IN (${devs.join(', ')}) AND param IN (${inList}) AND bucket >= ${s0} AND bucket < ${end}`;
    const step = interval === '1d' ? 0 : ROLLUP_STEP_MS[interval];
    const targets = SeriesReader.targetsOf(slots);
    // Local days (23–25 h across DST) are summed from the finest rollup whose grid they start on, in SQL:
    // a run-length CASE maps each fine bucket to its day, so only one row per (member, day) comes back.
    const sql =
      interval === '1d'
        ? `SELECT (${bucketStartSql('bucket', starts, end)})::DOUBLE AS b, ${key} AS k, sum(sum) / nullif(sum(cnt), 0),
             min(min), max(max) FROM rollup_${fineRollup({ starts, end })} ${where} AND cnt > 0 GROUP BY b, k`
        : `SELECT bucket::DOUBLE, ${key}, sum / nullif(cnt, 0), min, max FROM rollup_${interval} ${where}`;
    const index = new Map(step === 0 ? starts.map((s, i) => [s, i]) : []);
    await eachChunk(this.db.r, sql, (cols, n) => {
      const [bc, kc, av, miv, mav] = cols as [
        DoubleColumn,
        DoubleColumn,
        DoubleColumn,
        DoubleColumn,
        DoubleColumn,
      ];
      const bv = bc.values;
      const kv = kc.values;
      for (let r = 0; r < n; r++) {
        const b = bv[r]!;
        const i = step > 0 ? (b - s0) / step : (index.get(b) ?? -1);
        const slot = slotOf.get(kv[r]!);
        if (slot === undefined || !(i >= 0 && i < starts.length && (i | 0) === i)) continue;
        const t = targets[slot]!;
        if (t.avg.length > 0) {
          const v = valueAt(av, r);
          for (const out of t.avg) out[i] = v;
        }
        if (t.min.length > 0) {
          const v = valueAt(miv, r);
          for (const out of t.min) out[i] = v;
        }
        if (t.max.length > 0) {
          const v = valueAt(mav, r);
          for (const out of t.max) out[i] = v;
        }
      }
    });
  }
}
