import { createTariffCalendar, type TariffGroup, type Zone, zonedTimeToUtc } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { POLISH_HOLIDAYS } from './tariffs.ts';

/** The calendar tariff pricing uses (its worker-thread path reads the same library data). */
const holidays = POLISH_HOLIDAYS;
const WAW = 'Europe/Warsaw';

describe('Polish public holidays', () => {
  it.each([
    ['2026-01-01', true, 'New Year'],
    ['2026-01-06', true, 'Epiphany'],
    ['2026-04-05', true, 'Easter Sunday'],
    ['2026-04-06', true, 'Easter Monday 2026'],
    ['2025-04-21', true, 'Easter Monday 2025'],
    ['2027-03-29', true, 'Easter Monday 2027'],
    ['2026-04-07', false, 'the Tuesday after Easter'],
    ['2026-05-01', true, 'Labour Day'],
    ['2026-05-03', true, 'Constitution Day'],
    ['2026-05-24', true, 'Pentecost'],
    ['2026-06-04', true, 'Corpus Christi'],
    ['2026-08-15', true, 'Assumption'],
    ['2026-11-01', true, 'All Saints'],
    ['2026-11-11', true, 'Independence Day'],
    ['2024-12-24', false, 'Christmas Eve before 2025'],
    ['2025-12-24', true, 'Christmas Eve 2025'],
    ['2026-12-24', true, 'Christmas Eve 2026'],
    ['2026-12-25', true, 'Christmas'],
    ['2026-12-26', true, 'Second day of Christmas'],
    ['2026-03-11', false, 'an ordinary Wednesday'],
  ])('%s → %s (%s)', (date, expected) => {
    const [y, m, d] = date.split('-').map(Number) as [number, number, number];
    expect(holidays.isHoliday(y, m, d)).toBe(expected);
  });

  it('counts 14 public holidays from 2025 on (13 before)', () => {
    const count = (year: number) => {
      let n = 0;
      for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += 86_400_000) {
        const d = new Date(t);
        if (holidays.isHoliday(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate())) n++;
      }
      return n;
    };
    expect(count(2024)).toBe(13);
    expect(count(2025)).toBe(14);
    expect(count(2026)).toBe(14);
  });
});

describe('tariff calendar with Polish holidays', () => {
  const at = (date: string, time: string) => {
    const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
    const [h, mi] = time.split(':').map(Number) as [number, number];
    return zonedTimeToUtc(y, mo, d, h, mi, 0, WAW);
  };
  const table: [TariffGroup, string, string, Zone][] = [
    ['G12w', '2026-04-06', '10:00', 2], // Easter Monday: all day cheap
    ['G12w', '2026-04-07', '10:00', 1],
    ['G12w', '2026-12-24', '10:00', 2], // Christmas Eve, a Thursday
    ['G12w', '2024-12-24', '10:00', 1], // not yet a holiday in 2024
    ['G12w', '2026-06-04', '16:00', 2], // Corpus Christi
    ['G12w', '2026-03-29', '10:00', 2], // Sunday of the spring DST switch
    ['G12w', '2026-10-26', '10:00', 1], // Monday after the autumn switch
    ['G12', '2026-04-06', '10:00', 1], // G12 ignores holidays
    ['G12', '2026-12-24', '23:00', 2],
    ['G12n', '2026-04-06', '12:00', 1], // G12n: holidays follow their weekday
    ['G12n', '2026-04-05', '12:00', 2], // Easter Sunday is a Sunday
  ];
  it.each(table)('%s on %s at %s → zone %i', (group, date, time, zone) => {
    expect(createTariffCalendar({ group, holidays }).zoneAt(at(date, time), WAW)).toBe(zone);
  });

  it('names the day type', () => {
    const cal = createTariffCalendar({ group: 'G12w', holidays });
    expect(cal.dayTypeAt(at('2026-12-24', '12:00'), WAW)).toBe('holiday');
    expect(cal.dayTypeAt(at('2026-12-23', '12:00'), WAW)).toBe('weekday');
    expect(cal.dayTypeAt(at('2026-12-19', '12:00'), WAW)).toBe('saturday');
  });
});
