/**
 * Counter steps in SQL (docs/domain.md §Energy from counters; core `counterStep`), shared by the rollup
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
  /**
   * Steps computed as if no register ever drops: the baseline is the reading itself and the baseline
   * before it the previous reading (two lag windows instead of four running-maximum windows per
   * counter). Exact when no step has `v < pb` — the caller checks that and computes again without it
   * otherwise (rollups.ts).
   */
  monotone?: boolean;
}

function num(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return String(n);
}

/**
 * SELECT of every step: device, counter, ts, pts (previous reading), v, m (baseline after the step),
 * pb (baseline before), kind, delta (energy), seed (1 for seed rows, which carry no energy).
 *
 * Computed wide — one column set per counter, every window over (device ORDER BY ts) so DuckDB sorts
 * the readings once per level instead of once per counter — and unpivoted at the end. The running
 * maximum within a segment is a window whose frame starts at the segment's reset row.
 */
export function counterStepsSql(src: StepsSource): string {
  const cs = src.counters;
  const c = (n: string, x?: string) => (x ? `"${n}__${x}"` : q(n));
  const rules = new Map(cs.map((n) => [n, src.rules(n)]));
  const real = `SELECT device, ts, 2 AS ord, 0 AS seed, ${cs.map((n) => c(n)).join(', ')} FROM readings WHERE ${src.where}`;
  const seeds = src.seeds
    ? ` UNION ALL SELECT device, ts, ord, 1 AS seed, ${cs.map((n) => `CASE WHEN counter = '${n}' THEN v END AS ${c(n)}`).join(', ')} FROM (${src.seeds})`
    : '';
  const w = 'PARTITION BY device ORDER BY ts, ord';
  const isReset = (n: string) =>
    `(seed = 0 AND ${c(n)} < ${c(n, 'pv')} - ${num(rules.get(n)!.jitterTolerance)})`;
  const l1 = cs
    .map(
      (n) =>
        `lag(${c(n)} IGNORE NULLS) OVER w AS ${c(n, 'pv')}, lag(CASE WHEN ${c(n)} IS NOT NULL THEN ts END IGNORE NULLS) OVER w AS ${c(n, 'pts')}`,
    )
    .join(',\n    ');
  const l2 = cs
    .map((n) => {
      const resetRn = `CASE WHEN ${isReset(n)} THEN rn END`;
      return `coalesce(max(${resetRn}) OVER (${w} ROWS UNBOUNDED PRECEDING), 1) AS ${c(n, 'rs')},
    coalesce(max(${resetRn}) OVER (${w} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 1) AS ${c(n, 'rsp')}`;
    })
    .join(',\n    ');
  // A register that never drops: the baseline is the reading, the one before it the previous reading.
  const l3Monotone = cs
    .map(
      (n) => `${c(n)} AS ${c(n, 'm')}, CASE WHEN ${c(n)} IS NOT NULL THEN ${c(n, 'pv')} END AS ${c(n, 'pb')}`,
    )
    .join(',\n    ');
  // Baseline after the row: the running maximum since the segment's reset row; before the row: the
  // same over the previous row's segment (for a reset row, the segment it ends).
  const l3 = cs
    .map(
      (n) =>
        `CASE WHEN ${c(n)} IS NOT NULL THEN max(${c(n)}) OVER (${w} ROWS BETWEEN rn - ${c(n, 'rs')} PRECEDING AND CURRENT ROW) END AS ${c(n, 'm')},
    CASE WHEN ${c(n)} IS NOT NULL THEN max(${c(n)}) OVER (${w} ROWS BETWEEN rn - ${c(n, 'rsp')} PRECEDING AND 1 PRECEDING) END AS ${c(n, 'pb')}`,
    )
    .join(',\n    ');
  const l5 = cs
    .map((n) => {
      const v = c(n);
      const pb = c(n, 'pb');
      const kind = `CASE
        WHEN ${v} IS NULL THEN NULL
        WHEN ${pb} IS NULL THEN 'first'
        WHEN ${isReset(n)} THEN 'reset'
        WHEN ${v} < ${pb} THEN 'jitter'
        WHEN ${v} = ${pb} THEN 'flat'
        WHEN (${v} - ${pb}) / (greatest(ts - ${c(n, 'pts')}, 1) / 3600000.0) > ${num(rules.get(n)!.maxPowerKw)} THEN 'implausible'
        ELSE 'increase' END`;
      return `${kind} AS ${c(n, 'kind')}`;
    })
    .join(',\n    ');
  const l6 = cs
    .map(
      (n) =>
        `CASE WHEN ${c(n, 'kind')} = 'increase' THEN ${c(n)} - ${c(n, 'pb')} ELSE 0.0 END AS ${c(n, 'delta')}`,
    )
    .join(', ');
  // UNPIVOT drops a row holding any NULL: a counter's first reading (no previous time or baseline) would
  // vanish, and with it the bucket it closes and the baseline later refreshes seed from. Filled here,
  // emptied again after the unpivot.
  const groups = cs
    .map(
      (n) =>
        `(${c(n)}, ${c(n, 'pts')}, ${c(n, 'm')}, ${c(n, 'pb')}, ${c(n, 'kind')}, ${c(n, 'delta')}) AS "${n}"`,
    )
    .join(', ');
  return `
WITH s0 AS (${real}${seeds}),
s1 AS (SELECT *, row_number() OVER w AS rn,
    ${l1}
  FROM s0 WINDOW w AS (${w})),
${
  src.monotone
    ? `s4 AS (SELECT *,
    ${l3Monotone}
  FROM s1),`
    : `s2 AS (SELECT *,
    ${l2}
  FROM s1),
s4 AS (SELECT *,
    ${l3}
  FROM s2),`
}
s5 AS (SELECT device, ts, ord, seed, ${cs.map((n) => [c(n), c(n, 'pts'), c(n, 'm'), c(n, 'pb')].join(', ')).join(', ')},
    ${l5}
  FROM s4),
s6 AS (SELECT * REPLACE (${cs.map((n) => `coalesce(${c(n, 'pts')}, ts) AS ${c(n, 'pts')}, coalesce(${c(n, 'pb')}, ${c(n)}) AS ${c(n, 'pb')}`).join(', ')}),
    ${l6} FROM s5)
SELECT device, counter, ts, CASE WHEN kind = 'first' THEN NULL ELSE pts END AS pts, v, m,
  CASE WHEN kind = 'first' THEN NULL ELSE pb END AS pb, seed, kind, delta
FROM (UNPIVOT s6 ON ${groups} INTO NAME counter VALUE v, pts, m, pb, kind, delta)
WHERE v IS NOT NULL`;
}
