/**
 * Base load (docs/domain.md §Detectors): each local day's always-on power is a low percentile of the power
 * in the night window of that day, in the device's zone. A rise over the median of the previous four weeks
 * by a set share is a finding, once per episode.
 */
import type { TariffCalendar, Zone } from '../tariff/calendar.ts';
import { addLocalDays, localDateString, localParts, MINUTE_MS } from '../time.ts';
import {
  cloneState,
  type DetectorResult,
  type DetectorState,
  episodeKey,
  type Finding,
  localInstant,
  median,
  minutesOfDay,
  percentile,
  type Sample,
} from './common.ts';

export interface BaseLoadSettings {
  deviceKey?: string;
  /** The device location's zone; the night window is local time. */
  tz: string;
  /** Local start of the night window, `HH:mm`. */
  nightFrom: string;
  /** Local end (exclusive), `HH:mm`; earlier than `nightFrom` when the night starts the evening before. */
  nightTo: string;
  /** Which percentile (0–100) of the night's power is the base load. */
  percentile: number;
  /** Share over the median of the previous days that is a rise (0.3 = 30 %). */
  riseShare: number;
  /** Days before today whose median is the reference. */
  historyDays: number;
  /** Fewer days with a base load than this in the reference: no finding. */
  minHistoryDays: number;
  /** A night with fewer power samples has no base load. */
  minNightSamples: number;
  /** Price per kWh for the yearly cost (docs/domain.md §Detectors: how it is chosen); null = no cost. */
  pricePerKwh: number | null;
}

export const DEFAULT_BASE_LOAD_SETTINGS: BaseLoadSettings = {
  tz: 'Europe/Warsaw',
  nightFrom: '00:00',
  nightTo: '05:00',
  percentile: 10,
  riseShare: 0.3,
  historyDays: 28,
  minHistoryDays: 14,
  minNightSamples: 6,
  pricePerKwh: null,
};

export const HOURS_PER_YEAR = 8760;

/** Energy a constant power draws in a year, kWh: W × 8760 h / 1000. */
export function baseLoadYearlyKwh(baseW: number): number {
  return (baseW * HOURS_PER_YEAR) / 1000;
}

/** What a constant power costs in a year at a price per kWh. */
export function baseLoadYearlyCost(baseW: number, pricePerKwh: number): number {
  return baseLoadYearlyKwh(baseW) * pricePerKwh;
}

/**
 * The price an always-on load pays per kWh under a zoned tariff: it draws the same in every hour, so the mean
 * of the zone prices over [from, to) weighted by time (quarter hours; a week covers every day type). A zone
 * without a price takes zone 1's; null when zone 1 has none either. A dynamic tariff has one zone here: the
 * caller adds the mean market price of the period to its zone 1 price.
 */
export function alwaysOnPricePerKwh(
  calendar: TariffCalendar,
  zonePrices: Partial<Record<Zone, number>>,
  from: number,
  to: number,
  tz: string,
): number | null {
  const base = zonePrices[1];
  if (base === undefined) return null;
  let sum = 0;
  let n = 0;
  for (let t = from; t < to; t += 15 * MINUTE_MS) {
    sum += zonePrices[calendar.zoneAt(t, tz)] ?? base;
    n++;
  }
  return n === 0 ? null : sum / n;
}

/**
 * The night window `[from, to)` of the local day starting at `dayStart`, by wall-clock time: on the spring
 * DST day 00:00–05:00 lasts four hours, on the autumn day six.
 */
export function nightWindow(
  dayStart: number,
  settings: Pick<BaseLoadSettings, 'tz' | 'nightFrom' | 'nightTo'>,
): { from: number; to: number } {
  const p = localParts(dayStart, settings.tz);
  const a = minutesOfDay(settings.nightFrom);
  const b = minutesOfDay(settings.nightTo);
  // A night from 23:00 to 05:00 belongs to the day it ends on.
  const from = localInstant(p.year, p.month, b <= a ? p.day - 1 : p.day, a, settings.tz);
  const to = localInstant(p.year, p.month, p.day, b, settings.tz);
  return { from, to };
}

export interface DailyBaseLoad {
  /** Local date `YYYY-MM-DD`. */
  date: string;
  dayStart: number;
  nightFrom: number;
  nightTo: number;
  /** Watts; null when the night holds fewer samples than `minNightSamples`. */
  baseW: number | null;
  samples: number;
}

/**
 * The base load of each local day (`dayStarts` from `calendarBucketStarts(…, 'day', tz)`): the percentile of
 * the power samples in its night window. Power is a gauge, so a sample belongs to `[from, to)`. Samples must
 * be in time order.
 */
export function dailyBaseLoads(
  samples: readonly Sample[],
  dayStarts: readonly number[],
  settings: Partial<BaseLoadSettings> = {},
): DailyBaseLoad[] {
  const s = { ...DEFAULT_BASE_LOAD_SETTINGS, ...settings };
  const out: DailyBaseLoad[] = [];
  let i = 0;
  for (const dayStart of dayStarts) {
    const w = nightWindow(dayStart, s);
    while (i < samples.length && samples[i]!.ts < w.from) i++;
    const values: number[] = [];
    for (let j = i; j < samples.length && samples[j]!.ts < w.to; j++) values.push(samples[j]!.value);
    out.push({
      date: localDateString(dayStart, s.tz),
      dayStart,
      nightFrom: w.from,
      nightTo: w.to,
      baseW: values.length >= s.minNightSamples ? percentile(values, s.percentile) : null,
      samples: values.length,
    });
  }
  return out;
}

/**
 * Compares today's base load (the entry for the local date of `now`, once its night is over) with the
 * median of the previous `historyDays` days. A finding when it exceeds the median by more than
 * `riseShare`, returned once while the rise lasts; a day back under the threshold ends the episode.
 */
export function detectBaseLoadRise(
  days: readonly DailyBaseLoad[],
  settings: Partial<BaseLoadSettings>,
  now: number,
  state?: DetectorState,
): DetectorResult {
  const s = { ...DEFAULT_BASE_LOAD_SETTINGS, ...settings };
  const next = cloneState(state);
  const key = episodeKey('base-load-rise', s.deviceKey);
  const today = days.find((d) => d.date === localDateString(now, s.tz));
  if (!today || today.baseW === null || now < today.nightTo) return { findings: [], state: next };
  const earliest = addLocalDays(today.dayStart, -s.historyDays, s.tz);
  const history = days
    .filter((d) => d.dayStart < today.dayStart && d.dayStart >= earliest && d.baseW !== null)
    .map((d) => d.baseW!);
  if (history.length < s.minHistoryDays) return { findings: [], state: next };
  const ref = median(history);
  const threshold = ref * (1 + s.riseShare);
  const value = today.baseW;
  if (!(value > threshold)) {
    delete next.episodes[key];
    return { findings: [], state: next };
  }
  const open = next.episodes[key];
  if (open) {
    next.episodes[key] = { ...open, last: today.dayStart, peak: Math.max(open.peak, value) };
    return { findings: [], state: next };
  }
  next.episodes[key] = { since: today.dayStart, last: today.dayStart, reported: true, peak: value };
  const price = s.pricePerKwh;
  const finding: Finding = {
    kind: 'base-load-rise',
    ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
    at: today.dayStart,
    value,
    threshold,
    detail: {
      unit: 'W',
      date: today.date,
      medianW: ref,
      historyDays: history.length,
      rise: ref > 0 ? value / ref - 1 : null,
      percentile: s.percentile,
      nightSamples: today.samples,
      yearlyKwh: baseLoadYearlyKwh(value),
      yearlyCost: price === null ? null : baseLoadYearlyCost(value, price),
      extraYearlyCost: price === null ? null : baseLoadYearlyCost(value - ref, price),
      message: `Always-on power ${Math.round(value)} W is above ${Math.round(threshold)} W (${history.length}-day median ${Math.round(ref)} W + ${Math.round(s.riseShare * 100)} %)`,
    },
  };
  return { findings: [finding], state: next };
}
