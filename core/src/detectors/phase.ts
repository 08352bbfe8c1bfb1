/**
 * Phase overload and imbalance (docs/domain.md §Detectors), from timestamped current samples at whatever
 * spacing the meter sends them. A condition must hold at every sample for the whole duration; a spacing
 * longer than `gapFactor` usual intervals breaks the run, since nothing is known of the silence.
 */
import {
  advanceRun,
  cloneState,
  type DetectorResult,
  type DetectorState,
  type Episode,
  episodeKey,
  type Finding,
  maxGapOf,
} from './common.ts';

/** A reading's time and values (a `Reading` fits); currents are `<stem>1..3`. */
export interface PhaseSample {
  ts: number;
  values: Readonly<Record<string, number>>;
}

export interface PhaseSettings {
  deviceKey?: string;
  /** The fuse rating per phase, A; null = no overload check. */
  fuseA: number | null;
  /** Share of the fuse rating that is an overload (0.9 = 90 %). */
  overloadShare: number;
  /** How long a condition must hold. */
  minDurationMs: number;
  /** (max − min) / mean of the three phases above this share is an imbalance (0.5 = 50 %). */
  imbalanceShare: number;
  /** No imbalance is judged while the mean current is at or below this, A. */
  imbalanceFloorA: number;
  /** A spacing above this many usual intervals breaks a run. */
  gapFactor: number;
  /** The meter's usual interval; else the median spacing of the samples. */
  usualIntervalMs?: number;
  /** Which current: `iave` (the interval's mean) or `imax`. */
  stem: string;
}

export const DEFAULT_PHASE_SETTINGS: PhaseSettings = {
  fuseA: null,
  overloadShare: 0.9,
  minDurationMs: 60_000,
  imbalanceShare: 0.5,
  imbalanceFloorA: 2,
  gapFactor: 2,
  stem: 'iave',
};

const PHASES = [1, 2, 3] as const;

/** Imbalance of three currents: (max − min) / mean, or null while the mean is at or below the floor. */
export function phaseImbalance(currents: readonly number[], floorA: number): number | null {
  if (currents.length !== 3) return null;
  const a = currents.map(Math.abs);
  const mean = (a[0]! + a[1]! + a[2]!) / 3;
  if (!(mean > floorA)) return null;
  return (Math.max(...a) - Math.min(...a)) / mean;
}

interface Stream {
  key: string;
  /** The sample's value when it is one of this stream's, undefined when the sample says nothing of it. */
  read: (sample: PhaseSample) => number | undefined;
  holds: (value: number) => boolean;
  found: (episode: Episode, detectedAt: number) => Finding;
}

function runStreams(
  samples: readonly PhaseSample[],
  streams: readonly Stream[],
  minDurationMs: number,
  maxGapMs: number,
  now: number,
  next: DetectorState,
): Finding[] {
  const findings: Finding[] = [];
  const options = { minDurationMs, maxGapMs };
  for (const st of streams) {
    let cursor = next.cursors[st.key];
    let episode = next.episodes[st.key];
    for (const sample of samples) {
      if (sample.ts > now) break;
      if (cursor !== undefined && sample.ts <= cursor) continue;
      const v = st.read(sample);
      if (v === undefined) continue;
      const step = advanceRun(episode, cursor, sample.ts, st.holds(v), v, options);
      cursor = sample.ts;
      episode = step.episode;
      if (step.reached && episode) findings.push(st.found(episode, sample.ts));
    }
    if (cursor !== undefined) next.cursors[st.key] = cursor;
    if (episode && now - episode.last <= maxGapMs) next.episodes[st.key] = episode;
    else delete next.episodes[st.key];
  }
  return findings.sort((a, b) => a.at - b.at);
}

function gapOf(samples: readonly PhaseSample[], s: PhaseSettings): number {
  return maxGapOf(
    samples.map((x) => x.ts),
    s.gapFactor,
    s.minDurationMs,
    s.usualIntervalMs,
  );
}

/**
 * Phase overload: a phase's current (its magnitude: an exporting phase counts too) above fuse × share at
 * every sample for at least `minDurationMs`. One finding per run and phase, at the run's first sample, with
 * the highest current of the run so far.
 */
export function detectPhaseOverload(
  samples: readonly PhaseSample[],
  settings: Partial<PhaseSettings>,
  now: number,
  state?: DetectorState,
): DetectorResult {
  const s = { ...DEFAULT_PHASE_SETTINGS, ...settings };
  const next = cloneState(state);
  const fuse = s.fuseA;
  if (fuse === null || !(fuse > 0)) return { findings: [], state: next };
  const threshold = fuse * s.overloadShare;
  const streams: Stream[] = PHASES.map((phase) => ({
    key: episodeKey('phase-overload', s.deviceKey, `L${phase}`),
    read: (x) => {
      const v = x.values[`${s.stem}${phase}`];
      return v === undefined || !Number.isFinite(v) ? undefined : Math.abs(v);
    },
    holds: (v) => v > threshold,
    found: (e, detectedAt) => ({
      kind: 'phase-overload',
      ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
      at: e.since,
      value: e.peak,
      threshold,
      detail: {
        unit: 'A',
        phase,
        fuseA: fuse,
        share: s.overloadShare,
        durationMs: e.last - e.since,
        detectedAt,
        message: `Phase L${phase} carried up to ${e.peak.toFixed(1)} A, above ${Math.round(s.overloadShare * 100)} % of its ${fuse} A fuse, for ${Math.round((e.last - e.since) / 1000)} s`,
      },
    }),
  }));
  return {
    findings: runStreams(samples, streams, s.minDurationMs, gapOf(samples, s), now, next),
    state: next,
  };
}

/**
 * Phase imbalance: (max − min) / mean of the three currents above `imbalanceShare` at every sample for at
 * least `minDurationMs`, judged only while the mean exceeds `imbalanceFloorA` (a sample at or below it, or
 * without all three currents, ends the run). One finding per run, with the highest imbalance so far.
 */
export function detectPhaseImbalance(
  samples: readonly PhaseSample[],
  settings: Partial<PhaseSettings>,
  now: number,
  state?: DetectorState,
): DetectorResult {
  const s = { ...DEFAULT_PHASE_SETTINGS, ...settings };
  const next = cloneState(state);
  const stream: Stream = {
    key: episodeKey('phase-imbalance', s.deviceKey),
    read: (x) => {
      const currents = PHASES.map((p) => x.values[`${s.stem}${p}`]);
      if (currents.some((c) => c === undefined || !Number.isFinite(c))) return Number.NaN;
      return phaseImbalance(currents as number[], s.imbalanceFloorA) ?? Number.NaN;
    },
    holds: (v) => v > s.imbalanceShare,
    found: (e, detectedAt) => ({
      kind: 'phase-imbalance',
      ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
      at: e.since,
      value: e.peak,
      threshold: s.imbalanceShare,
      detail: {
        unit: 'share',
        floorA: s.imbalanceFloorA,
        durationMs: e.last - e.since,
        detectedAt,
        message: `Phase currents differ by up to ${Math.round(e.peak * 100)} % of their mean (above ${Math.round(s.imbalanceShare * 100)} %) for ${Math.round((e.last - e.since) / 1000)} s`,
      },
    }),
  };
  return {
    findings: runStreams(samples, [stream], s.minDurationMs, gapOf(samples, s), now, next),
    state: next,
  };
}
