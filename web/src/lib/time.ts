/** Display of instants in the user's zone (docs/spec.md §3): dayjs with the utc and timezone plugins. */
import dayjs from 'dayjs';
import timezone from 'dayjs/plugin/timezone.js';
import utc from 'dayjs/plugin/utc.js';

dayjs.extend(utc);
dayjs.extend(timezone);

export { dayjs };

export function formatInZone(ts: number, tz: string, pattern = 'YYYY-MM-DD HH:mm'): string {
  return dayjs(ts).tz(tz).format(pattern);
}

/** Data-log timestamps arrive as UTC `YYYY-MM-DD HH:mm:ss`. */
export function parseUtcTimestamp(s: string): number {
  return dayjs.utc(s.replace(' ', 'T')).valueOf();
}
