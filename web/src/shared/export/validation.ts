/**
 * Export form rules (docs/spec.md §5, §8): a file type, at least one parameter unless "all", a date range,
 * and a range no longer than the server accepts (docs/api.md §Exports: 400 days).
 */
import type { ExportFormat } from '@kilowatch/core';
import { DAY_MS } from '@kilowatch/core';
import type { MessageId } from '../../i18n/i18n.ts';
import { parseLocalDate } from '../../ranges/ranges.ts';

/** Longest range one export may cover; the API answers "Data range is too long." beyond it. */
export const MAX_EXPORT_RANGE_DAYS = 400;

export interface ExportForm {
  format: ExportFormat | null;
  /** All parameters the device reports, or the selection below. */
  mode: 'all' | 'selected';
  params: readonly string[];
  /** `YYYY-MM-DD` in the user's time zone, both days included. */
  from: string;
  to: string;
  fileName: string;
}

export interface ExportFormErrors {
  format?: MessageId;
  params?: MessageId;
  range?: MessageId;
}

export interface ExportRange {
  from: number;
  to: number;
}

/** The instants of the chosen days in `tz`: from the first day's midnight to the end of the last day. */
export function exportRange(from: string, to: string, tz: string): ExportRange | null {
  const a = parseLocalDate(from.trim(), tz);
  const b = parseLocalDate(to.trim(), tz);
  if (a === null || b === null) return null;
  // The next local midnight (23 or 25 hours away on DST days).
  const end = parseLocalDate(nextDay(to.trim()), tz);
  if (end === null || end <= a || b < a) return null;
  return { from: a, to: end };
}

function nextDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

export function validateExport(form: ExportForm, tz: string): ExportFormErrors {
  const errors: ExportFormErrors = {};
  if (form.format === null) errors.format = 'val.fileType';
  if (form.mode === 'selected' && form.params.length === 0) errors.params = 'val.param';
  if (!form.from.trim() || !form.to.trim()) errors.range = 'val.dateRange';
  else {
    const range = exportRange(form.from, form.to, tz);
    if (range === null) errors.range = 'val.dateRange';
    else if (range.to - range.from > MAX_EXPORT_RANGE_DAYS * DAY_MS) errors.range = 'msg.rangeTooLong';
  }
  return errors;
}

export function hasErrors(e: ExportFormErrors): boolean {
  return e.format !== undefined || e.params !== undefined || e.range !== undefined;
}

/** What the dialog shows when the server refuses an export. */
export type ExportRefusal =
  | { kind: 'fields'; errors: ExportFormErrors }
  | { kind: 'unavailable' }
  | { kind: 'failed'; detail: string };

const RANGE_TOO_LONG = 'Data range is too long.';

/**
 * 503 is "Export unavailable" (the queue is full); a 400 names the fields it refuses (docs/spec.md §5
 * messages); anything else is "Exporting data failed." with the server's reason.
 */
export function exportRefusal(err: {
  status: number;
  message: string;
  errors?: Record<string, string[]> | undefined;
}): ExportRefusal {
  if (err.status === 503) return { kind: 'unavailable' };
  if (err.status === 400) {
    const pick = (field: string) => err.errors?.[field]?.[0];
    const errors: ExportFormErrors = {};
    if (pick('format')) errors.format = 'val.fileType';
    if (pick('params')) errors.params = 'val.param';
    const range = pick('from') ?? pick('to') ?? (err.message === RANGE_TOO_LONG ? RANGE_TOO_LONG : undefined);
    if (range) errors.range = range === RANGE_TOO_LONG ? 'msg.rangeTooLong' : 'val.dateRange';
    if (hasErrors(errors)) return { kind: 'fields', errors };
  }
  return { kind: 'failed', detail: err.message };
}
