/**
 * Time-zone arithmetic on plain epoch milliseconds, built on Intl only (so it runs in the browser too).
 * Data is stored in UTC; days, weeks, months and years are counted in the device location's zone
 * (docs/domain.md §Time), where a day has 23, 24 or 25 hours.
 */

export const DEFAULT_TIMEZONE = 'Europe/Warsaw';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export interface LocalParts {
  year: number;
  /** 1..12 */
  month: number;
  /** 1..31 */
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** ISO weekday: 1 = Monday .. 7 = Sunday */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** True when the runtime knows the IANA zone name. */
export function isValidTimeZone(tz: string): boolean {
  if (!tz) return false;
  try {
    formatter(tz);
    return true;
  } catch {
    return false;
  }
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

/** Wall-clock fields of an instant from Intl (exact, ~10 µs a call). */
function intlParts(ts: number, tz: string): LocalParts {
  const out: LocalParts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, weekday: 0 };
  for (const p of formatter(tz).formatToParts(new Date(ts))) {
    switch (p.type) {
      case 'year':
        out.year = Number(p.value);
        break;
      case 'month':
        out.month = Number(p.value);
        break;
      case 'day':
        out.day = Number(p.value);
        break;
      case 'hour':
        out.hour = Number(p.value);
        break;
      case 'minute':
        out.minute = Number(p.value);
        break;
      case 'second':
        out.second = Number(p.value);
        break;
      case 'weekday':
        out.weekday = WEEKDAYS[p.value] ?? 0;
        break;
    }
  }
  return out;
}

/** How far the wall clock `p` runs ahead of UTC at the instant `ts` (whole seconds), in ms. */
function offsetOf(p: LocalParts, ts: number): number {
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(ts / 1000) * 1000;
}

function intlOffsetMs(ts: number, tz: string): number {
  return offsetOf(intlParts(ts, tz), ts);
}

/**
 * The zone's offset per UTC day, asked of Intl once at each end of the day: when both agree the offset
 * holds all day (zones change offset at most once a day), otherwise the day is marked NaN and its
 * instants go to Intl one by one. A year of hourly buckets then costs ~730 Intl calls instead of 8,760.
 */
const dayOffsets = new Map<string, Map<number, number>>();
const MAX_CACHED_DAYS = 200_000;

function cachedOffsetMs(ts: number, tz: string): number {
  let days = dayOffsets.get(tz);
  if (!days) {
    days = new Map();
    dayOffsets.set(tz, days);
  }
  const day = Math.floor(ts / DAY_MS);
  let o = days.get(day);
  if (o === undefined) {
    const start = intlOffsetMs(day * DAY_MS, tz);
    o = start === intlOffsetMs(day * DAY_MS + DAY_MS - 1000, tz) ? start : Number.NaN;
    if (days.size >= MAX_CACHED_DAYS) days.clear();
    days.set(day, o);
  }
  return o;
}

/** Wall-clock fields of an instant in a zone. */
export function localParts(ts: number, tz: string): LocalParts {
  const o = cachedOffsetMs(ts, tz);
  if (Number.isNaN(o)) return intlParts(ts, tz);
  const d = new Date(ts + o);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    weekday: d.getUTCDay() || 7,
  };
}

/** UTC offset of the zone at an instant, in minutes (Warsaw summer: +120). */
export function offsetMinutes(ts: number, tz: string): number {
  return Math.round(offsetOf(localParts(ts, tz), ts) / MINUTE_MS);
}

/**
 * The instant at which the zone's wall clock shows the given fields. A wall time skipped by a
 * spring-forward gap is moved forward by the gap's length (02:30 → 03:30, as Temporal's "compatible");
 * a repeated autumn time resolves to its first occurrence.
 */
export function zonedTimeToUtc(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  tz: string = DEFAULT_TIMEZONE,
): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  // Two candidates from the offsets around the wall time cover every transition.
  const o1 = offsetMinutes(wall - DAY_MS / 2, tz);
  const o2 = offsetMinutes(wall + DAY_MS / 2, tz);
  const candidates = [...new Set([wall - o1 * MINUTE_MS, wall - o2 * MINUTE_MS])].sort((a, b) => a - b);
  for (const c of candidates) {
    if (wall - offsetMinutes(c, tz) * MINUTE_MS === c) return c;
  }
  // In a gap no instant shows this wall time; the earlier offset moves it forward by the gap.
  return Math.max(...candidates);
}

/** Local midnight starting the day that contains `ts`. */
export function startOfLocalDay(ts: number, tz: string): number {
  const p = localParts(ts, tz);
  return zonedTimeToUtc(p.year, p.month, p.day, 0, 0, 0, tz);
}

/** Local midnight `n` days after the day containing `ts` (n may be negative). */
export function addLocalDays(ts: number, n: number, tz: string): number {
  const p = localParts(ts, tz);
  const d = new Date(Date.UTC(p.year, p.month - 1, p.day + n));
  return zonedTimeToUtc(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), 0, 0, 0, tz);
}

/** Local midnight of the Monday starting the week that contains `ts`. */
export function startOfLocalWeek(ts: number, tz: string): number {
  return addLocalDays(ts, 1 - localParts(ts, tz).weekday, tz);
}

export function startOfLocalMonth(ts: number, tz: string): number {
  const p = localParts(ts, tz);
  return zonedTimeToUtc(p.year, p.month, 1, 0, 0, 0, tz);
}

export function addLocalMonths(ts: number, n: number, tz: string): number {
  const p = localParts(ts, tz);
  const d = new Date(Date.UTC(p.year, p.month - 1 + n, 1));
  return zonedTimeToUtc(d.getUTCFullYear(), d.getUTCMonth() + 1, 1, 0, 0, 0, tz);
}

export function startOfLocalYear(ts: number, tz: string): number {
  return zonedTimeToUtc(localParts(ts, tz).year, 1, 1, 0, 0, 0, tz);
}

export type CalendarUnit = 'day' | 'week' | 'month' | 'year';

function startOf(ts: number, unit: CalendarUnit, tz: string): number {
  switch (unit) {
    case 'day':
      return startOfLocalDay(ts, tz);
    case 'week':
      return startOfLocalWeek(ts, tz);
    case 'month':
      return startOfLocalMonth(ts, tz);
    case 'year':
      return startOfLocalYear(ts, tz);
  }
}

function next(ts: number, unit: CalendarUnit, tz: string): number {
  switch (unit) {
    case 'day':
      return addLocalDays(ts, 1, tz);
    case 'week':
      return addLocalDays(ts, 7, tz);
    case 'month':
      return addLocalMonths(ts, 1, tz);
    case 'year':
      return addLocalMonths(ts, 12, tz);
  }
}

/**
 * Start instants of the calendar buckets overlapping [from, to): the first is the start of the bucket
 * containing `from`. Consecutive starts differ by 23, 24 or 25 hours on days around DST.
 */
export function calendarBucketStarts(from: number, to: number, unit: CalendarUnit, tz: string): number[] {
  const out: number[] = [];
  for (let t = startOf(from, unit, tz); t < to; t = next(t, unit, tz)) out.push(t);
  return out;
}

/** Calendar units whose buckets are cached per local year (`localYearBucketStarts`). */
export type YearlyUnit = 'day' | 'month';

const yearStartsCache = new Map<string, readonly number[]>();
const MAX_CACHED_YEARS = 1024;

/** True when the starts of that local year are cached (building them costs Intl calls, ~5 ms a year of days). */
function yearStartsCached(year: number, unit: YearlyUnit, tz: string): boolean {
  return yearStartsCache.has(`${unit}|${tz}|${year}`);
}

/**
 * Starts of the local days or months of one local year in a zone, computed once per zone, unit and year
 * and shared by every caller in the process (the API and the stores' calendars).
 */
export function localYearBucketStarts(year: number, unit: YearlyUnit, tz: string): readonly number[] {
  const key = `${unit}|${tz}|${year}`;
  let s = yearStartsCache.get(key);
  if (!s) {
    s = calendarBucketStarts(
      zonedTimeToUtc(year, 1, 1, 0, 0, 0, tz),
      zonedTimeToUtc(year + 1, 1, 1, 0, 0, 0, tz),
      unit,
      tz,
    );
    if (yearStartsCache.size >= MAX_CACHED_YEARS) yearStartsCache.clear();
    yearStartsCache.set(key, s);
  }
  return s;
}

/**
 * Something long work waits for at each turn before going on: a server registers one that holds long
 * reads back while short requests are being answered. It returns nothing when there is nothing to wait for.
 */
export type TurnGate = () => Promise<void> | undefined;
const turnGates = new Set<TurnGate>();

/** Adds a gate to `nextTurn`; the returned function removes it. */
export function addTurnGate(gate: TurnGate): () => void {
  turnGates.add(gate);
  return () => {
    turnGates.delete(gate);
  };
}

/**
 * A turn of the event loop for whatever waits (setImmediate in Node, a timer in the browser), then
 * whatever the registered gates say to wait for.
 */
export async function nextTurn(): Promise<void> {
  await new Promise<void>((resolve) =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  );
  for (const gate of turnGates) {
    const wait = gate();
    if (wait) await wait;
  }
}

/**
 * `calendarBucketStarts` for local days and months, built a local year at a time from the shared cache,
 * giving the event loop a turn after each year it had to compute: a century of days costs ~0.5 s of
 * Intl calls, which must not hold every other request meanwhile.
 */
export async function calendarBucketStartsYielding(
  from: number,
  to: number,
  unit: YearlyUnit,
  tz: string,
): Promise<number[]> {
  const out: number[] = [];
  if (!(to > from)) return out;
  let holding: number | undefined;
  for (let year = localParts(from, tz).year; ; year++) {
    const cached = yearStartsCached(year, unit, tz);
    const starts = localYearBucketStarts(year, unit, tz);
    if (!cached) await nextTurn();
    for (const s of starts) {
      if (s <= from) holding = s;
      else if (s >= to) {
        if (out.length === 0 && holding !== undefined) out.push(holding);
        return out;
      } else {
        if (out.length === 0 && holding !== undefined) out.push(holding);
        out.push(s);
      }
    }
  }
}

/**
 * The instants a query may name: from the Unix epoch to the start of 2100. Outside them no meter has
 * readings, and a range reaching year 1 or 9999 would only cost work before it is refused.
 */
export const EARLIEST_QUERY_MS = Date.UTC(1970, 0, 1);
export const LATEST_QUERY_MS = Date.UTC(2100, 0, 1);

/** True when [from, to) lies within the instants a query may name. */
export function isQueryableRange(from: number, to: number): boolean {
  return (
    Number.isFinite(from) &&
    Number.isFinite(to) &&
    from >= EARLIEST_QUERY_MS &&
    to <= LATEST_QUERY_MS &&
    from < to
  );
}

/**
 * At most how many calendar buckets overlap [from, to), by arithmetic alone (no zone lookups), so a range
 * can be refused before its buckets are built. Never less than `calendarBucketStarts(...).length`: zone
 * offsets stay within ±18 hours, so a margin of one bucket at each end covers them.
 */
export function calendarBucketCountAtMost(from: number, to: number, unit: CalendarUnit): number {
  if (!(to > from)) return 0;
  if (!Number.isFinite(from) || !Number.isFinite(to)) return Number.POSITIVE_INFINITY;
  switch (unit) {
    case 'day':
      return Math.ceil((to - from) / DAY_MS) + 2;
    case 'week':
      return Math.ceil((to - from) / (7 * DAY_MS)) + 2;
    case 'month':
    case 'year': {
      const a = new Date(from);
      const b = new Date(to);
      const months = (b.getUTCFullYear() - a.getUTCFullYear()) * 12 + (b.getUTCMonth() - a.getUTCMonth());
      return (unit === 'month' ? months : Math.ceil(months / 12)) + 2;
    }
  }
}

/** Fixed-length buckets (15m, 30m, 1h) aligned to the UTC epoch. */
export function fixedBucketStart(ts: number, stepMs: number): number {
  return Math.floor(ts / stepMs) * stepMs;
}

/**
 * Fixed-length bucket starts overlapping [from, to). Buckets are aligned to the epoch, so they line
 * up with local hours in every zone whose offset is a whole number of steps (15 minutes covers
 * :30 and :45 zones too).
 */
export function fixedBucketStarts(from: number, to: number, stepMs: number): number[] {
  const out: number[] = [];
  for (let t = fixedBucketStart(from, stepMs); t < to; t += stepMs) out.push(t);
  return out;
}

/**
 * Index of the bucket holding `ts` among sorted bucket starts (fixed or calendar): the last start at or
 * before it, or -1 before the first. The last bucket is open-ended; callers bound it by its end.
 */
export function bucketIndexOf(starts: readonly number[], ts: number): number {
  if (starts.length === 0 || ts < starts[0]!) return -1;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= ts) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Counter buckets are closed at their end and open at their start, `(start, end]` (docs/domain.md §Energy from
 * counters): a register reading states the energy counted up to its timestamp, so the step it ends belongs
 * to the bucket that ends at or after it — a reading stamped exactly 09:00 closes 08:00–09:00, one at local
 * midnight closes the day before, as utility load profiles and billing stamp each interval with its end.
 * Gauges keep `[start, end)`.
 *
 * Timestamps are whole milliseconds, so `(start, end]` is `[start, end)` of the instant one millisecond
 * earlier. This is the one definition every path uses: core's `energyPerBucket`, the DuckDB SQL (through
 * `counterInstantSql`) and the InfluxDB rollups.
 */
export const COUNTER_EDGE_MS = 1;

/** The instant a counter step ending at `ts` is bucketed by under `[start, end)` arithmetic. */
export function counterInstant(ts: number): number {
  return ts - COUNTER_EDGE_MS;
}

/** SQL for `counterInstant` of an epoch-milliseconds column. */
export function counterInstantSql(col: string): string {
  return `(${col} - ${COUNTER_EDGE_MS})`;
}

/** Start of the fixed bucket (15m, 30m, 1h) whose `(start, end]` holds a counter reading at `ts`. */
export function counterBucketStart(ts: number, stepMs: number): number {
  return fixedBucketStart(counterInstant(ts), stepMs);
}

/**
 * Index of the bucket whose `(start, end]` holds a counter reading at `ts` among sorted bucket starts, or -1
 * at or before the first start. The last bucket is open-ended; callers bound it by its end (`ts <= end`).
 */
export function counterBucketIndexOf(starts: readonly number[], ts: number): number {
  return bucketIndexOf(starts, counterInstant(ts));
}

/** `YYYY-MM-DD HH:mm:ss` in UTC, the data-log form of docs/spec.md §3. */
export function formatUtcTimestamp(ts: number): string {
  return new Date(ts).toISOString().slice(0, 19).replace('T', ' ');
}

/** `YYYY-MM-DD` of the local day containing `ts`. */
export function localDateString(ts: number, tz: string): string {
  const p = localParts(ts, tz);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}
