/** Display of instants in the user's zone (docs/spec.md §3): dayjs with the utc and timezone plugins. */
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

export function formatInZone(ts: number, tz: string, pattern = 'YYYY-MM-DD HH:mm'): string {
  return dayjs(ts).tz(tz).format(pattern);
}

/** Data-log timestamps arrive as UTC `YYYY-MM-DD HH:mm:ss`. */
export function parseUtcTimestamp(s: string): number {
  return dayjs.utc(s.replace(' ', 'T')).valueOf();
}
