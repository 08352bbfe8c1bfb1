/**
 * The tariff calendar (docs/domain.md §Tariffs): which price zone applies at an instant, for a tariff group,
 * its operator's zone hours and the location's time zone. Pure; holidays come in through
 * `HolidayCalendar` so the browser bundle can use the calendar without holiday data.
 */
import { localParts } from '../time.ts';

/**
 * The Polish household groups, and `dynamic`: one zone, each hour priced at the location's price series
 * (a market or day-ahead price) plus the tariff's price per kWh (docs/domain.md §Tariffs).
 */
export const TARIFF_GROUPS = ['G11', 'G12', 'G12as', 'G12n', 'G12r', 'G12w', 'dynamic'] as const;
export type TariffGroup = (typeof TARIFF_GROUPS)[number];

/** Whether a group's hours are priced from the location's price series. */
export function isDynamicGroup(group: TariffGroup): group is 'dynamic' {
  return group === 'dynamic';
}

export const DAY_TYPES = ['weekday', 'saturday', 'sunday', 'holiday'] as const;
export type DayType = (typeof DAY_TYPES)[number];

/** `local`: the location's wall clock; `cet`: UTC+1 all year, as Enea's meters keep. */
export const CLOCK_BASES = ['local', 'cet'] as const;
export type ClockBasis = (typeof CLOCK_BASES)[number];

export type Zone = 1 | 2 | 3;

export interface ZoneWindow {
  /** `HH:mm`, inclusive. */
  from: string;
  /** `HH:mm`, exclusive; earlier than `from` when the window wraps midnight; `24:00` ends the day. */
  to: string;
  zone: Zone;
}

/** Windows per day type; outside them zone 1. A missing day type uses the weekday's windows. */
export type ZoneSchedule = Partial<Record<DayType, ZoneWindow[]>>;

/** Public holidays by local calendar date. */
export interface HolidayCalendar {
  isHoliday(year: number, month: number, day: number): boolean;
}

export const NO_HOLIDAYS: HolidayCalendar = { isHoliday: () => false };

const ALL_DAY: ZoneWindow[] = [{ from: '00:00', to: '24:00', zone: 2 }];
const G12_WINDOWS: ZoneWindow[] = [
  { from: '13:00', to: '15:00', zone: 2 },
  { from: '22:00', to: '06:00', zone: 2 },
];

/** Default zone hours per group (docs/domain.md §Tariffs). Zone hours are every day unless said. */
const DEFAULT_SCHEDULES: Record<TariffGroup, ZoneSchedule> = {
  G11: { weekday: [] },
  dynamic: { weekday: [] },
  G12: { weekday: G12_WINDOWS },
  G12w: { weekday: G12_WINDOWS, saturday: ALL_DAY, sunday: ALL_DAY, holiday: ALL_DAY },
  G12r: {
    weekday: [
      { from: '13:00', to: '16:00', zone: 2 },
      { from: '22:00', to: '07:00', zone: 2 },
    ],
  },
  // PGE: Monday to Saturday 01:00–05:00, all of Sunday.
  G12n: { weekday: [{ from: '01:00', to: '05:00', zone: 2 }], sunday: ALL_DAY },
  G12as: { weekday: [{ from: '22:00', to: '06:00', zone: 2 }] },
};

/** Operators whose hours differ from the group's defaults. Keys are lower case. */
const OPERATOR_SCHEDULES: Partial<Record<TariffGroup, Record<string, ZoneSchedule>>> = {
  // E.ON's G12w has no midday window.
  G12w: {
    'e.on': {
      weekday: [{ from: '22:00', to: '06:00', zone: 2 }],
      saturday: ALL_DAY,
      sunday: ALL_DAY,
      holiday: ALL_DAY,
    },
  },
};

/** The zone hours of a group, as an operator applies them. */
export function defaultZoneSchedule(group: TariffGroup, operator?: string | null): ZoneSchedule {
  const byOperator = operator ? OPERATOR_SCHEDULES[group]?.[operator.trim().toLowerCase()] : undefined;
  return byOperator ?? DEFAULT_SCHEDULES[group];
}

/** Operators' default clock: Enea's meters keep CET all year. */
export function defaultClockBasis(operator?: string | null): ClockBasis {
  return operator?.trim().toLowerCase() === 'enea' ? 'cet' : 'local';
}

export interface TariffCalendarOptions {
  group: TariffGroup;
  operator?: string | null;
  /** Overrides the group's default windows (editable per operator). */
  schedule?: ZoneSchedule | null;
  clockBasis?: ClockBasis;
  holidays?: HolidayCalendar;
}

export interface TariffCalendar {
  /** Zone in force at `ts` at a location in time zone `tz`. */
  zoneAt(ts: number, tz: string): Zone;
  /** Day type of the (tariff-clock) day containing `ts`. */
  dayTypeAt(ts: number, tz: string): DayType;
}

interface CompiledWindow {
  from: number;
  to: number;
  zone: Zone;
}

function minutesOf(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

function compile(windows: readonly ZoneWindow[]): CompiledWindow[] {
  return windows.map((w) => ({ from: minutesOf(w.from), to: minutesOf(w.to), zone: w.zone }));
}

function inWindow(minute: number, w: CompiledWindow): boolean {
  return w.from <= w.to ? minute >= w.from && minute < w.to : minute >= w.from || minute < w.to;
}

const CET_OFFSET_MS = 3_600_000;

interface ClockParts {
  year: number;
  month: number;
  day: number;
  minute: number;
  weekday: number;
}

function clockParts(ts: number, tz: string, basis: ClockBasis): ClockParts {
  if (basis === 'cet') {
    const d = new Date(ts + CET_OFFSET_MS);
    const weekday = d.getUTCDay() === 0 ? 7 : d.getUTCDay();
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      minute: d.getUTCHours() * 60 + d.getUTCMinutes(),
      weekday,
    };
  }
  const p = localParts(ts, tz);
  return { year: p.year, month: p.month, day: p.day, minute: p.hour * 60 + p.minute, weekday: p.weekday };
}

export function createTariffCalendar(options: TariffCalendarOptions): TariffCalendar {
  const schedule = options.schedule ?? defaultZoneSchedule(options.group, options.operator);
  const basis = options.clockBasis ?? defaultClockBasis(options.operator);
  const holidays = options.holidays ?? NO_HOLIDAYS;
  const compiled: Partial<Record<DayType, CompiledWindow[]>> = {};
  for (const d of DAY_TYPES) {
    const w = schedule[d];
    if (w) compiled[d] = compile(w);
  }
  const weekdayWindows = compiled.weekday ?? [];

  function dayType(p: ClockParts): DayType {
    if (compiled.holiday && holidays.isHoliday(p.year, p.month, p.day)) return 'holiday';
    if (p.weekday === 7) return 'sunday';
    if (p.weekday === 6) return 'saturday';
    return 'weekday';
  }

  return {
    dayTypeAt(ts, tz) {
      const p = clockParts(ts, tz, basis);
      if (holidays.isHoliday(p.year, p.month, p.day)) return 'holiday';
      return p.weekday === 7 ? 'sunday' : p.weekday === 6 ? 'saturday' : 'weekday';
    },
    zoneAt(ts, tz) {
      if (G11_GROUPS.has(options.group) && !options.schedule) return 1;
      const p = clockParts(ts, tz, basis);
      const windows = compiled[dayType(p)] ?? weekdayWindows;
      for (const w of windows) if (inWindow(p.minute, w)) return w.zone;
      return 1;
    },
  };
}

const G11_GROUPS = new Set<TariffGroup>(['G11']);
