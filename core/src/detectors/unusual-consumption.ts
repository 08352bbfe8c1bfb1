/**
 * Unusual consumption (docs/domain.md §Detectors): a local day's (or hour's) energy far above the same
 * weekday's recent typical value — the median and the scaled MAD of the last few same weekdays. Energies come
 * in already computed from the counters (`energyPerBucket` over local days or hours), so resets and gaps
 * follow the rules of §Energy from counters.
 */
import { addLocalDays, HOUR_MS, localDateString, localParts, startOfLocalDay } from '../time.ts';
import {
  cloneState,
  type DetectorResult,
  type DetectorState,
  episodeKey,
  type Finding,
  localInstant,
  median,
  scaledMad,
} from './common.ts';

/** Energy of one interval (a local day or an hour) starting at `start`; null where it holds no reading. */
export interface IntervalEnergy {
  start: number;
  energy: number | null;
}

export interface UnusualConsumptionSettings {
  deviceKey?: string;
  tz: string;
  /** Same weekdays looked back on. */
  weeks: number;
  /** Fewer same weekdays with energy than this: no finding. */
  minHistory: number;
  /** How many scaled MADs above the median is unusual. */
  k: number;
  /** The value must also exceed the median by this share (0.5 = 50 %), so a tiny spread is no alarm. */
  minShare: number;
  /** Below this a day is never unusual, kWh. */
  minDayKwh: number;
  /** Below this an hour is never unusual, kWh. */
  minHourKwh: number;
  /** Seasonal loads (heating, a pool pump) opt out: no finding. */
  seasonal: boolean;
}

export const DEFAULT_UNUSUAL_CONSUMPTION_SETTINGS: UnusualConsumptionSettings = {
  tz: 'Europe/Warsaw',
  weeks: 6,
  minHistory: 4,
  k: 4,
  minShare: 0.5,
  minDayKwh: 1,
  minHourKwh: 0.3,
  seasonal: false,
};

export interface UnusualConsumptionInput {
  /** Energy per local day, keyed by the day's start (`calendarBucketStarts(…, 'day', tz)`). */
  days: readonly IntervalEnergy[];
  /** Energy per hour, when hours are checked too. */
  hours?: readonly IntervalEnergy[];
}

export interface TypicalValue {
  median: number;
  mad: number;
  /** The values it was taken from, newest first. */
  values: number[];
  threshold: number;
}

/** The threshold a value must exceed given the same weekdays' values: max(median + k·MAD, median × (1 + share), floor). */
export function unusualThreshold(
  values: readonly number[],
  settings: Pick<UnusualConsumptionSettings, 'k' | 'minShare'>,
  floor = 0,
): TypicalValue {
  const m = median(values);
  const mad = scaledMad(values, m);
  return {
    median: m,
    mad,
    values: [...values],
    threshold: Math.max(m + settings.k * mad, m * (1 + settings.minShare), floor),
  };
}

type Grain = 'day' | 'hour';

function sameWeekdayStarts(start: number, grain: Grain, weeks: number, tz: string): number[] {
  const p = localParts(start, tz);
  const minutes = p.hour * 60 + p.minute;
  const out: number[] = [];
  for (let w = 1; w <= weeks; w++) {
    out.push(
      grain === 'day'
        ? addLocalDays(start, -7 * w, tz)
        : localInstant(p.year, p.month, p.day - 7 * w, minutes, tz),
    );
  }
  return out;
}

/**
 * Checks the local day containing `now` (its energy so far: consumption only grows, so a day already above
 * its threshold stays above) and the day before (complete), and with `hours` the hour containing `now` and
 * the one before. Each day or hour is its own episode: one finding however often it is evaluated.
 */
export function detectUnusualConsumption(
  input: UnusualConsumptionInput,
  settings: Partial<UnusualConsumptionSettings>,
  now: number,
  state?: DetectorState,
): DetectorResult {
  const s = { ...DEFAULT_UNUSUAL_CONSUMPTION_SETTINGS, ...settings };
  const next = cloneState(state);
  const findings: Finding[] = [];
  const prefix = episodeKey('unusual-consumption', s.deviceKey);
  if (s.seasonal) {
    for (const key of Object.keys(next.episodes)) if (key.startsWith(`${prefix}:`)) delete next.episodes[key];
    return { findings, state: next };
  }
  const today = startOfLocalDay(now, s.tz);
  const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS;
  const grains: [Grain, readonly IntervalEnergy[] | undefined, number[], number][] = [
    ['day', input.days, [addLocalDays(today, -1, s.tz), today], s.minDayKwh],
    ['hour', input.hours, [hourStart - HOUR_MS, hourStart], s.minHourKwh],
  ];
  for (const [grain, series, targets, floor] of grains) {
    const keep = new Set<string>();
    if (series) {
      const byStart = new Map<number, number | null>(series.map((e) => [e.start, e.energy]));
      for (const start of targets) {
        const value = byStart.get(start);
        const key = episodeKey('unusual-consumption', s.deviceKey, `${grain}:${start}`);
        keep.add(key);
        if (value === null || value === undefined) continue;
        const history = sameWeekdayStarts(start, grain, s.weeks, s.tz)
          .map((t) => byStart.get(t))
          .filter((v): v is number => v !== null && v !== undefined);
        if (history.length < s.minHistory) continue;
        const typical = unusualThreshold(history, s, floor);
        if (!(value > typical.threshold)) continue;
        const open = next.episodes[key];
        next.episodes[key] = {
          since: start,
          last: now,
          reported: true,
          peak: Math.max(open?.peak ?? value, value),
        };
        if (open) continue;
        const date = localDateString(start, s.tz);
        const complete = grain === 'day' ? start < today : start < hourStart;
        findings.push({
          kind: 'unusual-consumption',
          ...(s.deviceKey !== undefined ? { deviceKey: s.deviceKey } : {}),
          at: start,
          value,
          threshold: typical.threshold,
          detail: {
            unit: 'kWh',
            grain,
            date,
            complete,
            median: typical.median,
            mad: typical.mad,
            k: s.k,
            sameWeekdays: history.length,
            message: `${grain === 'day' ? `Consumption on ${date}` : `Consumption in the hour from ${date} ${String(localParts(start, s.tz).hour).padStart(2, '0')}:00`} ${value.toFixed(2)} kWh is far above the usual ${typical.median.toFixed(2)} kWh for that weekday`,
          },
        });
      }
    }
    // Days and hours no longer checked leave the state.
    for (const key of Object.keys(next.episodes)) {
      if (key.startsWith(`${prefix}:${grain}:`) && !keep.has(key)) delete next.episodes[key];
    }
  }
  return { findings, state: next };
}
