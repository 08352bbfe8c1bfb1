/**
 * The energy reader: each counter's energy per bucket (15 min to calendar months) from the rollups, or
 * replayed from the raw register readings (`source: 'raw'`), with the counters' resets and implausible
 * steps; combined counters (phase sums) are summed from their parts.
 */
import {
  bucketIndexOf,
  combinedParamDef,
  counterInstantSql,
  fineRollup,
  paramDef,
  sumSeries,
} from '@kilowatch/core';
import {
  checkTimeRange,
  type EnergyQuery,
  type EnergyResult,
  ROLLUP_STEP_MS,
  type RollupInterval,
} from '../port.ts';
import { bucketStartSql } from './calendar.ts';
import { type DoubleColumn, valueAt } from './chunks.ts';
import { counterStepsSql } from './counters.ts';
import {
  asNum,
  buckets,
  checkTz,
  type Db,
  eachChunk,
  MAX_BUCKETS,
  type Row,
  readRows,
  rejected,
} from './db.ts';
import type { DeviceRegistry } from './devices.ts';
import { COUNTERS } from './schema.ts';

export class EnergyReader {
  constructor(
    private readonly db: Db,
    private readonly devices: DeviceRegistry,
    /**
     * Checks the store is open and waits a moment (`READ_WAIT_MS` at most, checkpoints.ts) for the
     * batches journaled during a checkpoint: past it, the answer leaves them out until they are applied.
     */
    private readonly ready: () => Promise<void>,
  ) {}

  async read(query: EnergyQuery): Promise<EnergyResult> {
    await this.ready();
    checkTimeRange(query.from, query.to);
    const tz = checkTz(query.tz);
    if (!['15m', '30m', '1h', '1d', '1mo'].includes(query.interval))
      throw rejected(`unknown interval "${query.interval}"`);
    const requested = [...new Set(query.counters)];
    const stored = new Set<string>();
    for (const c of requested) {
      const def = paramDef(c);
      const comb = combinedParamDef(c);
      if (def?.kind === 'counter') stored.add(c);
      else if (comb?.kind === 'counter') for (const p of comb.of) stored.add(p);
      else throw rejected(`"${c}" is not an energy counter`);
    }
    const counters = COUNTERS.filter((c) => stored.has(c));
    const { starts, end } = buckets(query.interval, query.from, query.to, tz);
    if (starts.length > MAX_BUCKETS) throw rejected('too many buckets; choose a coarser interval');
    const perCounter = new Map<string, (number | null)[]>(
      counters.map((c) => [c, new Array(starts.length).fill(null)]),
    );
    const result: EnergyResult = {
      interval: query.interval,
      tz,
      t: starts,
      energy: {},
      implausible: [],
      resets: [],
    };
    const dev = this.devices.idOf(query.deviceKey);
    if (dev !== undefined && starts.length > 0 && counters.length > 0) {
      const s0 = starts[0]!;
      const calendar = query.interval === '1d' || query.interval === '1mo';
      const index = new Map(query.source === 'raw' ? starts.map((s, i) => [s, i]) : []);
      let rows: Row[];
      let events: Row[];
      if (query.source === 'raw') {
        // Counter buckets are (start, end]: the readings up to `end` count, each step in the bucket its
        // reading closes; one exactly on `s0` only sets the baseline.
        const steps = counterStepsSql({
          where: `device = ${dev} AND ts <= ${end}`,
          counters,
          rules: this.db.rulesOf,
        });
        const at = counterInstantSql('ts');
        const bucketed = calendar
          ? `SELECT ${bucketStartSql(at, starts, end)} AS b, counter, sum(delta) AS e FROM st
             WHERE ts > ${s0} GROUP BY ALL`
          : `SELECT ${at} // ${ROLLUP_STEP_MS[query.interval as RollupInterval]} * ${ROLLUP_STEP_MS[query.interval as RollupInterval]} AS b, counter, sum(delta) AS e
             FROM st WHERE ts > ${s0} GROUP BY ALL`;
        const all = await readRows(
          this.db.r,
          `WITH st AS MATERIALIZED (${steps})
           SELECT 0 AS k, b::DOUBLE, counter, e, NULL::VARCHAR, NULL::DOUBLE, NULL::DOUBLE, NULL::DOUBLE FROM (${bucketed})
           UNION ALL
           SELECT 1 AS k, NULL::DOUBLE, counter, NULL::DOUBLE, kind, ts::DOUBLE, pts::DOUBLE, v - pb FROM st
           WHERE seed = 0 AND ts > ${s0} AND kind IN ('reset', 'implausible')
           ORDER BY k, 6, counter`,
        );
        rows = all.filter((r) => r[0] === 0).map((r) => [r[1]!, r[2]!, r[3]!]);
        events = all.filter((r) => r[0] === 1).map((r) => [r[2]!, r[4]!, r[5]!, r[6]!, r[7]!]);
      } else {
        const table = calendar ? fineRollup({ starts, end }) : (query.interval as RollupInterval);
        const inList = counters.map((c) => `'${c}'`).join(', ');
        // The counter comes back as its position in `counters` (no string per row).
        const pos = (col: string) => `(list_position([${inList}], ${col}) - 1)::DOUBLE`;
        // Local days and months add up the fine rows in JS: a year of hours is 8,760 rows a counter, and
        // folding them by a binary search over the starts cost less than bucketing them in SQL.
        const sql = `SELECT bucket::DOUBLE AS b, ${pos('param')}, e FROM rollup_${table}
             WHERE device = ${dev} AND param IN (${inList}) AND bucket >= ${s0} AND bucket < ${end}`;
        const arrays = counters.map((c) => perCounter.get(c)!);
        const step = calendar ? 0 : ROLLUP_STEP_MS[query.interval as RollupInterval];
        await eachChunk(this.db.r, sql, (cols, n) => {
          const [bc, kc, ec] = cols as [DoubleColumn, DoubleColumn, DoubleColumn];
          const bv = bc.values;
          const kv = kc.values;
          for (let r = 0; r < n; r++) {
            const t = bv[r]!;
            const arr = arrays[kv[r]!];
            if (!arr) continue;
            if (calendar) {
              const e = valueAt(ec, r);
              const i = bucketIndexOf(starts, t);
              if (e !== null && i >= 0) arr[i] = (arr[i] ?? 0) + e;
              continue;
            }
            let i = (t - s0) / step;
            if (starts[i] !== t) i = index.get(t) ?? -1;
            if (i >= 0) arr[i] = valueAt(ec, r);
          }
        });
        rows = [];
        events =
          query.events === false
            ? []
            : await readRows(
                this.db.r,
                `SELECT counter, kind, at_ts::DOUBLE, from_ts::DOUBLE, delta FROM counter_events
           WHERE device = ${dev} AND at_ts > ${s0} AND at_ts <= ${end} AND counter IN (${counters.map((c) => `'${c}'`).join(', ')})
           ORDER BY at_ts, counter`,
              );
      }
      for (const [b, c, e] of rows) {
        const i = index.get(b as number);
        const arr = perCounter.get(c as string);
        if (i === undefined || !arr) continue;
        arr[i] = asNum(e!);
      }
      for (const [c, kind, at, from, delta] of events) {
        if ((at as number) > end) continue;
        if (kind === 'reset') result.resets.push({ counter: c as string, at: at as number });
        else
          result.implausible.push({
            counter: c as string,
            from: from as number,
            to: at as number,
            delta: delta as number,
          });
      }
    }
    for (const c of requested) {
      const comb = combinedParamDef(c);
      result.energy[c] =
        paramDef(c) !== undefined
          ? perCounter.get(c)!
          : sumSeries(comb!.of.map((p) => perCounter.get(p) ?? new Array(starts.length).fill(null)));
    }
    return result;
  }
}
