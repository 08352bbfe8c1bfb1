/**
 * Solar underperformance (docs/domain.md §Detectors): a day's production below a share of the recent
 * clear-day maximum (the largest daily production of the last weeks stands for a clear day at this time of
 * year), or no production through daylight for an hour while the grid meter shows import.
 */
import { addLocalDays, localDateString, localParts, startOfLocalDay } from '../time.ts';
import {
  advanceRun,
  cloneState,
  type DetectorResult,
  type DetectorState,
  episodeKey,
  type Finding,
  localInstant,
  maxGapOf,
  medianInterval,
  minutesOfDay,
  type Sample,
} from './common.ts';
import type { IntervalEnergy } from './unusual-consumption.ts';

export interface SolarSettings {
  deviceKey?: string;
  tz: string;
  /** A day producing less than this share of the reference is a finding (0.4 = 40 %). */
  share: number;
  /** Days before the checked day whose largest production is the reference. */
  lookbackDays: number;
  /** Fewer days with production than this in the look-back: no daily finding. */
  minHistoryDays: number;
  /** A reference below this (kWh) says nothing: no daily finding. */
  minReferenceKwh: number;
  /** Local daylight window `HH:mm` when no sunrise and sunset are given. */
  daylightFrom: string;
  daylightTo: string;
  /** How long production must stay at zero in daylight. */
  zeroMinMs: number;
  /** Production at or below this power (W) counts as zero (an inverter's standby draw). */
  zeroW: number;
  /** Grid power above this (W, import positive) counts as import. */
  importW: number;
  /** A spacing above this many usual intervals breaks a zero run. */
  gapFactor: number;
  /** The meters' usual reporting interval; else the median spacing of the samples. */
  usualIntervalMs?: number;
}

export const DEFAULT_SOLAR_SETTINGS: SolarSettings = {
  tz: 'Europe/Warsaw',
  share: 0.4,
  lookbackDays: 21,
  minHistoryDays: 14,
  minReferenceKwh: 0.5,
  daylightFrom: '09:00',
  daylightTo: '15:00',
  zeroMinMs: 60 * 60_000,
  zeroW: 10,
  importW: 50,
  gapFactor: 2,
};

export interface SolarInput {
  /** Production per local day (the PV meter's counter through `energyPerBucket`), keyed by the day's start. */
  days?: readonly IntervalEnergy[];
  /** PV power samples, W, in time order. */
  production?: readonly Sample[];
  /** Grid meter power samples, W, import positive, in time order. */
  grid?: readonly Sample[];
  /** Sunrise and sunset of the local day containing `now`, when the caller knows them. */
  sun?: { sunrise: number; sunset: number };
}

/** The daylight window `[from, to)` of the local day containing `ts`: the sun's, else the fixed local hours. */
export function daylightWindow(
  ts: number,
  settings: Pick<SolarSettings, 'tz' | 'daylightFrom' | 'daylightTo'>,
  sun?: { sunrise: number; sunset: number },
): { from: number; to: number } {
  if (sun) return { from: sun.sunrise, to: sun.sunset };
  const p = localParts(ts, settings.tz);
  return {
    from: localInstant(p.year, p.month, p.day, minutesOfDay(settings.daylightFrom), settings.tz),
    to: localInstant(p.year, p.month, p.day, minutesOfDay(settings.daylightTo), settings.tz),
  };
}

function lowDay(
  days: readonly IntervalEnergy[],
  s: SolarSettings,
  now: number,
  next: DetectorState,
  findings: Finding[],
): void {
  const key = episodeKey('solar-underperformance', s.deviceKey, 'day');
  const target = addLocalDays(startOfLocalDay(now, s.tz), -1, s.tz);
  const byStart = new Map(days.map((d) => [d.start, d.energy]));
  const value = byStart.get(target);
  if (value === null || value === undefined) return;
  const history: number[] = [];
  for (let i = 1; i <= s.lookbackDays; i++) {
    const v = byStart.get(addLocalDays(target, -i, s.tz));
    if (v !== null && v !== undefined) history.push(v);
  }
  if (history.length < s.minHistoryDays) return;
  const reference = Math.max(...history);
  if (reference < s.minReferenceKwh) return;
  const threshold = s.share * reference;
  if (!(value < threshold)) {
    delete next.episodes[key];
    return;
  }
  const open = next.episodes[key];
  if (open) {
    next.episodes[key] = { ...open, last: target };
    return;
  }
  next.episodes[key] = { since: target, last: target, reported: true, peak: value };
  const date = localDateString(target, s.tz);
  findings.push({
    kind: 'solar-underperformance',
    ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
    at: target,
    value,
    threshold,
    detail: {
      mode: 'low-day',
      unit: 'kWh',
      date,
      referenceKwh: reference,
      share: s.share,
      historyDays: history.length,
      message: `Solar production on ${date} was ${value.toFixed(2)} kWh, below ${Math.round(s.share * 100)} % of the recent best day (${reference.toFixed(2)} kWh)`,
    },
  });
}

function zeroInDaylight(
  input: SolarInput,
  s: SolarSettings,
  now: number,
  next: DetectorState,
  findings: Finding[],
): void {
  const production = input.production ?? [];
  const grid = input.grid ?? [];
  const key = episodeKey('solar-underperformance', s.deviceKey, 'zero');
  const window = daylightWindow(now, s, input.sun);
  const usual =
    s.usualIntervalMs ??
    Math.max(
      ...[medianInterval(production.map((p) => p.ts)), medianInterval(grid.map((g) => g.ts))].filter(
        Number.isFinite,
      ),
    );
  const maxGapMs = maxGapOf([], s.gapFactor, s.zeroMinMs, Number.isFinite(usual) ? usual : undefined);
  const options = { minDurationMs: s.zeroMinMs, maxGapMs };
  // One timeline of both meters; each instant sees the latest value of each, if recent enough.
  const events = [
    ...production.map((p) => ({ ts: p.ts, pv: p.value })),
    ...grid.map((g) => ({ ts: g.ts, grid: g.value })),
  ].sort((a, b) => a.ts - b.ts);
  let pv: Sample | undefined;
  let gr: Sample | undefined;
  let cursor = next.cursors[key];
  let episode = next.episodes[key];
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    if (e.ts > now) break;
    if ('pv' in e && e.pv !== undefined) pv = { ts: e.ts, value: e.pv };
    if ('grid' in e && e.grid !== undefined) gr = { ts: e.ts, value: e.grid };
    // Both meters' samples at one instant are taken together.
    if (events[i + 1]?.ts === e.ts) continue;
    if (e.ts < window.from || e.ts >= window.to) continue;
    if (cursor !== undefined && e.ts <= cursor) continue;
    const fresh = (x: Sample | undefined): x is Sample => x !== undefined && e.ts - x.ts <= maxGapMs;
    const holds = fresh(pv) && fresh(gr) && pv.value <= s.zeroW && gr.value > s.importW;
    const step = advanceRun(episode, cursor, e.ts, holds, gr?.value ?? 0, options);
    cursor = e.ts;
    episode = step.episode;
    if (step.reached && episode) {
      const minutes = (episode.last - episode.since) / 60_000;
      findings.push({
        kind: 'solar-underperformance',
        ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
        at: episode.since,
        value: minutes,
        threshold: s.zeroMinMs / 60_000,
        detail: {
          mode: 'zero-in-daylight',
          unit: 'min',
          detectedAt: e.ts,
          productionW: pv?.value ?? null,
          gridImportW: gr?.value ?? null,
          daylightFrom: window.from,
          daylightTo: window.to,
          message: `No solar production for ${Math.round(minutes)} min in daylight while importing ${Math.round(gr?.value ?? 0)} W from the grid`,
        },
      });
    }
  }
  if (cursor !== undefined) next.cursors[key] = cursor;
  if (episode && now - episode.last <= maxGapMs) next.episodes[key] = episode;
  else delete next.episodes[key];
}

/**
 * Checks the day before the local day of `now` against the largest production of the `lookbackDays` days
 * before it (one finding while days stay low), and the daylight of the day of `now` for a zero run (one
 * finding per run).
 */
export function detectSolarUnderperformance(
  input: SolarInput,
  settings: Partial<SolarSettings>,
  now: number,
  state?: DetectorState,
): DetectorResult {
  const s = { ...DEFAULT_SOLAR_SETTINGS, ...settings };
  const next = cloneState(state);
  const findings: Finding[] = [];
  if (input.days) lowDay(input.days, s, now, next, findings);
  if (input.production && input.grid) zeroInDaylight(input, s, now, next, findings);
  return { findings, state: next };
}
