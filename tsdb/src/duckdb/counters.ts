/**
 * Counter steps in SQL (DOMAIN.md §Energy from counters; core `counterStep`), shared by the rollup
 * refresh and the `source: 'raw'` query path so both give the same numbers.
 *
 * Per (device, counter), over the readings that carry the counter, in time order:
 * - a drop of more than the jitter tolerance from the previous reading is a reset and starts a segment;
 * - the baseline is the running maximum of the register within its segment (a jitter drop keeps the
 *   higher baseline, a reset or an implausible jump moves it to the new value — exactly `counterStep`);
 * - a step's energy is `value − baseline` when positive and plausible
 *   (`delta / hours ≤ maxPowerKw`, hours from the previous reading), else 0.
 *
 * One deviation from the sequential reference is documented in README.md: a run of drops each within
 * the tolerance that together fall more than the tolerance below the baseline is treated as jitter
 * (the reference calls the step that crosses the tolerance a reset). Meter registers do not drift
 * downwards; the usual cases — wobble by one digit, meter replaced, gaps, implausible jumps — are
 * identical.
 */
import type { CounterRules } from '@kilowatch/core';
import { q } from './schema.ts';

export interface StepsSource {
  /** SQL predicate on `readings` (no alias) selecting the rows to step through. */
  where: string;
  counters: readonly string[];
  rules: (counter: string) => CounterRules;
  /**
   * Optional SQL yielding seed rows (device, counter, ts, v, ord) placed before the range: the baseline
   * (ord 0) and the last register value (ord 1) at the end of the already-rolled-up history.
   */
  seeds?: string;
}

function num(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return String(n);
}

/**
 * SELECT of every step: device, counter, ts, pts (previous reading), v, m (baseline after the step),
 * pb (baseline before), kind, delta (energy), seed (1 for seed rows, which carry no energy).
 */
export function counterStepsSql(src: StepsSource): string {
  const cols = src.counters.map(q).join(', ');
  const rules = src.counters
    .map((c) => {
      const r = src.rules(c);
      return `('${c}', ${num(r.jitterTolerance)}::DOUBLE, ${num(r.maxPowerKw)}::DOUBLE)`;
    })
    .join(', ');
  const real = `SELECT device, counter, ts, v, 2 AS ord, 0 AS seed FROM (UNPIVOT (SELECT device, ts, ${cols} FROM readings WHERE ${src.where}) ON ${cols} INTO NAME counter VALUE v)`;
  const input = src.seeds
    ? `${real} UNION ALL SELECT device, counter, ts, v, ord, 1 AS seed FROM (${src.seeds})`
    : real;
  return `
WITH s0 AS (${input}),
s1 AS (
  SELECT s0.*, rl.tol, rl.maxkw,
    lag(v) OVER w AS pv, lag(ts) OVER w AS pts
  FROM s0 JOIN (VALUES ${rules}) rl(counter, tol, maxkw) USING (counter)
  WINDOW w AS (PARTITION BY device, counter ORDER BY ts, ord)
),
s2 AS (
  SELECT *, (seed = 0 AND pv IS NOT NULL AND v < pv - tol) AS rst FROM s1
),
s3 AS (
  SELECT *, sum(rst::INTEGER) OVER (PARTITION BY device, counter ORDER BY ts, ord ROWS UNBOUNDED PRECEDING) AS seg FROM s2
),
s4 AS (
  SELECT *, max(v) OVER (PARTITION BY device, counter, seg ORDER BY ts, ord ROWS UNBOUNDED PRECEDING) AS m FROM s3
),
s5 AS (
  SELECT *, lag(m) OVER (PARTITION BY device, counter ORDER BY ts, ord) AS pb FROM s4
),
s6 AS (
  SELECT device, counter, ts, pts, v, m, pb, seed,
    CASE
      WHEN pb IS NULL THEN 'first'
      WHEN rst THEN 'reset'
      WHEN v < pb THEN 'jitter'
      WHEN v = pb THEN 'flat'
      WHEN (v - pb) / (greatest(ts - pts, 1) / 3600000.0) > maxkw THEN 'implausible'
      ELSE 'increase'
    END AS kind
  FROM s5
)
SELECT *, CASE WHEN kind = 'increase' THEN v - pb ELSE 0.0 END AS delta FROM s6`;
}
