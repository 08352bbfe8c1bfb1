/** History imports (docs/api.md §History import): what a job reports. */
import * as v from 'valibot';

export const IMPORT_FORMATS = ['kilowatch', 'csv', 'line-protocol'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
/** `undoing` is passed through while `DELETE /api/imports/:id` removes what the import added. */
export const IMPORT_STATES = ['running', 'done', 'failed', 'undoing', 'undone'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];
/** What a reading of the file does at a time already stored with other values: keep the stored one, or replace it. */
export const IMPORT_ON_CONFLICT = ['keep', 'replace'] as const;
export type ImportOnConflict = (typeof IMPORT_ON_CONFLICT)[number];

export const ImportQuerySchema = v.object({
  format: v.picklist(IMPORT_FORMATS, 'Choose a format: kilowatch, csv or line-protocol.'),
  /** JSON text: a CSV mapping (`csv`) or a line-protocol mapping (`line-protocol`). */
  mapping: v.optional(v.pipe(v.string(), v.maxLength(20_000))),
  /** The zone of a CSV file's local stamps (or of local days), when the mapping names none. */
  zone: v.optional(v.pipe(v.string(), v.maxLength(64))),
  /** A Kilowatch export's device to read (a file of several devices). */
  sourceDevice: v.optional(v.pipe(v.string(), v.maxLength(200))),
  /** A line-protocol file's timestamp unit, when the mapping names none. */
  precision: v.optional(v.picklist(['ns', 'us', 'ms', 's'])),
  /** The file's text encoding (default utf-8). */
  encoding: v.optional(v.pipe(v.string(), v.maxLength(40))),
  /** `keep` (default) or `replace`; anything else is answered 400 `MESSAGES.importOnConflict`. */
  onConflict: v.optional(v.string()),
});
export type ImportQuery = v.InferOutput<typeof ImportQuerySchema>;

export const ImportRowErrorSchema = v.object({
  line: v.number(),
  column: v.optional(v.string()),
  reason: v.string(),
});

/**
 * A stored reading the file gave another value at the same time (`stored` null: the time is stored
 * without that parameter): kept with `onConflict=keep`, replaced by the file's with `replace`.
 */
export const ImportConflictSchema = v.object({
  /** The file's line the value came from (absent in records kept before lines were). */
  line: v.optional(v.number()),
  ts: v.number(),
  param: v.string(),
  stored: v.nullable(v.number()),
  file: v.number(),
});

export const ImportJobSchema = v.object({
  id: v.number(),
  deviceId: v.number(),
  format: v.picklist(IMPORT_FORMATS),
  /** What the import did with conflicting readings (always sent; optional for records from before it). */
  onConflict: v.optional(v.picklist(IMPORT_ON_CONFLICT)),
  state: v.picklist(IMPORT_STATES),
  bytesRead: v.number(),
  rowsRead: v.number(),
  accepted: v.number(),
  duplicates: v.number(),
  rejected: v.number(),
  conflicts: v.number(),
  range: v.nullable(v.object({ from: v.number(), to: v.number() })),
  errors: v.array(ImportRowErrorSchema),
  conflictList: v.array(ImportConflictSchema),
  /** Why the import failed (a fatal format problem, the size limit, the server stopping). */
  failure: v.nullable(v.string()),
  /** Why `DELETE` cannot undo it, when it cannot. */
  undoRefused: v.nullable(v.string()),
  startedAt: v.number(),
  finishedAt: v.nullable(v.number()),
  undoneAt: v.nullable(v.number()),
});
export type ImportJob = v.InferOutput<typeof ImportJobSchema>;

export const ImportAcceptedSchema = v.object({ id: v.number() });
