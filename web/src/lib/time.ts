/**
 * Instants and days as the user reads them (docs/spec.md §3, §9): in the user's zone (or the device
 * location's, where docs/domain.md §Time says so) and in the interface language's own format, through
 * Intl (en 03/10/2026, 14:30; pl 10.03.2026, 14:30; tr 10.03.2026 14:30). Values sent to the API or kept
 * in forms and URLs stay ISO (`formatInZone` with a `YYYY-MM-DD…` pattern, `toISOString`).
 */
import dayjs from 'dayjs';
import customParseFormat from 'dayjs/plugin/customParseFormat.js';
import localizedFormat from 'dayjs/plugin/localizedFormat.js';
import timezone from 'dayjs/plugin/timezone.js';
import utc from 'dayjs/plugin/utc.js';

dayjs.extend(utc);
dayjs.extend(timezone);
// Dates in the interface language's own format (`L`: 03/10/2026, 10.03.2026), shown and typed.
dayjs.extend(localizedFormat);
dayjs.extend(customParseFormat);

export { dayjs };

/** An instant as a machine-readable local string (`YYYY-MM-DD HH:mm`): for values, not for display. */
export function formatInZone(ts: number, tz: string, pattern = 'YYYY-MM-DD HH:mm'): string {
  return dayjs(ts).tz(tz).format(pattern);
}

/** Data-log timestamps arrive as UTC `YYYY-MM-DD HH:mm:ss`. */
export function parseUtcTimestamp(s: string): number {
  return dayjs.utc(s.replace(' ', 'T')).valueOf();
}

/** The Intl locale of each interface language. */
const INTL_LOCALES: Record<string, string> = { en: 'en-US', pl: 'pl-PL', tr: 'tr-TR' };

export function intlLocale(language: string): string {
  return INTL_LOCALES[language] ?? 'en-US';
}

/**
 * What of an instant is shown: `date` (03/10/2026), `minute` (03/10/2026, 14:30), `second`
 * (03/10/2026, 14:30:05), `time` (14:30), `dayMonth` (03/10), `month` (March 2026) and `shortMonth`
 * (Mar 2026). The clock is 24-hour in every language, as the date-time fields take it.
 */
export type InstantStyle = 'date' | 'minute' | 'second' | 'time' | 'dayMonth' | 'month' | 'shortMonth';

const DATE = { year: 'numeric', month: '2-digit', day: '2-digit' } as const;
const CLOCK = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } as const;
const STYLES: Record<InstantStyle, Intl.DateTimeFormatOptions> = {
  date: DATE,
  minute: { ...DATE, ...CLOCK },
  second: { ...DATE, ...CLOCK, second: '2-digit' },
  time: CLOCK,
  dayMonth: { month: '2-digit', day: '2-digit' },
  month: { year: 'numeric', month: 'long' },
  shortMonth: { year: 'numeric', month: 'short' },
};

// Building a DateTimeFormat costs far more than using one: one per language, zone and style.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(language: string, tz: string, style: InstantStyle): Intl.DateTimeFormat {
  const key = `${language}|${tz}|${style}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(intlLocale(language), { ...STYLES[style], timeZone: tz });
    formatters.set(key, f);
  }
  return f;
}

/** An instant (epoch ms) in zone `tz`, written as `language` writes it. */
export function formatInstant(
  ts: number,
  tz: string,
  language: string,
  style: InstantStyle = 'minute',
): string {
  return Number.isFinite(ts) ? formatter(language, tz, style).format(ts) : '–';
}

/**
 * How a column of instants (epoch ms, in order) is written so that no two rows read alike: with seconds
 * where readings are less than a minute apart or fall between whole minutes, else to the minute.
 */
export function instantColumnStyle(times: ArrayLike<number>): 'minute' | 'second' {
  for (let i = 0; i < times.length; i++) {
    const ts = times[i]!;
    if (ts % 60_000 !== 0) return 'second';
    if (i > 0 && Math.abs(ts - times[i - 1]!) < 60_000) return 'second';
  }
  return 'minute';
}

/**
 * A calendar day (`YYYY-MM-DD`, no zone: a billing start, a tariff's first day, a heatmap row) as
 * `language` writes it, whole (`date`) or without the year (`dayMonth`).
 */
export function formatDay(day: string, language: string, style: 'date' | 'dayMonth' = 'date'): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return day;
  return formatter(language, 'UTC', style).format(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
}

/** A calendar month (`YYYY-MM`) as `language` names it: March 2026, marzec 2026 (`shortMonth`: Mar 2026). */
export function formatMonth(
  month: string,
  language: string,
  style: 'month' | 'shortMonth' = 'month',
): string {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  if (!m) return month;
  return formatter(language, 'UTC', style).format(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1));
}
