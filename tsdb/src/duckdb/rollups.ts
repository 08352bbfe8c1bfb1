/**
 * The rollup refresher: rebuilds the 15-minute, 30-minute and hourly rollups (and the counter events)
 * of every device written since the last refresh, from the dirty marks the write path and the bulk
 * loader leave in `rollup_state` (and in memory, deviceState.ts). Gauges are aggregated per bucket;
 * counters by their steps (counters.ts), each step in the bucket its reading closes.
 */
import { combinedParamDef, counterBucketStart, counterInstantSql, fixedBucketStart } from '@kilowatch/core';
import { ROLLUP_STEP_MS, type RollupRunResult, StoreError } from '../port.ts';
import { counterStepsSql } from './counters.ts';
import { type Db, readRows } from './db.ts';
import type { DeviceState } from './deviceState.ts';
import { AGG_NAMES, COUNTERS, valueExpr } from './schema.ts';

const STEP_15M = ROLLUP_STEP_MS['15m'];
/**
 * History per rollup-refresh window (whole hours). Each window costs a counter-step statement per group
 * of devices, so short windows are paid for in CPU: the demo year's refresh took 105.6 CPU-s in 30-day
 * windows and 67.8 CPU-s in one window, at the same peak RSS (1.68 vs 1.73 GB, the bulk load's own peak;
 * `pnpm bench backfill --loader --days 365`, bench/results/backfill.md). A year per window keeps the
 * per-window dirty marks and transactions for longer histories without that cost.
 */
const REFRESH_WINDOW_MS = 366 * 86_400_000;
/**
 * Rollup rows are written in 30-day slices of time, each ordered by device, parameter and bucket: a
 * row group then spans at most a slice, so the minute's refresh (its seeds and its deletes of the newest
 * buckets) reads the current slice's row groups only. Ordered by device and parameter alone, a year's
 * refresh left row groups spanning the whole year, and every later refresh read all of them: ~155 MB of
 * blocks and most of its CPU with a year of demo history (bench/results/footprint.md).
 */
const LAYOUT_CHUNK_MS = 30 * 86_400_000;
/** How far before a refresh's start the counters' seeds are looked for first (see `seeds`). */
const SEED_LOOKBACK_MS = 2 * 86_400_000;
/** History per device up to which every device is refreshed in one statement (see `refreshGroups`). */
const SMALL_REFRESH_MS = 6 * 3_600_000;
/** Devices of the same kind refreshed in one statement (see `refreshGroups`). */
const REFRESH_GROUP = 4;
const COUNTER_SET: ReadonlySet<string> = new Set(COUNTERS);

export class RollupRefresher {
  constructor(
    private readonly db: Db,
    private readonly state: DeviceState,
  ) {}

  /**
   * Refreshes every dirty device together (one statement per step for all of them, so the counter-step
   * query is planned once, not once per device), in windows of `REFRESH_WINDOW_MS` of history, each in
   * its own turn on the write connection and its own transaction: writes (ingest acknowledgements) wait
   * for one window at most, and a year of history is never held in one transaction's memory. Devices a
   * bulk load is writing are left for the refresh after it (their marks stay).
   */
  async refresh(now: number): Promise<RollupRunResult> {
    this.db.assertOpen();
    // The marks being refreshed: taken off the in-memory map (the file keeps them until the refresh has
    // passed them), so a write meanwhile shows up there again and is left dirty for the next refresh.
    const run = await this.db.lock.run(async () => {
      const rows = await readRows(
        this.db.w,
        'SELECT device, dirty_from::DOUBLE FROM rollup_state WHERE dirty_from IS NOT NULL ORDER BY device',
      );
      const devs: { dev: number; start: number }[] = [];
      for (const [dev, from] of rows) {
        const id = dev as number;
        if (this.state.bulkLoading.has(id)) continue;
        this.state.dirty.delete(id);
        // The earliest bucket the write touches: a counter reading closes the quarter before it
        // ((start, end]), which starts no later than the quarter a gauge sample falls in.
        devs.push({ dev: id, start: counterBucketStart(from as number, STEP_15M) });
      }
      return devs;
    });
    let buckets = 0;
    if (run.length > 0) {
      const first = Math.min(...run.map((d) => d.start));
      const last = Math.max(...run.map((d) => this.state.newest.get(d.dev) ?? d.start));
      let progress = first;
      try {
        for (let a = fixedBucketStart(first, REFRESH_WINDOW_MS); ; a += REFRESH_WINDOW_MS) {
          const b = a + REFRESH_WINDOW_MS;
          // The last window is open-ended: it takes whatever was written after the list was taken.
          const end = b > last ? null : b;
          const part = run
            .filter((d) => d.start < b && (this.state.newest.get(d.dev) ?? Number.NEGATIVE_INFINITY) >= a)
            .map((d) => ({ dev: d.dev, start: Math.max(d.start, a) }));
          const groups = this.refreshGroups(part, a, end);
          for (const group of groups) {
            buckets += await this.db.lock.run(async () => {
              if (this.db.closed) return 0;
              return this.refreshWindow(group, end);
            });
          }
          await this.db.lock.run(async () => {
            if (this.db.closed) return;
            await this.markProgress(run, end);
            progress = end ?? Number.POSITIVE_INFINITY;
          });
          if (end === null || this.db.closed) break;
        }
      } finally {
        // What is not refreshed yet (a failure, a shutdown) stays dirty in memory as it is in the file.
        for (const { dev } of run) {
          if (progress === Number.POSITIVE_INFINITY) continue;
          const mark = this.state.dirty.get(dev);
          if (!(progress >= (mark ?? Number.NaN))) this.state.dirty.set(dev, progress);
        }
      }
    }
    const watermark = fixedBucketStart(now, STEP_15M);
    await this.db.lock.run(async () => {
      if (!this.db.closed) await this.db.exec(`UPDATE meta SET v = '${watermark}' WHERE k = 'watermark'`);
    });
    return { buckets, watermark };
  }

  /**
   * Devices refreshed together: those reporting the same parameters (the counter-step query computes
   * every counter of the group for every row, so devices of different kinds go apart), at most
   * `REFRESH_GROUP` at a time.
   */
  private refreshGroups<T extends { dev: number; start: number }>(
    part: readonly T[],
    from: number,
    end: number | null,
  ): T[][] {
    // A short span (the minute's refresh of live readings) has few rows: one statement for every device
    // is planned once instead of once per kind, which is most of such a refresh's cost.
    const lo = Math.max(from, Math.min(...part.map((p) => p.start)));
    const hi = end ?? Math.max(...part.map((p) => this.state.newest.get(p.dev) ?? p.start));
    if (part.length > 0 && hi - lo <= SMALL_REFRESH_MS) return [[...part]];
    const bySig = new Map<string, T[][]>();
    for (const p of part) {
      const sig = this.state.params(p.dev).join(',');
      const chunks = bySig.get(sig) ?? [];
      const lastChunk = chunks.at(-1);
      if (lastChunk && lastChunk.length < REFRESH_GROUP) lastChunk.push(p);
      else chunks.push([p]);
      bySig.set(sig, chunks);
    }
    return [...bySig.values()].flat();
  }

  /**
   * The file's dirty marks once history before `upTo` is refreshed (null: all of it), keeping what a write
   * since the refresh began marked.
   */
  private async markProgress(run: readonly { dev: number }[], upTo: number | null): Promise<void> {
    const mark = (dev: number) => {
      const m = this.state.dirty.get(dev);
      return upTo === null ? (m ?? 'NULL::BIGINT') : Math.min(upTo, m ?? upTo);
    };
    await this.db.exec(
      `UPDATE rollup_state SET dirty_from = v.m FROM (VALUES ${run
        .map(({ dev }) => `(${dev}, ${mark(dev)})`)
        .join(', ')}) v(d, m) WHERE device = v.d`,
    );
  }

  /**
   * Baseline and last register value per (device, counter) at the end of the rolled-up history before
   * each device's start (the counter buckets before it hold the readings up to and including it), into
   * the temp table `seeds`. The last `SEED_LOOKBACK_MS` are looked at first; only a counter not found
   * there (a new device, a long gap) makes the scan go back further.
   */
  private async seeds(
    part: readonly { dev: number; start: number }[],
    counters: readonly string[],
    expected: number,
  ): Promise<void> {
    const list = counters.map((c) => `'${c}'`).join(', ');
    const scan = (bounded: boolean, missing: string) => `SELECT device, param AS counter, max(last_ts) AS ts,
        arg_max(base, last_ts) AS b, arg_max(last, last_ts) AS l
      FROM rollup_15m WHERE (${part
        .map(
          ({ dev, start }) =>
            `(device = ${dev} AND bucket < ${start}${bounded ? ` AND bucket >= ${start - SEED_LOOKBACK_MS}` : ''})`,
        )
        .join(' OR ')}) AND last_ts IS NOT NULL AND param IN (${list})${missing}
      GROUP BY device, param`;
    await this.db.exec(`CREATE OR REPLACE TEMP TABLE seeds AS ${scan(true, '')}`);
    const [found] = await readRows(this.db.w, 'SELECT count(*)::DOUBLE FROM seeds');
    if (Number(found?.[0]) < expected) {
      await this.db.exec(
        `INSERT INTO seeds ${scan(
          false,
          ' AND NOT EXISTS (SELECT 1 FROM seeds s WHERE s.device = rollup_15m.device AND s.counter = rollup_15m.param)',
        )}`,
      );
    }
  }

  /**
   * One window of the refresh for several devices: each from its own start (a 15-minute bucket start) to
   * `end` (a whole hour; null: no end). Gauges fill the buckets with readings in [start, end); counters
   * with the steps of the readings in (start, end], each in the bucket it closes (core `counterInstant`).
   */
  private async refreshWindow(
    part: readonly { dev: number; start: number }[],
    end: number | null,
  ): Promise<number> {
    const each = (f: (dev: number, start: number) => string) =>
      `(${part.map(({ dev, start }) => `(${f(dev, start)})`).join(' OR ')})`;
    const lo = Math.min(...part.map((p) => p.start));
    const upTo = (col: string, incl: boolean) =>
      end === null ? '' : ` AND ${col} ${incl ? '<=' : '<'} ${end}`;
    const where = `ts >= ${lo}${upTo('ts', false)} AND ${each((d, s) => `device = ${d} AND ts >= ${s}`)}`;
    const counterWhere = `ts > ${lo}${upTo('ts', true)} AND ${each((d, s) => `device = ${d} AND ts > ${s}`)}`;
    const counterBucket = `${counterInstantSql('ts')} // ${STEP_15M} * ${STEP_15M}`;
    // Parameters the devices have ever reported (kept at write time): no scan of the range to find them;
    // one absent from the range (or from one of the devices) only yields empty aggregates, left out.
    const present = new Set<string>();
    /** (device, counter) pairs the devices have: the seeds expected. */
    let pairs = 0;
    for (const { dev } of part) {
      for (const p of this.state.params(dev)) {
        present.add(p);
        if (COUNTER_SET.has(p)) pairs++;
      }
    }
    const aggNames = AGG_NAMES.filter((n) => {
      const comb = combinedParamDef(n);
      return comb ? comb.of.some((p) => present.has(p)) : present.has(n);
    });
    const counters = COUNTERS.filter((c) => present.has(c));
    let n = 0;
    await this.db.exec('BEGIN TRANSACTION');
    try {
      await this.db.exec(
        `DELETE FROM rollup_15m WHERE bucket >= ${lo} AND ${each((d, s) => `device = ${d} AND bucket >= ${s}`)}${upTo('bucket', false)}`,
      );
      await this.db.exec(
        `DELETE FROM counter_events WHERE at_ts > ${lo} AND ${each((d, s) => `device = ${d} AND at_ts > ${s}`)}${upTo('at_ts', true)}`,
      );
      if (aggNames.length > 0) {
        // Aggregate wide (one pass over the readings), then unpivot the few aggregated rows.
        const wide = `SELECT device, ts // ${STEP_15M} * ${STEP_15M} AS bucket, ${aggNames
          .map((a) => {
            const e = valueExpr(a);
            return `sum(${e}) AS "${a}__s", count(${e}) AS "${a}__c", min(${e}) AS "${a}__mi", max(${e}) AS "${a}__ma"`;
          })
          .join(', ')} FROM readings WHERE ${where} GROUP BY ALL`;
        const g = `SELECT device, param, bucket, sum, cnt, min, max FROM (UNPIVOT (${wide}) ON ${aggNames
          .map((a) => `("${a}__s", "${a}__c", "${a}__mi", "${a}__ma") AS "${a}"`)
          .join(', ')} INTO NAME param VALUE sum, cnt, min, max) WHERE cnt > 0`;
        let sql: string;
        if (counters.length > 0) {
          await this.seeds(part, counters, pairs);
          const steps = (of: readonly string[], monotone: boolean) => {
            const list = of.map((c) => `'${c}'`).join(', ');
            return counterStepsSql({
              where: counterWhere,
              counters: of,
              rules: this.db.rulesOf,
              seeds: `SELECT device, counter, ts, b AS v, 0 AS ord FROM seeds WHERE counter IN (${list})
              UNION ALL SELECT device, counter, ts, l AS v, 1 AS ord FROM seeds WHERE counter IN (${list})`,
              monotone,
            });
          };
          // Registers rarely drop (a reset, a wobble; a net register is the exception): the steps are
          // computed as if none did, which is exact for a counter none of whose steps falls below the one
          // before it, and again in full for the counters where one does.
          await this.db.exec(`CREATE OR REPLACE TEMP TABLE steps AS ${steps(counters, true)}`);
          const dropping = (
            await readRows(this.db.w, 'SELECT DISTINCT counter FROM steps WHERE v < pb ORDER BY counter')
          ).map(([c]) => c as string);
          if (dropping.length > 0) {
            await this.db.exec(
              `DELETE FROM steps WHERE counter IN (${dropping.map((c) => `'${c}'`).join(', ')});
               INSERT INTO steps ${steps(dropping, false)}`,
            );
          }
          sql = `
            WITH g AS (${g}),
            c AS (
              SELECT device, counter AS param, ${counterBucket} AS bucket,
                sum(delta) AS e, arg_min(v, ts) AS first, min(ts) AS first_ts, arg_max(v, ts) AS last,
                max(ts) AS last_ts, arg_max(m, ts) AS base,
                count_if(kind = 'reset') AS resets, count_if(kind = 'implausible') AS impl
              FROM steps WHERE seed = 0 GROUP BY ALL
            )
            SELECT coalesce(g.device, c.device) AS d, coalesce(g.param, c.param) AS p,
              coalesce(g.bucket, c.bucket) AS b, g.sum, g.cnt, g.min, g.max,
              c.e, c.first, c.first_ts, c.last, c.last_ts, c.base, c.resets, c.impl
            FROM g FULL JOIN c ON g.device = c.device AND g.param = c.param AND g.bucket = c.bucket
            ORDER BY b // ${LAYOUT_CHUNK_MS}, d, p, b`;
        } else {
          sql = `SELECT device, param, bucket, sum, cnt, min, max, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
            FROM (${g}) ORDER BY bucket // ${LAYOUT_CHUNK_MS}, device, param, bucket`;
        }
        const ins = await this.db.w.run(`INSERT INTO rollup_15m ${sql}`);
        n += Number(ins.rowsChanged);
        if (counters.length > 0) {
          await this.db.exec(
            `INSERT INTO counter_events SELECT device, counter, kind, ts, pts, v - pb FROM steps
             WHERE seed = 0 AND kind IN ('reset', 'implausible')`,
          );
          await this.db.exec('DROP TABLE steps; DROP TABLE seeds');
        }
      }
      // 30m from 15m, 1h from 30m (each half the rows of the finer one).
      for (const [iv, finer] of [
        ['30m', '15m'],
        ['1h', '30m'],
      ] as const) {
        const step = ROLLUP_STEP_MS[iv];
        const from = each((d, s) => `device = ${d} AND bucket >= ${fixedBucketStart(s, step)}`);
        await this.db.exec(`DELETE FROM rollup_${iv} WHERE ${from}${upTo('bucket', false)}`);
        const res = await this.db.w.run(`
          INSERT INTO rollup_${iv}
          SELECT device, param, bucket // ${step} * ${step} AS b,
            sum(sum), sum(cnt), min(min), max(max),
            sum(e), arg_min(first, first_ts), min(first_ts), arg_max(last, last_ts), max(last_ts),
            arg_max(base, last_ts), sum(resets), sum(impl)
          FROM rollup_${finer} WHERE ${from}${upTo('bucket', false)} GROUP BY device, param, b ORDER BY b // ${LAYOUT_CHUNK_MS}, device, param, b`);
        n += Number(res.rowsChanged);
      }
      await this.db.exec('COMMIT');
    } catch (e) {
      await this.db.rollback();
      throw new StoreError(`rollup refresh failed: ${(e as Error).message}`, 'internal', { cause: e });
    }
    return n;
  }
}
