/**
 * The notification evaluator (docs/domain.md §Limits, notifications): a pure state machine fed with committed
 * readings and the passing of time. It decides when an alert is raised, when it is silenced (mute-all,
 * disabled, night 22:00–07:00 in the location's zone, the minimum interval between two alerts of a kind)
 * and when it clears — only once the value is back inside its threshold by a hysteresis margin.
 */
import { type DetectorState, episodeKey, medianInterval } from './detectors/common.ts';
import { detectMeterOffline } from './detectors/offline.ts';
import { detectPhaseImbalance, detectPhaseOverload } from './detectors/phase.ts';
import { localParts } from './time.ts';

export type AlertKind =
  | 'voltage-drop'
  | 'voltage-rise'
  | 'consumption'
  | 'no-data'
  | 'phase-overload'
  | 'phase-imbalance'
  | 'meter-offline';

/**
 * The detector alerts' settings (docs/api.md §Exports and notifications): optional, so a device without
 * them (an older client, a core caller) gets the defaults below.
 */
export interface DetectorAlertSettings {
  /** Fuse rating per phase, A; null = no overload check. */
  fuseA: number | null;
  /** Share of the fuse rating that is an overload. */
  overloadShare: number;
  /** How long an overload or imbalance must hold, s. */
  overloadSeconds: number;
  /** (max − min) / mean of the phase currents above this share is an imbalance; null = off. */
  imbalanceShare: number | null;
  /** Whether a meter silent for `offlineFactor` × its usual interval raises `meter-offline`. */
  offline: boolean;
  /** Silent for more than this many usual intervals is offline (never sooner than 5 minutes). */
  offlineFactor: number;
}

export const DEFAULT_DETECTOR_ALERT_SETTINGS: DetectorAlertSettings = {
  fuseA: null,
  overloadShare: 0.9,
  overloadSeconds: 60,
  imbalanceShare: 0.5,
  offline: false,
  offlineFactor: 5,
};

/** How many recent reading times the state keeps: the usual interval is the median of their spacings. */
export const RECENT_READINGS = 21;

export interface AlertSettings {
  enabled: boolean;
  /** Volts: alert when a phase's mean voltage falls below. */
  voltageDrop: number;
  /** Volts: alert when a phase's mean voltage rises above. */
  voltageRise: number;
  /** kWh imported in the local day; 0 = off. */
  totalConsumption: number;
  disableAtNight: boolean;
  /** Minutes between two alerts of the same kind. */
  interval: number;
  muteAll: boolean;
  fuseA?: number | null;
  overloadShare?: number;
  overloadSeconds?: number;
  imbalanceShare?: number | null;
  offline?: boolean;
  offlineFactor?: number;
}

export interface AlertOptions {
  /** Volts a voltage must be back inside its threshold before the alert clears. */
  voltageHysteresis: number;
  /** A device silent this long is offline and raises a no-data alert. */
  offlineAfterMs: number;
}

export const DEFAULT_ALERT_OPTIONS: AlertOptions = { voltageHysteresis: 2, offlineAfterMs: 15 * 60_000 };

/** Night silence, local hours [22:00, 07:00) (docs/spec.md §3). */
export const NIGHT_START_HOUR = 22;
export const NIGHT_END_HOUR = 7;

interface ActiveAlert {
  since: number;
  /** Whether the user was told; a silenced alert is told when the silence ends, if still active. */
  notified: boolean;
  value: number;
  threshold: number;
}

export interface AlertState {
  /** Active alerts keyed by kind and phase (`voltage-drop:2`, `consumption`, `no-data`). */
  active: Record<string, ActiveAlert>;
  /** When an alert of each kind was last sent. */
  lastSent: Partial<Record<AlertKind, number>>;
  lastSeen: number | null;
  /**
   * The detectors' episodes and cursors (core/src/detectors) and the latest reading times, from which the
   * usual interval comes; absent until a reading or an offline check needs them.
   */
  detectors?: { state: DetectorState; recent: number[] };
}

export function initialAlertState(): AlertState {
  return { active: {}, lastSent: {}, lastSeen: null };
}

export interface AlertEvent {
  kind: AlertKind;
  /** `alert` when raised, `recovery` when the value is back inside its threshold. */
  type: 'alert' | 'recovery';
  phase?: 1 | 2 | 3;
  at: number;
  value: number;
  threshold: number;
  message: string;
}

export function isNight(ts: number, tz: string): boolean {
  const h = localParts(ts, tz).hour;
  return h >= NIGHT_START_HOUR || h < NIGHT_END_HOUR;
}

function silenced(settings: AlertSettings, ts: number, tz: string): boolean {
  return !settings.enabled || settings.muteAll || (settings.disableAtNight && isNight(ts, tz));
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}

function describe(
  kind: AlertKind,
  type: AlertEvent['type'],
  value: number,
  threshold: number,
  phase?: number,
) {
  const on = phase ? ` on phase ${phase}` : '';
  switch (kind) {
    case 'voltage-drop':
      return type === 'alert'
        ? `Voltage drop${on}: ${fmt(value)} V (below ${fmt(threshold)} V)`
        : `Voltage back to normal${on}: ${fmt(value)} V`;
    case 'voltage-rise':
      return type === 'alert'
        ? `Voltage rise${on}: ${fmt(value)} V (above ${fmt(threshold)} V)`
        : `Voltage back to normal${on}: ${fmt(value)} V`;
    case 'consumption':
      return type === 'alert'
        ? `Today's consumption ${fmt(value)} kWh exceeds ${fmt(threshold)} kWh`
        : `Consumption back under ${fmt(threshold)} kWh`;
    case 'no-data':
      return type === 'alert' ? 'No data from the device: it is offline' : 'The device is sending data again';
    case 'phase-overload':
      return `Overload${on}: ${fmt(value)} A (above ${fmt(threshold)} A)`;
    case 'phase-imbalance':
      return `Phase imbalance: ${fmt(value)} % (above ${fmt(threshold)} %)`;
    case 'meter-offline':
      return `No reading for ${fmt(value)} min (offline after ${fmt(threshold)} min)`;
  }
}

interface Condition {
  key: string;
  kind: AlertKind;
  phase?: 1 | 2 | 3;
  /** Beyond the threshold now. */
  breached: boolean;
  /** Back inside by the hysteresis margin. */
  cleared: boolean;
  value: number;
  threshold: number;
  /** Detector kinds tell their finding once and no recovery: the episode's end only closes the alert. */
  silentRecovery?: boolean;
}

function step(
  state: AlertState,
  conditions: readonly Condition[],
  at: number,
  settings: AlertSettings,
  tz: string,
): AlertEvent[] {
  const events: AlertEvent[] = [];
  const quiet = silenced(settings, at, tz);
  for (const c of conditions) {
    const active = state.active[c.key];
    if (!active && c.breached) {
      state.active[c.key] = { since: at, notified: false, value: c.value, threshold: c.threshold };
    } else if (active && c.cleared) {
      delete state.active[c.key];
      if (active.notified && !quiet && !c.silentRecovery) {
        events.push(event(c, 'recovery', at));
      }
      continue;
    } else if (active) {
      active.value = c.value;
    }
    const now = state.active[c.key];
    if (now && !now.notified && !quiet) {
      const last = state.lastSent[c.kind];
      if (last === undefined || at - last >= settings.interval * 60_000) {
        now.notified = true;
        state.lastSent[c.kind] = at;
        events.push(event(c, 'alert', at));
      }
    }
  }
  return events;
}

function event(c: Condition, type: AlertEvent['type'], at: number): AlertEvent {
  return {
    kind: c.kind,
    type,
    ...(c.phase ? { phase: c.phase } : {}),
    at,
    value: c.value,
    threshold: c.threshold,
    message: describe(c.kind, type, c.value, c.threshold, c.phase),
  };
}

/**
 * Evaluates one committed reading. `todayImportKwh` is the energy imported so far in the local day (when
 * the caller knows it) for the consumption threshold. Mutates and returns `state` with the events to store
 * and push.
 */
export function evaluateReading(
  state: AlertState,
  reading: { ts: number; values: Record<string, number>; todayImportKwh?: number },
  settings: AlertSettings,
  tz: string,
  options: AlertOptions = DEFAULT_ALERT_OPTIONS,
): AlertEvent[] {
  const conditions: Condition[] = [];
  const h = options.voltageHysteresis;
  // Coming back after a silence clears the no-data alert.
  if (state.active['no-data']) {
    conditions.push({
      key: 'no-data',
      kind: 'no-data',
      breached: false,
      cleared: true,
      value: 0,
      threshold: options.offlineAfterMs,
    });
  }
  for (const phase of [1, 2, 3] as const) {
    const v = reading.values[`vave${phase}`];
    if (v === undefined) continue;
    conditions.push({
      key: `voltage-drop:${phase}`,
      kind: 'voltage-drop',
      phase,
      breached: v < settings.voltageDrop,
      cleared: v >= settings.voltageDrop + h,
      value: v,
      threshold: settings.voltageDrop,
    });
    conditions.push({
      key: `voltage-rise:${phase}`,
      kind: 'voltage-rise',
      phase,
      breached: v > settings.voltageRise,
      cleared: v <= settings.voltageRise - h,
      value: v,
      threshold: settings.voltageRise,
    });
  }
  if (settings.totalConsumption > 0 && reading.todayImportKwh !== undefined) {
    const e = reading.todayImportKwh;
    conditions.push({
      key: 'consumption',
      kind: 'consumption',
      breached: e > settings.totalConsumption,
      // A new local day starts the count again.
      cleared: e <= settings.totalConsumption,
      value: e,
      threshold: settings.totalConsumption,
    });
  }
  conditions.push(...detectorConditions(state, reading, settings));
  state.lastSeen = Math.max(state.lastSeen ?? reading.ts, reading.ts);
  return step(state, conditions, reading.ts, settings, tz);
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** The detector part of a device's state, created on first use. */
function detectorsOf(state: AlertState): NonNullable<AlertState['detectors']> {
  state.detectors ??= { state: { episodes: {}, cursors: {} }, recent: [] };
  return state.detectors;
}

/**
 * A reading through the phase detectors (with the device's state, one sample at a time) and its time into the
 * recent ones; conditions for the alerts they hold. An open overload or imbalance is an active alert; the
 * detector's episode ending (a sample that does not hold, a gap) clears it without a recovery message.
 */
function detectorConditions(
  state: AlertState,
  reading: { ts: number; values: Record<string, number> },
  settings: AlertSettings,
): Condition[] {
  const s = { ...DEFAULT_DETECTOR_ALERT_SETTINGS, ...definedOf(settings) };
  const conditions: Condition[] = [];
  // A reading ends a meter-offline episode (the detector's own state follows at the next check).
  if (state.active['meter-offline']) {
    conditions.push({
      key: 'meter-offline',
      kind: 'meter-offline',
      breached: false,
      cleared: true,
      value: 0,
      threshold: 0,
      silentRecovery: true,
    });
  }
  const hasCurrents = [1, 2, 3].some((p) => reading.values[`iave${p}`] !== undefined);
  if (!hasCurrents && !s.offline && !state.detectors) return conditions;
  const det = detectorsOf(state);
  const last = det.recent[det.recent.length - 1];
  if (last === undefined || reading.ts > last) {
    det.recent.push(reading.ts);
    if (det.recent.length > RECENT_READINGS) det.recent.splice(0, det.recent.length - RECENT_READINGS);
  }
  if (!hasCurrents) return conditions;
  const usual = medianInterval(det.recent);
  const phaseSettings = {
    fuseA: s.fuseA,
    overloadShare: s.overloadShare,
    minDurationMs: s.overloadSeconds * 1000,
    imbalanceShare: s.imbalanceShare ?? Number.POSITIVE_INFINITY,
    ...(Number.isFinite(usual) ? { usualIntervalMs: usual } : {}),
  };
  const sample = [{ ts: reading.ts, values: reading.values }];
  if (s.fuseA !== null && s.fuseA > 0) {
    det.state = detectPhaseOverload(sample, phaseSettings, reading.ts, det.state).state;
    const threshold = s.fuseA * s.overloadShare;
    for (const phase of [1, 2, 3] as const) {
      const key = `phase-overload:${phase}`;
      const episode = det.state.episodes[episodeKey('phase-overload', undefined, `L${phase}`)];
      const holds = episode?.reported === true;
      if (!holds && !state.active[key]) continue;
      conditions.push({
        key,
        kind: 'phase-overload',
        phase,
        breached: holds,
        cleared: !holds,
        value: round1(episode?.peak ?? 0),
        threshold: round1(threshold),
        silentRecovery: true,
      });
    }
  }
  if (s.imbalanceShare !== null) {
    det.state = detectPhaseImbalance(sample, phaseSettings, reading.ts, det.state).state;
    const episode = det.state.episodes[episodeKey('phase-imbalance', undefined)];
    const holds = episode?.reported === true;
    if (holds || state.active['phase-imbalance']) {
      // In % of the mean current, as the message and the client's text say.
      conditions.push({
        key: 'phase-imbalance',
        kind: 'phase-imbalance',
        breached: holds,
        cleared: !holds,
        value: Math.round((episode?.peak ?? 0) * 100),
        threshold: Math.round(s.imbalanceShare * 100),
        silentRecovery: true,
      });
    }
  }
  return conditions;
}

/** The settings' fields that are set (an undefined one takes its default). */
function definedOf(settings: AlertSettings): Partial<DetectorAlertSettings> {
  const out: Partial<Record<keyof DetectorAlertSettings, unknown>> = {};
  for (const k of Object.keys(DEFAULT_DETECTOR_ALERT_SETTINGS) as (keyof DetectorAlertSettings)[]) {
    if (settings[k] !== undefined) out[k] = settings[k];
  }
  return out as Partial<DetectorAlertSettings>;
}

/**
 * The periodic offline check of one device (`meter-offline`): its latest reading time (the store's or
 * ingest's, which may be newer than any this state saw) against `offlineFactor` × its usual interval — the
 * median spacing of the recent readings in the state — and never sooner than 5 minutes. One alert per
 * outage, value and threshold in minutes; a reading ends it without a recovery message (the fixed-time
 * `no-data` alert tells that). Mutates `state`; returns the events to store and push.
 */
export function evaluateOffline(
  state: AlertState,
  lastReadingAt: number | null,
  now: number,
  settings: AlertSettings,
  tz: string,
): AlertEvent[] {
  const s = { ...DEFAULT_DETECTOR_ALERT_SETTINGS, ...definedOf(settings) };
  if (!s.offline) return [];
  const det = detectorsOf(state);
  const times = [...det.recent];
  const last = times[times.length - 1];
  if (lastReadingAt !== null && (last === undefined || lastReadingAt > last)) times.push(lastReadingAt);
  if (times.length === 0) return [];
  const result = detectMeterOffline(
    times,
    { factor: s.offlineFactor, recentIntervals: RECENT_READINGS - 1 },
    now,
    det.state,
  );
  det.state = result.state;
  const episode = det.state.episodes[episodeKey('meter-offline', undefined)];
  const finding = result.findings[0];
  const holds = episode !== undefined;
  if (!holds && !state.active['meter-offline']) return [];
  const minutes = (ms: number) => round1(ms / 60_000);
  const threshold = finding?.threshold ?? state.active['meter-offline']?.threshold ?? 0;
  return step(
    state,
    [
      {
        key: 'meter-offline',
        kind: 'meter-offline',
        breached: holds,
        cleared: !holds,
        value: minutes(episode?.peak ?? 0),
        threshold: finding ? minutes(threshold) : threshold,
        silentRecovery: true,
      },
    ],
    now,
    settings,
    tz,
  );
}

/**
 * Evaluates the passing of time with no reading: a device silent for longer than `offlineAfterMs` is offline
 * and raises a no-data alert; pending silenced alerts are told once the silence ends.
 */
export function evaluateSilence(
  state: AlertState,
  now: number,
  settings: AlertSettings,
  tz: string,
  options: AlertOptions = DEFAULT_ALERT_OPTIONS,
): AlertEvent[] {
  if (state.lastSeen === null) return [];
  const silentFor = now - state.lastSeen;
  const conditions: Condition[] = [
    {
      key: 'no-data',
      kind: 'no-data',
      breached: silentFor > options.offlineAfterMs,
      cleared: silentFor <= options.offlineAfterMs,
      value: silentFor,
      threshold: options.offlineAfterMs,
    },
  ];
  // Re-offer active alerts that were silenced, so they are told when night or mute ends.
  for (const [key, a] of Object.entries(state.active)) {
    if (key === 'no-data' || a.notified) continue;
    const [kind, phase] = key.split(':') as [AlertKind, string | undefined];
    conditions.push({
      key,
      kind,
      ...(phase ? { phase: Number(phase) as 1 | 2 | 3 } : {}),
      breached: true,
      cleared: false,
      value: a.value,
      threshold: a.threshold,
    });
  }
  return step(state, conditions, now, settings, tz);
}
