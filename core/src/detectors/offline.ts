/**
 * Offline meter (docs/domain.md §Detectors): no reading for longer than N × the device's usual interval (the
 * median spacing of its recent readings), never less than a minimum. One finding per outage, stamped with the
 * last reading before it.
 */
import { cloneState, type DetectorResult, type DetectorState, episodeKey, medianInterval } from './common.ts';

export interface OfflineSettings {
  deviceKey?: string;
  /** Silent for more than this many usual intervals is offline. */
  factor: number;
  /** Never offline sooner than this. */
  minMs: number;
  /** How many of the latest spacings the usual interval is the median of. */
  recentIntervals: number;
  /** The usual interval when it is known (e.g. configured); else the median of the readings' spacing. */
  usualIntervalMs?: number;
}

export const DEFAULT_OFFLINE_SETTINGS: OfflineSettings = {
  factor: 5,
  minMs: 5 * 60_000,
  recentIntervals: 100,
};

/** How long a device with these reading times may stay silent before it is offline. */
export function offlineThresholdMs(
  timestamps: readonly number[],
  settings: Partial<OfflineSettings> = {},
): number {
  const s = { ...DEFAULT_OFFLINE_SETTINGS, ...settings };
  const usual = usualIntervalOf(timestamps, s);
  return usual === null ? s.minMs : Math.max(s.factor * usual, s.minMs);
}

/** The usual interval: the given one, else the median of the latest spacings; null with fewer than two readings. */
export function usualIntervalOf(
  timestamps: readonly number[],
  settings: Pick<OfflineSettings, 'recentIntervals' | 'usualIntervalMs'>,
): number | null {
  const usual = settings.usualIntervalMs ?? medianInterval(timestamps.slice(-(settings.recentIntervals + 1)));
  return Number.isFinite(usual) ? usual : null;
}

/**
 * `timestamps` are the device's recent reading times in order (the last one is its latest reading). Offline
 * when `now` is more than the threshold after the latest; the episode is that silence, so evaluating again
 * returns nothing until a newer reading ends it.
 */
export function detectMeterOffline(
  timestamps: readonly number[],
  settings: Partial<OfflineSettings>,
  now: number,
  state?: DetectorState,
): DetectorResult {
  const s = { ...DEFAULT_OFFLINE_SETTINGS, ...settings };
  const next = cloneState(state);
  const key = episodeKey('meter-offline', s.deviceKey);
  const last = timestamps[timestamps.length - 1];
  if (last === undefined) return { findings: [], state: next };
  const threshold = offlineThresholdMs(timestamps, s);
  const silent = now - last;
  if (!(silent > threshold)) {
    delete next.episodes[key];
    return { findings: [], state: next };
  }
  const open = next.episodes[key];
  if (open && open.since === last) {
    next.episodes[key] = { ...open, last: now, peak: silent };
    return { findings: [], state: next };
  }
  next.episodes[key] = { since: last, last: now, reported: true, peak: silent };
  return {
    findings: [
      {
        kind: 'meter-offline',
        ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
        at: last,
        value: silent,
        threshold,
        detail: {
          unit: 'ms',
          lastReading: last,
          usualIntervalMs: usualIntervalOf(timestamps, s),
          detectedAt: now,
          message: `No reading for ${Math.round(silent / 60_000)} min (offline after ${Math.round(threshold / 60_000)} min)`,
        },
      },
    ],
    state: next,
  };
}
