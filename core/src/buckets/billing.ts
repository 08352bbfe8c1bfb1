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

/** Index of the period containing `now`, counted from the one starting at the billing start (negative before it). */
function periodIndexAt(now: number, startMi: number, day: number, months: number, tz: string): number {
  const p = localParts(now, tz);
  let k = Math.floor((monthIndex(p.year, p.month) - startMi) / months);
  // The day of month may put `now` before this period's start: step back one period.
  while (periodStart(startMi + k * months, day, tz) > now) k--;
  while (periodStart(startMi + (k + 1) * months, day, tz) <= now) k++;
  return k;
}

function parseBilling(billingStart: string, months: number): { startMi: number; day: number } {
  const [y, m, d] = billingStart.split('-').map(Number) as [number, number, number];
  if (!Number.isInteger(months) || months < 1)
    throw new RangeError('billing months must be a positive integer');
  return { startMi: monthIndex(y, m), day: d };
}

/**
 * The billing period containing `now`. `billingStart` is a local date `YYYY-MM-DD`; periods repeat every
 * `months` months from it (also backwards, for dates before the start).
 */
export function billingPeriodAt(now: number, billingStart: string, months: number, tz: string): Period {
  const { startMi, day } = parseBilling(billingStart, months);
  const k = periodIndexAt(now, startMi, day, months, tz);
  return {
    start: periodStart(startMi + k * months, day, tz),
    end: periodStart(startMi + (k + 1) * months, day, tz),
  };
}

/**
 * The periods from the first one (starting on the billing start) up to the one containing `now`, newest
 * first, at most `count` of them; before the billing start, just the first period.
 */
export function billingPeriodsUpTo(
  now: number,
  billingStart: string,
  months: number,
  tz: string,
  count = 12,
): Period[] {
  const { startMi, day } = parseBilling(billingStart, months);
  const out: Period[] = [];
  for (let k = Math.max(0, periodIndexAt(now, startMi, day, months, tz)); k >= 0 && out.length < count; k--)
    out.push({
      start: periodStart(startMi + k * months, day, tz),
      end: periodStart(startMi + (k + 1) * months, day, tz),
    });
  return out;
}
