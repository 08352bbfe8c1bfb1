/**
 * Timestamps of an import file (docs/domain.md §Importing history): parsed by format, then resolved to
 * UTC. A local wall time follows the zone's rules: a time the spring change skips is an error, and a time
 * the autumn change repeats is taken in file order — its first occurrence at the earlier (summer) offset,
 * and once the stamps have gone back in time the later one — unless the stamp states its offset.
 */
import { MIN_READING_TS } from '../readings.ts';
import { DEFAULT_TIMEZONE, isValidTimeZone, LATEST_QUERY_MS, MINUTE_MS, offsetMinutes } from '../time.ts';
import type { StampFormat } from './types.ts';

export interface WallStamp {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  /** Minutes east of UTC, when the stamp states its offset. */
  offset?: number;
}

export type ParsedStamp = { wall: WallStamp } | { instant: number } | { error: string };
export type StampParser = (text: string) => ParsedStamp;

const OFFSET = /^(?:(z)|([+-])(\d{2}):?(\d{2})?)$/i;

/** Minutes east of UTC of `Z`, `+01:00`, `+0100` or `+01`, or undefined. */
export function parseOffset(text: string): number | undefined {
  const m = OFFSET.exec(text.trim());
  if (!m) return undefined;
  if (m[1]) return 0;
  const h = Number(m[3]);
  const min = Number(m[4] ?? 0);
  if (h > 18 || min > 59) return undefined;
  return (m[2] === '-' ? -1 : 1) * (h * 60 + min);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function wallProblem(w: WallStamp): string | undefined {
  if (w.month < 1 || w.month > 12) return 'the month is not 1–12';
  if (w.day < 1 || w.day > daysInMonth(w.year, w.month)) return `the month has no day ${w.day}`;
  if (w.hour > 24 || (w.hour === 24 && (w.minute > 0 || w.second > 0 || w.ms > 0)))
    return 'the hour is not 0–23';
  if (w.minute > 59) return 'the minute is not 0–59';
  if (w.second > 59) return 'the second is not 0–59';
  return undefined;
}

function fraction(digits: string | undefined): number {
  return digits ? Math.floor(Number(`0.${digits}`) * 1000 + 1e-6) : 0;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(z|[+-]\d{2}(?::?\d{2})?)?$/i;
const EPOCH = /^[+-]?\d+(?:\.\d+)?$/;

function finish(w: WallStamp, text: string): ParsedStamp {
  const problem = wallProblem(w);
  return problem ? { error: `bad stamp '${text}': ${problem}` } : { wall: w };
}

function parseIso(text: string): ParsedStamp {
  const m = ISO.exec(text);
  if (!m) return { error: `bad stamp '${text}': not an ISO 8601 date and time` };
  const w: WallStamp = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    ms: fraction(m[7]),
  };
  if (m[8]) {
    const o = parseOffset(m[8]);
    if (o === undefined) return { error: `bad stamp '${text}': bad offset '${m[8]}'` };
    w.offset = o;
  }
  return finish(w, text);
}

type Field = 'year' | 'month' | 'day' | 'hour' | 'minute' | 'second' | 'ms' | 'offset';
const TOKENS: readonly [string, Field, string][] = [
  ['YYYY', 'year', '(\\d{4})'],
  ['SSS', 'ms', '(\\d{1,3})'],
  ['MM', 'month', '(\\d{1,2})'],
  ['DD', 'day', '(\\d{1,2})'],
  ['HH', 'hour', '(\\d{1,2})'],
  ['mm', 'minute', '(\\d{2})'],
  ['ss', 'second', '(\\d{2})'],
  ['M', 'month', '(\\d{1,2})'],
  ['D', 'day', '(\\d{1,2})'],
  ['H', 'hour', '(\\d{1,2})'],
  ['Z', 'offset', '(z|[+-]\\d{2}(?::?\\d{2})?)'],
];

/** A pattern such as `DD.MM.YYYY HH:mm[:ss]` as a parser, or the reason it is not one. */
function compilePattern(pattern: string): StampParser | string {
  let re = '';
  const fields: Field[] = [];
  let depth = 0;
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '[') {
      re += '(?:';
      depth++;
      i++;
      continue;
    }
    if (c === ']') {
      if (depth === 0) return `unbalanced ']' in the stamp format '${pattern}'`;
      re += ')?';
      depth--;
      i++;
      continue;
    }
    const token = TOKENS.find(([t]) => pattern.startsWith(t, i));
    if (token) {
      re += token[2];
      fields.push(token[1]);
      i += token[0].length;
      continue;
    }
    if (/[A-Za-z]/.test(c) && c !== 'T')
      return `unknown letter '${c}' in the stamp format '${pattern}' (use YYYY MM DD HH mm ss SSS Z)`;
    re += /\s/.test(c) ? '\\s+' : c.replace(/[.*+?^${}()|\\/-]/g, '\\$&');
    i++;
  }
  if (depth !== 0) return `unbalanced '[' in the stamp format '${pattern}'`;
  for (const need of ['year', 'month', 'day'] as const)
    if (!fields.includes(need)) return `the stamp format '${pattern}' has no ${need}`;
  const regex = new RegExp(`^${re}$`, 'i');
  return (text) => {
    const m = regex.exec(text);
    if (!m) return { error: `bad stamp '${text}': it does not match ${pattern}` };
    const w: WallStamp = { year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0, ms: 0 };
    for (const [k, f] of fields.entries()) {
      const v = m[k + 1];
      if (v === undefined) continue;
      if (f === 'offset') {
        const o = parseOffset(v);
        if (o === undefined) return { error: `bad stamp '${text}': bad offset '${v}'` };
        w.offset = o;
      } else if (f === 'ms') w.ms = fraction(v);
      else w[f] = Number(v);
    }
    return finish(w, text);
  };
}

/** The parser of a stamp format, or the reason the format is not one. */
export function stampParser(format: StampFormat): StampParser | string {
  switch (format) {
    case 'iso':
      return (text) => parseIso(text.trim());
    case 'epoch-s':
    case 'epoch-ms':
      return (raw) => {
        const text = raw.trim();
        if (!EPOCH.test(text)) return { error: `bad stamp '${text}': not a number of ${format.slice(6)}` };
        const n = Number(text);
        return { instant: Math.round(format === 'epoch-s' ? n * 1000 : n) };
      };
    default: {
      if (typeof format !== 'string' || format.trim() === '') return 'the stamp format is empty';
      const p = compilePattern(format.trim());
      return typeof p === 'string' ? p : (text) => p(text.trim());
    }
  }
}

function hhmm(ts: number): string {
  return new Date(ts).toISOString().slice(11, 16);
}

/** Checks that an instant lies where meter readings can: from 2000 to 2100. */
export function instantProblem(ts: number, text: string): string | undefined {
  if (!Number.isFinite(ts)) return `bad stamp '${text}'`;
  if (ts < MIN_READING_TS)
    return `stamp '${text}' is before 2000 (${new Date(ts).toISOString()}): is the stamp format right?`;
  if (ts >= LATEST_QUERY_MS) return `stamp '${text}' is after 2100: is the stamp format right?`;
  return undefined;
}

/**
 * Resolves wall stamps to UTC in a zone or at a fixed offset, remembering the last instant resolved so
 * that a repeated autumn hour is read in file order.
 */
export class StampResolver {
  private last: number | undefined;

  constructor(
    private readonly zone: string,
    private readonly fixedOffset: number | undefined,
  ) {}

  resolve(stamp: ParsedStamp, text: string): { ts: number } | { error: string } {
    if ('error' in stamp) return stamp;
    let ts: number;
    if ('instant' in stamp) ts = stamp.instant;
    else {
      const w = stamp.wall;
      const wall = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
      const offset = w.offset ?? this.fixedOffset;
      if (offset !== undefined) ts = wall - offset * MINUTE_MS + w.ms;
      else {
        const local = this.local(wall, text);
        if (typeof local === 'string') return { error: local };
        ts = local + w.ms;
      }
    }
    const problem = instantProblem(ts, text.trim());
    if (problem) return { error: problem };
    this.last = ts;
    return { ts };
  }

  /** The instant the zone's clocks show `wall` (whole seconds, as UTC fields) at, or why none. */
  private local(wall: number, text: string): number | string {
    const tz = this.zone;
    const o1 = offsetMinutes(wall - 12 * 60 * MINUTE_MS, tz);
    const o2 = offsetMinutes(wall + 12 * 60 * MINUTE_MS, tz);
    const candidates = [...new Set([wall - o1 * MINUTE_MS, wall - o2 * MINUTE_MS])].sort((a, b) => a - b);
    const valid = candidates.filter((c) => c + offsetMinutes(c, tz) * MINUTE_MS === wall);
    if (valid.length === 1) return valid[0]!;
    if (valid.length === 2) {
      const [earlier, later] = valid as [number, number];
      return this.last !== undefined && this.last >= earlier ? later : earlier;
    }
    // A spring gap: find the instant the offset changes, between the two candidates.
    let lo = candidates[0]!;
    let hi = candidates[candidates.length - 1]!;
    const before = offsetMinutes(lo, tz);
    while (hi - lo > MINUTE_MS) {
      const mid = lo + Math.floor((hi - lo) / 2 / MINUTE_MS) * MINUTE_MS;
      if (offsetMinutes(mid, tz) === before) lo = mid;
      else hi = mid;
    }
    const after = offsetMinutes(hi, tz);
    return `${text.trim()} does not exist in ${tz}: the clocks jump from ${hhmm(hi + before * MINUTE_MS)} to ${hhmm(hi + after * MINUTE_MS)}`;
  }
}

/** The zone and fixed offset of clock options, or the problems with them. */
export function clockOf(
  zone: string | undefined,
  offset: string | number | undefined,
  problems: string[],
): { zone: string; offset: number | undefined } {
  const z = zone ?? DEFAULT_TIMEZONE;
  if (!isValidTimeZone(z)) problems.push(`unknown time zone '${z}'`);
  let o: number | undefined;
  if (typeof offset === 'number') {
    if (!Number.isInteger(offset) || Math.abs(offset) > 18 * 60)
      problems.push(`offset ${offset} is not whole minutes within ±18 hours`);
    else o = offset;
  } else if (typeof offset === 'string') {
    o = parseOffset(offset);
    if (o === undefined) problems.push(`bad offset '${offset}' (write it as +01:00)`);
  }
  return { zone: z, offset: o };
}
