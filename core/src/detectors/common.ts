/**
 * What every detector shares (docs/domain.md §Detectors): the finding it returns, the serialisable episode
 * state that keeps a finding from repeating, robust statistics and the run rule for timestamped samples.
 * Everything here is pure: the evaluation instant comes in as an argument, never from the clock.
 */
import { zonedTimeToUtc } from '../time.ts';

export const FINDING_KINDS = [
  'base-load-rise',
  'unusual-consumption',
  'solar-underperformance',
  'phase-overload',
  'phase-imbalance',
  'meter-offline',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** Plain values only, so a finding can be stored and sent as JSON. */
export type FindingDetail = { readonly [key: string]: string | number | boolean | null };

export interface Finding {
  kind: FindingKind;
  deviceKey?: string;
  /** When the episode began: a local day's start, a run's first sample, the last reading before an outage. */
  at: number;
  /** The measured value compared with `threshold`, in the unit the detail names. */
  value: number;
  threshold: number;
  detail: FindingDetail;
}

/** One open episode: a condition that holds (or a run that may yet become one). */
export interface Episode {
  /** When the episode began. */
  since: number;
  /** The last instant the condition was seen to hold. */
  last: number;
  /** Whether a finding was returned for it; a run shorter than its duration is open but not reported. */
  reported: boolean;
  /** The largest value seen in it. */
  peak: number;
}

/**
 * The state carried from one evaluation to the next, JSON as it stands so it can be stored with the device
 * and evaluated by one replica at a time. Keys are `kind:deviceKey[:part]`; each detector touches only its
 * own keys, so one state can serve every detector of a device.
 */
export interface DetectorState {
  episodes: Record<string, Episode>;
  /** Run detectors: the last sample processed per stream, so overlapping windows are not counted twice. */
  cursors: Record<string, number>;
}

export function initialDetectorState(): DetectorState {
  return { episodes: {}, cursors: {} };
}

export interface DetectorResult {
  findings: Finding[];
  state: DetectorState;
}

/** A copy the detector may change; the caller's state is never mutated. */
export function cloneState(state: DetectorState | undefined): DetectorState {
  if (!state) return initialDetectorState();
  const episodes: Record<string, Episode> = {};
  for (const [k, e] of Object.entries(state.episodes)) episodes[k] = { ...e };
  return { episodes, cursors: { ...state.cursors } };
}

export function episodeKey(kind: FindingKind, deviceKey: string | undefined, part?: string): string {
  return part === undefined ? `${kind}:${deviceKey ?? ''}` : `${kind}:${deviceKey ?? ''}:${part}`;
}

/** A timestamped value: power in W, current in A. */
export interface Sample {
  ts: number;
  value: number;
}

/** Sorted copy of finite values. */
function sorted(values: readonly number[]): number[] {
  return values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

/** Median of the finite values, NaN when there are none. */
export function median(values: readonly number[]): number {
  const s = sorted(values);
  if (s.length === 0) return Number.NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * The p-th percentile (0–100) of the finite values, interpolated linearly between the two nearest ranks
 * (rank p/100 × (n − 1), as spreadsheets' PERCENTILE.INC); NaN when there are none.
 */
export function percentile(values: readonly number[], p: number): number {
  const s = sorted(values);
  if (s.length === 0) return Number.NaN;
  const rank = (Math.min(Math.max(p, 0), 100) / 100) * (s.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return s[lo]! + (s[hi]! - s[lo]!) * (rank - lo);
}

/** Scale that makes the MAD estimate the standard deviation of normally distributed values. */
export const MAD_SCALE = 1.4826;

/** Median absolute deviation from the median, scaled by 1.4826; NaN when there are no values. */
export function scaledMad(values: readonly number[], center: number = median(values)): number {
  return MAD_SCALE * median(values.map((v) => Math.abs(v - center)));
}

/** Median spacing of ascending timestamps, NaN with fewer than two. */
export function medianInterval(timestamps: readonly number[]): number {
  const gaps: number[] = [];
  for (let i = 1; i < timestamps.length; i++) {
    const d = timestamps[i]! - timestamps[i - 1]!;
    if (d > 0) gaps.push(d);
  }
  return median(gaps);
}

/** `HH:mm` as minutes after local midnight; `24:00` is 1440. */
export function minutesOfDay(hhmm: string): number {
  const m = /^(\d{1,2}):(\d{2})$/.exec(hhmm);
  if (!m) throw new RangeError(`not a local time HH:mm: ${hhmm}`);
  const minutes = Number(m[1]) * 60 + Number(m[2]);
  if (minutes > 24 * 60 || Number(m[2]) > 59) throw new RangeError(`not a local time HH:mm: ${hhmm}`);
  return minutes;
}

/**
 * The instant a local wall time shows on the local date `y-m-d` (the day may be given past its month's end,
 * `Date.UTC` style). Taken by the zone's rules, so a window on a DST day is as long as the wall clock says.
 */
export function localInstant(y: number, m: number, d: number, minutes: number, tz: string): number {
  const date = new Date(Date.UTC(y, m - 1, d));
  const day = Math.floor(minutes / (24 * 60));
  date.setUTCDate(date.getUTCDate() + day);
  const rest = minutes - day * 24 * 60;
  return zonedTimeToUtc(
    date.getUTCFullYear(),
    date.getUTCMonth() + 1,
    date.getUTCDate(),
    Math.floor(rest / 60),
    rest % 60,
    0,
    tz,
  );
}

export interface RunOptions {
  /** Shortest run that is a finding. */
  minDurationMs: number;
  /** A spacing longer than this between two samples breaks the run. */
  maxGapMs: number;
}

export interface RunStep {
  /** The run this sample belongs to, when the sample holds the condition. */
  episode?: Episode;
  /** True at the sample where the run first reaches its duration (once per run). */
  reached: boolean;
}

/**
 * Advances the run of one condition by one sample. A run is consecutive samples that hold the condition
 * with no spacing above `maxGapMs`; its duration is from its first to its latest sample. `cursor` is the
 * previous sample's time (or undefined). Returns the episode to store (undefined once the run has ended).
 */
export function advanceRun(
  episode: Episode | undefined,
  cursor: number | undefined,
  ts: number,
  holds: boolean,
  value: number,
  options: RunOptions,
): RunStep {
  if (!holds) return { reached: false };
  const continues = episode !== undefined && cursor !== undefined && ts - cursor <= options.maxGapMs;
  const e: Episode = continues
    ? { ...episode, last: ts, peak: Math.max(episode.peak, value) }
    : { since: ts, last: ts, reported: false, peak: value };
  const reached = !e.reported && e.last - e.since >= options.minDurationMs;
  if (reached) e.reported = true;
  return { episode: e, reached };
}

/**
 * Spacing that breaks a run: `factor` × the usual interval (the given one, else the samples' median). With
 * fewer than two samples and no usual interval given, `fallbackMs` (a run's own duration: a silence that
 * long cannot be bridged).
 */
export function maxGapOf(
  timestamps: readonly number[],
  factor: number,
  fallbackMs: number,
  usualIntervalMs?: number,
): number {
  const usual = usualIntervalMs ?? medianInterval(timestamps);
  return Number.isFinite(usual) ? factor * usual : fallbackMs;
}
