/**
 * Billing periods (docs/domain.md §Billing): a device has a billing start date and a period length in months; the
 * current period is the one containing `now` in the location's zone.
 */
import { localParts, zonedTimeToUtc } from '../time.ts';

export interface Period {
  start: number;
  end: number;
}

function monthIndex(y: number, m: number): number {
  return y * 12 + (m - 1);
}

/** Local midnight on day `day` of month index `mi`, clamped to the month's length (31 Jan + 1 month → 28/29 Feb). */
function periodStart(mi: number, day: number, tz: string): number {
  const y = Math.floor(mi / 12);
  const m = (mi % 12) + 1;
  const length = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return zonedTimeToUtc(y, m, Math.min(day, length), 0, 0, 0, tz);
}

/**
 * The billing period containing `now`. `billingStart` is a local date `YYYY-MM-DD`; periods repeat every
 * `months` months from it (also backwards, for dates before the start).
 */
export function billingPeriodAt(now: number, billingStart: string, months: number, tz: string): Period {
  const [y, m, d] = billingStart.split('-').map(Number) as [number, number, number];
  if (!Number.isInteger(months) || months < 1)
    throw new RangeError('billing months must be a positive integer');
  const startMi = monthIndex(y, m);
  const p = localParts(now, tz);
  let k = Math.floor((monthIndex(p.year, p.month) - startMi) / months);
  // The day of month may put `now` before this period's start: step back one period.
  while (periodStart(startMi + k * months, d, tz) > now) k--;
  while (periodStart(startMi + (k + 1) * months, d, tz) <= now) k++;
  return {
    start: periodStart(startMi + k * months, d, tz),
    end: periodStart(startMi + (k + 1) * months, d, tz),
  };
}
