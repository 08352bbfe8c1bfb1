/**
 * CSV cells (RFC 4180) for exports: quoted when they hold a comma, quote, CR or LF; text cells starting
 * with = + - @ tab or CR are prefixed with an apostrophe so spreadsheets never run them as formulas
 * (OWASP "CSV injection"); numbers stay numbers.
 */
import { offsetMinutes } from '@kilowatch/core';

const FORMULA_START = /^[=+\-@\t\r]/;

export function textCell(value: string): string {
  const guarded = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(guarded) ? `"${guarded.replaceAll('"', '""')}"` : guarded;
}

export function numberCell(value: number | undefined | null): string {
  return value === undefined || value === null || !Number.isFinite(value) ? '' : String(value);
}

export function csvLine(cells: readonly string[]): string {
  return `${cells.join(',')}\r\n`;
}

/** `YYYY-MM-DD HH:mm:ss` in a zone; the zone offset is looked up once per hour of data, not per row. */
export function localTimestampFormatter(tz: string): (ts: number) => string {
  const offsets = new Map<number, number>();
  return (ts) => {
    const hour = Math.floor(ts / 3_600_000);
    let off = offsets.get(hour);
    if (off === undefined) {
      off = offsetMinutes(ts, tz);
      if (offsets.size > 10_000) offsets.clear();
      offsets.set(hour, off);
    }
    return new Date(ts + off * 60_000).toISOString().slice(0, 19).replace('T', ' ');
  };
}

/** A file name safe on every file system and in a Content-Disposition header. */
export function safeFileName(name: string, fallback: string): string {
  const cleaned = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._ -]/g, '')
    .replace(/\s+/g, '_')
    .replace(/^[.-]+/, '')
    .slice(0, 80);
  return cleaned || fallback;
}
