/**
 * The week × 24 h zone preview of a tariff, computed with core's tariff calendar so it shows exactly
 * the zones the server prices with (docs/domain.md §Tariffs).
 */
import {
  createTariffCalendar,
  defaultZoneSchedule,
  type TariffGroup,
  type Zone,
  type ZoneSchedule,
} from '@kilowatch/core';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Monday 1 January 2024, 00:00 UTC: the reference week the preview samples. */
const REFERENCE_MONDAY = Date.UTC(2024, 0, 1);
const HOUR_MS = 3_600_000;

export interface ScheduleInput {
  group: TariffGroup;
  operator?: string | null;
  schedule?: ZoneSchedule | null;
}

/**
 * Zones by weekday (Monday first) and hour (0–23) on the tariff's own clock: each hour shows the zone in
 * force at its start. Public holidays are left out (a holiday takes the zone hours its group gives it).
 */
export function scheduleGrid(input: ScheduleInput): Zone[][] {
  // Sampling the wall clock of UTC on the reference week: the preview shows tariff-clock hours, so the
  // clock basis (local or CET) does not move the cells.
  const calendar = createTariffCalendar({
    group: input.group,
    operator: input.operator ?? null,
    schedule: input.schedule ?? null,
    clockBasis: 'local',
  });
  return WEEKDAYS.map((_, day) =>
    Array.from({ length: 24 }, (_, hour) =>
      calendar.zoneAt(REFERENCE_MONDAY + (day * 24 + hour) * HOUR_MS, 'UTC'),
    ),
  );
}

/**
 * The hours of a public holiday, when the group gives holidays their own hours (G12w: all day zone 2);
 * null when a holiday keeps the hours of the weekday it falls on.
 */
export function holidayRow(input: ScheduleInput): Zone[] | null {
  const schedule = input.schedule ?? defaultZoneSchedule(input.group, input.operator);
  if (input.group === 'G11' || !schedule.holiday) return null;
  const calendar = createTariffCalendar({
    group: input.group,
    operator: input.operator ?? null,
    schedule: input.schedule ?? null,
    clockBasis: 'local',
    holidays: { isHoliday: () => true },
  });
  return Array.from({ length: 24 }, (_, hour) => calendar.zoneAt(REFERENCE_MONDAY + hour * HOUR_MS, 'UTC'));
}

/** The zones a grid uses, in order: which prices the form asks for. */
export function zonesUsed(grid: readonly (readonly Zone[])[]): Zone[] {
  const used = new Set<Zone>();
  for (const row of grid) for (const z of row) used.add(z);
  return ([1, 2, 3] as const).filter((z) => used.has(z));
}

/** Hours of a weekday's row in a given zone, as `from–to` ranges (for labels and tests). */
export function zoneRanges(row: readonly Zone[], zone: Zone): string[] {
  const out: string[] = [];
  let start = -1;
  for (let h = 0; h <= row.length; h++) {
    const inZone = h < row.length && row[h] === zone;
    if (inZone && start < 0) start = h;
    if (!inZone && start >= 0) {
      out.push(`${String(start).padStart(2, '0')}–${String(h).padStart(2, '0')}`);
      start = -1;
    }
  }
  return out;
}
