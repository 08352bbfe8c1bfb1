/**
 * Energy from cumulative counters (docs/domain.md §Energy from counters, §Balance). Pure functions shared by
 * both storage engines, the API and the tests: energy is never integrated from power.
 */
import { MAX_PHASE_POWER_W, paramDef } from './params.ts';
import { counterInstant, HOUR_MS } from './time.ts';

export interface CounterPoint {
  ts: number;
  value: number;
}

export interface CounterRules {
  /** A drop up to this much (in the counter's unit) is jitter and ignored; a larger drop is a reset. */
  jitterTolerance: number;
  /** A rise implying more than this average power (kW) over its interval is implausible. */
  maxPowerKw: number;
}

/** Default jitter tolerance: 10 Wh — a register rounded to 0.01 kWh may wobble by one digit. */
export const DEFAULT_JITTER_KWH = 0.01;

/** Rules for a counter: three-phase totals may carry three phases' worth of power. */
export function counterRules(counter: string, overrides: Partial<CounterRules> = {}): CounterRules {
  const def = paramDef(counter);
  const phases = def?.phase === undefined && counter.includes('3phases') ? 3 : 1;
  return {
    jitterTolerance: DEFAULT_JITTER_KWH,
    maxPowerKw: (phases * MAX_PHASE_POWER_W) / 1000,
    ...overrides,
  };
}

export type StepKind = 'increase' | 'flat' | 'jitter' | 'reset' | 'implausible';

export interface CounterStep {
  /** Energy this step contributes; never negative. */
  delta: number;
  kind: StepKind;
  /** The register value later steps are measured from. */
  baseline: CounterPoint;
}

/**
 * One step from the current baseline to the next register reading. A jitter drop keeps the higher
 * baseline (so the recovery is not counted twice); a reset or an implausible jump contributes nothing
 * and the new value becomes the baseline.
 */
export function counterStep(baseline: CounterPoint, next: CounterPoint, rules: CounterRules): CounterStep {
  const d = next.value - baseline.value;
  if (d < 0) {
    if (-d <= rules.jitterTolerance)
      return { delta: 0, kind: 'jitter', baseline: { ts: next.ts, value: baseline.value } };
    return { delta: 0, kind: 'reset', baseline: next };
  }
  if (d === 0) return { delta: 0, kind: 'flat', baseline: next };
  const hours = Math.max(next.ts - baseline.ts, 1) / HOUR_MS;
  if (d / hours > rules.maxPowerKw) return { delta: 0, kind: 'implausible', baseline: next };
  return { delta: d, kind: 'increase', baseline: next };
}

export interface CounterEvent {
  kind: 'reset' | 'implausible';
  /** Timestamp of the reading that ended the step. */
  at: number;
  /** Start of the step (the previous baseline's timestamp). */
  from: number;
  /** Raw register difference of the step. */
  delta: number;
}

export interface BucketEnergy {
  /** Energy per bucket, `null` where the bucket holds no reading (a gap: nothing is invented). */
  energy: (number | null)[];
  events: CounterEvent[];
  /** Baseline after the last point, to continue with the next range. */
  baseline: CounterPoint | null;
}

/**
 * Energy per bucket. Counter buckets are `(start, end]` (`counterInstant`): each step's energy belongs to
 * the bucket its later reading closes, so a reading exactly on an edge closes the bucket before it, and
 * the energy across a gap lands where the meter reappears. `starts` are ascending bucket starts; the last
 * bucket ends at `end`. `before` is the baseline entering the first bucket, when known. Points must be in
 * time order; points at or before `starts[0]` only move the baseline (the last register value at or before
 * the first start), points after `end` are ignored.
 */
export function energyPerBucket(
  points: readonly CounterPoint[],
  starts: readonly number[],
  end: number,
  rules: CounterRules,
  before: CounterPoint | null = null,
): BucketEnergy {
  const energy: (number | null)[] = new Array(starts.length).fill(null);
  const events: CounterEvent[] = [];
  let baseline = before;
  let b = 0;
  const first = starts[0] ?? end;
  for (const p of points) {
    if (p.ts > end) break;
    if (counterInstant(p.ts) < first) {
      baseline = baseline ? counterStep(baseline, p, rules).baseline : p;
      continue;
    }
    while (b + 1 < starts.length && counterInstant(p.ts) >= starts[b + 1]!) b++;
    let delta = 0;
    if (baseline) {
      const step = counterStep(baseline, p, rules);
      delta = step.delta;
      if (step.kind === 'reset' || step.kind === 'implausible') {
        events.push({ kind: step.kind, at: p.ts, from: baseline.ts, delta: p.value - baseline.value });
      }
      baseline = step.baseline;
    } else {
      baseline = p;
    }
    energy[b] = (energy[b] ?? 0) + delta;
  }
  return { energy, events, baseline };
}

/** Element-wise sum of per-bucket series; a bucket is `null` only when it is `null` in every series. */
export function sumSeries(series: readonly (readonly (number | null)[])[]): (number | null)[] {
  const n = series[0]?.length ?? 0;
  const out: (number | null)[] = new Array(n).fill(null);
  for (const s of series) {
    for (let i = 0; i < n; i++) {
      const v = s[i];
      if (v !== null && v !== undefined) out[i] = (out[i] ?? 0) + v;
    }
  }
  return out;
}

export interface HourlyBalance {
  /** Σ phases import − Σ phases export per hour (positive: billed as import). */
  balance: (number | null)[];
  /** Per hour: the positive part (billed import) and the negative part as a positive number (billed export). */
  billedImport: (number | null)[];
  billedExport: (number | null)[];
}

/**
 * Polish prosumer settlement (docs/domain.md §Balance): import and export are netted per hour across all
 * phases. Inputs are hourly energies per phase (the same hours in every array).
 */
export function hourlyBalance(
  importPerPhase: readonly (readonly (number | null)[])[],
  exportPerPhase: readonly (readonly (number | null)[])[],
): HourlyBalance {
  const imp = sumSeries(importPerPhase);
  const exp = sumSeries(exportPerPhase);
  const n = Math.max(imp.length, exp.length);
  const balance: (number | null)[] = new Array(n);
  const billedImport: (number | null)[] = new Array(n);
  const billedExport: (number | null)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const a = imp[i] ?? null;
    const e = exp[i] ?? null;
    if (a === null && e === null) {
      balance[i] = billedImport[i] = billedExport[i] = null;
      continue;
    }
    const b = (a ?? 0) - (e ?? 0);
    balance[i] = b;
    billedImport[i] = Math.max(b, 0);
    billedExport[i] = Math.max(-b, 0);
  }
  return { balance, billedImport, billedExport };
}

/**
 * Sums fine buckets (e.g. hours) into coarse calendar buckets (e.g. local days from
 * `calendarBucketStarts`). A fine bucket belongs to the coarse bucket containing its start; fine buckets
 * must not straddle coarse boundaries (hours fit days in whole-hour zones; use 15-minute buckets for
 * :30 and :45 zones). A coarse bucket with no value is `null`.
 */
export function sumIntoBuckets(
  fineStarts: readonly number[],
  values: readonly (number | null)[],
  coarseStarts: readonly number[],
): (number | null)[] {
  const out: (number | null)[] = new Array(coarseStarts.length).fill(null);
  let c = 0;
  for (let i = 0; i < fineStarts.length; i++) {
    const t = fineStarts[i]!;
    const v = values[i];
    if (t < (coarseStarts[0] ?? Number.POSITIVE_INFINITY)) continue;
    while (c + 1 < coarseStarts.length && t >= coarseStarts[c + 1]!) c++;
    if (v !== null && v !== undefined) out[c] = (out[c] ?? 0) + v;
  }
  return out;
}
