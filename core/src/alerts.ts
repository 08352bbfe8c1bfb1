/**
 * The notification evaluator (docs/domain.md §Limits, notifications): a pure state machine fed with committed
 * readings and the passing of time. It decides when an alert is raised, when it is silenced (mute-all,
 * disabled, night 22:00–07:00 in the location's zone, the minimum interval between two alerts of a kind)
 * and when it clears — only once the value is back inside its threshold by a hysteresis margin.
 */
import { localParts } from './time.ts';

export type AlertKind = 'voltage-drop' | 'voltage-rise' | 'consumption' | 'no-data';

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
      if (active.notified && !quiet) {
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
  state.lastSeen = Math.max(state.lastSeen ?? reading.ts, reading.ts);
  return step(state, conditions, reading.ts, settings, tz);
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
