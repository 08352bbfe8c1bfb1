/**
 * Polish public holidays from `date-holidays` (a maintained library: Easter-based days move every year)
 * behind core's `HolidayCalendar`, so the tariff calendar itself carries no holiday data.
 */
import { createRequire } from 'node:module';
import type { HolidayCalendar } from '@kilowatch/core';
import type Holidays from 'date-holidays';

// Loaded when a calendar is first asked, not at start-up.
const require = createRequire(import.meta.url);

/** Christmas Eve is a public holiday from 2025 on (Act of 6 December 2024). */
const CHRISTMAS_EVE_FROM = 2025;

export function polishHolidays(): HolidayCalendar {
  let hd: Holidays | undefined;
  const calendar = (): Holidays => {
    hd ??= new (require('date-holidays') as typeof Holidays)('PL');
    return hd;
  };
  const byYear = new Map<number, Set<string>>();

  function daysOf(year: number): Set<string> {
    let days = byYear.get(year);
    if (!days) {
      days = new Set(
        calendar()
          .getHolidays(year)
          .filter((h) => h.type === 'public')
          .map((h) => h.date.slice(0, 10)),
      );
      // Kept as a dated rule in case an older copy of the library does not know the 2025 change.
      if (year >= CHRISTMAS_EVE_FROM) days.add(`${year}-12-24`);
      byYear.set(year, days);
    }
    return days;
  }

  return {
    isHoliday(year, month, day) {
      return daysOf(year).has(`${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`);
    },
  };
}
