/**
 * The readings the file's head gives under the chosen format and mapping, through core's own parser
 * (the one the server runs), so the preview shows what the import would store — or why it cannot start.
 */
import {
  HistoryImportError,
  type HistoryImportOptions,
  HistoryParser,
  type HistoryRowError,
  type Reading,
} from '@kilowatch/core';
import { PREVIEW_ROWS } from './filePreview.ts';

/** The parser wants a device key; the preview's readings are never stored. */
const PREVIEW_KEY = '000000000000';

/** The import's options without the device key, kept apart for each format. */
export type ImportOptions = HistoryImportOptions extends infer O
  ? O extends HistoryImportOptions
    ? Omit<O, 'deviceKey'>
    : never
  : never;

export interface ParsedPreview {
  readings: Reading[];
  errors: HistoryRowError[];
  /** Parameters the readings carry, in first-met order. */
  params: string[];
  /** Why the import cannot start with these options (the parser's problems, in English). */
  problem: string | null;
}

/** Parses `head` (whole lines of the file's start; `whole` when it is the entire file). */
export function parsePreview(head: string, whole: boolean, options: ImportOptions): ParsedPreview {
  const readings: Reading[] = [];
  const errors: HistoryRowError[] = [];
  try {
    const parser = new HistoryParser({ ...options, deviceKey: PREVIEW_KEY } as HistoryImportOptions);
    const take = (b: { readings: Reading[]; errors: HistoryRowError[] }) => {
      readings.push(...b.readings);
      errors.push(...b.errors);
    };
    take(parser.feed(head));
    // A head cut inside the file is not its end: held readings are taken, a missing device is not an error.
    if (whole) take(parser.finish());
    else
      try {
        take(parser.finish());
      } catch (e) {
        if (!(e instanceof HistoryImportError)) throw e;
      }
  } catch (e) {
    if (e instanceof HistoryImportError) return { readings: [], errors, params: [], problem: e.message };
    return { readings: [], errors, params: [], problem: e instanceof Error ? e.message : String(e) };
  }
  const shown = readings.slice(0, PREVIEW_ROWS);
  const params = [...new Set(shown.flatMap((r) => Object.keys(r.values)))];
  return { readings: shown, errors: errors.slice(0, PREVIEW_ROWS), params, problem: null };
}
