import { describe, expect, it } from 'vitest';
import { zonedTimeToUtc } from '../time.ts';
import { createTariffCalendar, type HolidayCalendar, type TariffGroup, type Zone } from './calendar.ts';

const WAW = 'Europe/Warsaw';
// A fixed holiday set keeps this test free of holiday data; the api tests run the real Polish calendar.
const holidays: HolidayCalendar = {
  isHoliday: (y, m, d) => ['2026-04-06', '2026-12-24'].includes(`${y}-${pad(m)}-${pad(d)}`),
};
function pad(n: number) {
  return String(n).padStart(2, '0');
}

/** Local Warsaw wall time → instant. */
function at(date: string, time: string): number {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const [h, mi] = time.split(':').map(Number) as [number, number];
  return zonedTimeToUtc(y, mo, d, h, mi, 0, WAW);
}

// 2026-03-11 Wednesday, 03-14 Saturday, 03-15 Sunday, 04-06 Easter Monday, 12-24 Thursday (holiday).
const cases: [TariffGroup, string | null, string, string, Zone][] = [
  ['G11', null, '2026-03-11', '23:00', 1],
  ['G11', null, '2026-04-06', '12:00', 1],
  ['G12', null, '2026-03-11', '12:59', 1],
  ['G12', null, '2026-03-11', '13:00', 2],
  ['G12', null, '2026-03-11', '14:59', 2],
  ['G12', null, '2026-03-11', '15:00', 1],
  ['G12', null, '2026-03-11', '21:59', 1],
  ['G12', null, '2026-03-11', '22:00', 2],
  ['G12', null, '2026-03-11', '05:59', 2],
  ['G12', null, '2026-03-11', '06:00', 1],
  ['G12', null, '2026-03-15', '10:00', 1],
  ['G12', null, '2026-04-06', '10:00', 1],
  ['G12w', null, '2026-03-11', '10:00', 1],
  ['G12w', null, '2026-03-11', '14:00', 2],
  ['G12w', null, '2026-03-14', '10:00', 2],
  ['G12w', null, '2026-03-15', '10:00', 2],
  ['G12w', null, '2026-04-06', '10:00', 2],
  ['G12w', null, '2026-12-24', '10:00', 2],
  ['G12w', null, '2026-12-23', '10:00', 1],
  ['G12w', 'E.ON', '2026-03-11', '14:00', 1],
  ['G12w', 'E.ON', '2026-03-11', '23:00', 2],
  ['G12w', 'E.ON', '2026-03-14', '14:00', 2],
  ['G12r', null, '2026-03-11', '15:30', 2],
  ['G12r', null, '2026-03-11', '16:00', 1],
  ['G12r', null, '2026-03-11', '06:30', 2],
  ['G12r', null, '2026-03-11', '07:00', 1],
  ['G12n', null, '2026-03-11', '00:30', 1],
  ['G12n', null, '2026-03-11', '01:00', 2],
  ['G12n', null, '2026-03-11', '05:00', 1],
  ['G12n', null, '2026-03-11', '23:00', 1],
  ['G12n', null, '2026-03-14', '03:00', 2],
  ['G12n', null, '2026-03-14', '12:00', 1],
  ['G12n', null, '2026-03-15', '12:00', 2],
  ['G12n', null, '2026-04-06', '12:00', 1],
  ['G12as', null, '2026-03-11', '14:00', 1],
  ['G12as', null, '2026-03-11', '22:30', 2],
  ['G12as', null, '2026-03-15', '03:00', 2],
];

describe('tariff calendar: zone by group, day type and hour (Europe/Warsaw)', () => {
  it.each(cases)('%s (%s) on %s at %s → zone %i', (group, operator, date, time, zone) => {
    const cal = createTariffCalendar({ group, operator, holidays, clockBasis: 'local' });
    expect(cal.zoneAt(at(date, time), WAW)).toBe(zone);
  });
});

describe('tariff calendar across DST switches', () => {
  const g12 = createTariffCalendar({ group: 'G12', holidays });
  // Spring: 2026-03-29 02:00 CET → 03:00 CEST. Autumn: 2026-10-25 03:00 CEST → 02:00 CET.
  const table: [string, number, Zone][] = [
    ['spring 00:30Z = 01:30 CET (night)', Date.UTC(2026, 2, 29, 0, 30), 2],
    ['spring 01:30Z = 03:30 CEST (night)', Date.UTC(2026, 2, 29, 1, 30), 2],
    ['spring 04:00Z = 06:00 CEST (day)', Date.UTC(2026, 2, 29, 4, 0), 1],
    ['spring 03:59Z = 05:59 CEST (night)', Date.UTC(2026, 2, 29, 3, 59), 2],
    ['spring 11:00Z = 13:00 CEST (midday)', Date.UTC(2026, 2, 29, 11, 0), 2],
    ['autumn 00:30Z = 02:30 CEST (night)', Date.UTC(2026, 9, 25, 0, 30), 2],
    ['autumn 01:30Z = 02:30 CET, repeated hour (night)', Date.UTC(2026, 9, 25, 1, 30), 2],
    ['autumn 05:00Z = 06:00 CET (day)', Date.UTC(2026, 9, 25, 5, 0), 1],
    ['autumn 04:59Z = 05:59 CET (night)', Date.UTC(2026, 9, 25, 4, 59), 2],
    ['autumn 12:00Z = 13:00 CET (midday)', Date.UTC(2026, 9, 25, 12, 0), 2],
    ['autumn 14:00Z = 15:00 CET (day)', Date.UTC(2026, 9, 25, 14, 0), 1],
  ];
  it.each(table)('%s → zone %i', (_label, ts, zone) => {
    expect(g12.zoneAt(ts, WAW)).toBe(zone);
  });

  it('every local hour of the 23-hour and 25-hour days gets exactly one zone', () => {
    for (const [day, hours] of [
      ['2026-03-29', 23],
      ['2026-10-25', 25],
    ] as const) {
      const start = at(day, '00:00');
      const end = at(day === '2026-03-29' ? '2026-03-30' : '2026-10-26', '00:00');
      expect((end - start) / 3_600_000).toBe(hours);
      const zones = Array.from({ length: hours }, (_, i) => g12.zoneAt(start + i * 3_600_000, WAW));
      // 8 night hours (22–06) in a 24-hour day; the lost hour is a night hour in spring, the extra one in autumn.
      expect(zones.filter((z) => z === 2).length).toBe((hours === 23 ? 7 : 9) + 2);
    }
  });
});

describe('tariff calendar clock basis', () => {
  it('a CET meter switches zones an hour later on the summer wall clock', () => {
    const cet = createTariffCalendar({ group: 'G12', operator: 'Enea' });
    const local = createTariffCalendar({ group: 'G12', operator: 'Enea', clockBasis: 'local' });
    // 2026-07-01 22:30 CEST = 21:30 CET: still day on the CET clock.
    const ts = at('2026-07-01', '22:30');
    expect(local.zoneAt(ts, WAW)).toBe(2);
    expect(cet.zoneAt(ts, WAW)).toBe(1);
    expect(cet.zoneAt(at('2026-07-01', '23:00'), WAW)).toBe(2);
    // In winter CET is the wall clock.
    expect(cet.zoneAt(at('2026-01-14', '22:00'), WAW)).toBe(2);
  });

  it('the location time zone decides the hour', () => {
    const cal = createTariffCalendar({ group: 'G12as' });
    const ts = Date.UTC(2026, 0, 14, 21, 30); // 22:30 Warsaw, 21:30 London
    expect(cal.zoneAt(ts, WAW)).toBe(2);
    expect(cal.zoneAt(ts, 'Europe/London')).toBe(1);
  });

  it('an edited schedule overrides the defaults and may use zone 3', () => {
    const cal = createTariffCalendar({
      group: 'G12',
      operator: 'Tauron',
      schedule: {
        weekday: [
          { from: '22:00', to: '06:00', zone: 2 },
          { from: '17:00', to: '21:00', zone: 3 },
        ],
      },
    });
    expect(cal.zoneAt(at('2026-03-11', '14:00'), WAW)).toBe(1);
    expect(cal.zoneAt(at('2026-03-11', '18:00'), WAW)).toBe(3);
    expect(cal.dayTypeAt(at('2026-03-14', '18:00'), WAW)).toBe('saturday');
  });
});
