/**
 * Expected (noise-free) power curves of the simulated meters, as functions of the instant: household
 * load with daily and weekly shape and a winter bias, photovoltaic production for Poland by season and
 * hour, heat-pump load following the outdoor temperature.
 */
import { DAY_MS, HOUR_MS, offsetMinutes } from '@kilowatch/core';
import { uniform } from './noise.ts';

const TZ = 'Europe/Warsaw';
const offsets = new Map<number, number>();
const dayOffsets = new Map<number, number>();

/** Local hour of day (fractional) and ISO weekday in Warsaw; the zone offset is cached (see `offsetAt`). */
interface Clock {
  hour: number;
  weekday: number;
  dayOfYear: number;
}
let lastTs = Number.NaN;
let lastClock: Clock = { hour: 0, weekday: 1, dayOfYear: 1 };
let yearStart = 0;
let nextYearStart = 0;

export function localClock(ts: number): Clock {
  if (ts === lastTs) return lastClock;
  lastTs = ts;
  lastClock = computeClock(ts);
  return lastClock;
}

/** Zone offset in minutes: one lookup per UTC day, per hour only on a day the offset changes. */
function offsetAt(ts: number): number {
  const d = Math.floor(ts / DAY_MS);
  let off = dayOffsets.get(d);
  if (off === undefined) {
    const first = offsetMinutes(d * DAY_MS, TZ);
    off = first === offsetMinutes(d * DAY_MS + DAY_MS - HOUR_MS, TZ) ? first : Number.NaN;
    dayOffsets.set(d, off);
  }
  if (!Number.isNaN(off)) return off;
  const h = Math.floor(ts / HOUR_MS);
  let hourly = offsets.get(h);
  if (hourly === undefined) {
    hourly = offsetMinutes(h * HOUR_MS, TZ);
    offsets.set(h, hourly);
  }
  return hourly;
}

function computeClock(ts: number): Clock {
  const off = offsetAt(ts);
  const local = ts + off * 60_000;
  const day = Math.floor(local / DAY_MS);
  const hour = (local - day * DAY_MS) / HOUR_MS;
  const weekday = ((day + 3) % 7) + 1; // 1970-01-01 was a Thursday
  if (local < yearStart || local >= nextYearStart) {
    const year = new Date(local).getUTCFullYear();
    yearStart = Date.UTC(year, 0, 1);
    nextYearStart = Date.UTC(year + 1, 0, 1);
  }
  const dayOfYear = Math.floor((local - yearStart) / DAY_MS) + 1;
  return { hour, weekday, dayOfYear };
}

/** 1 in mid-January, 0 in mid-July. */
export function winterness(dayOfYear: number): number {
  return 0.5 + 0.5 * Math.cos((2 * Math.PI * (dayOfYear - 15)) / 365.25);
}

const bump = (x: number, centre: number, width: number) => Math.exp(-(((x - centre) / width) ** 2));

/** Household consumption in W: night base, morning and evening peaks, more at home on weekends. */
export function householdPowerW(ts: number, scale = 1): number {
  const { hour, weekday, dayOfYear } = localClock(ts);
  const weekend = weekday >= 6;
  const base = 260;
  const morning = (weekend ? 900 : 1300) * bump(hour, weekend ? 9 : 7, weekend ? 1.6 : 1);
  const midday = (weekend ? 1100 : 350) * bump(hour, 13, 2.2);
  const evening = 2200 * bump(hour, 19.5, 2);
  const w = winterness(dayOfYear);
  const lighting = 500 * w * bump(hour, 17.5 + 2.5 * (1 - w), 2.5);
  return scale * (base + morning + midday + evening + lighting) * (1 + 0.25 * w);
}

/** Outdoor temperature in °C for central Poland: −2 °C in January, 19 °C in July, ±4 °C a day. */
export function outdoorTempC(ts: number): number {
  const { hour, dayOfYear } = localClock(ts);
  return (
    8.5 -
    10.5 * Math.cos((2 * Math.PI * (dayOfYear - 20)) / 365.25) +
    4 * Math.cos((2 * Math.PI * (hour - 15)) / 24)
  );
}

/** Heat pump in W: runs harder the colder it is outside, off above 16 °C. */
export function heatPumpPowerW(ts: number): number {
  const t = outdoorTempC(ts);
  return t >= 16 ? 40 : 40 + 260 * (16 - t);
}

const LAT = (52.2 * Math.PI) / 180;
const LON_DEG = 21.0;

/** Sine of the sun's elevation over Warsaw at an instant. */
export function sunElevationSin(ts: number): number {
  const dayOfYear = Math.floor((ts - Date.UTC(new Date(ts).getUTCFullYear(), 0, 1)) / DAY_MS) + 1;
  const decl = ((-23.44 * Math.PI) / 180) * Math.cos((2 * Math.PI * (dayOfYear + 10)) / 365);
  const utcHours = (ts % DAY_MS) / HOUR_MS;
  const solarTime = utcHours + LON_DEG / 15;
  const hourAngle = ((solarTime - 12) * 15 * Math.PI) / 180;
  return Math.sin(LAT) * Math.sin(decl) + Math.cos(LAT) * Math.cos(decl) * Math.cos(hourAngle);
}

/** Day's cloudiness in [0.15, 1]: 1 is a clear day; Polish winters are greyer. */
export function clearness(ts: number, seed: number): number {
  const day = Math.floor(ts / DAY_MS);
  const { dayOfYear } = localClock(ts);
  const u = uniform(seed, day, 77);
  return Math.max(0.15, Math.min(1, 0.35 + 0.65 * u - 0.25 * winterness(dayOfYear) * u));
}

/** PV production in W of an installation of `kWp` peak power. */
export function solarPowerW(ts: number, kWp: number, seed: number): number {
  const s = sunElevationSin(ts);
  if (s <= 0.02) return 0;
  return kWp * 1000 * 0.82 * s ** 1.15 * clearness(ts, seed);
}
