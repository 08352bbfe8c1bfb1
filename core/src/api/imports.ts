/** History imports (docs/api.md §History import): what a job reports. */
import * as v from 'valibot';

export const IMPORT_FORMATS = ['kilowatch', 'csv', 'line-protocol'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];
/** `undoing` is passed through while `DELETE /api/imports/:id` removes what the import added. */
export const IMPORT_STATES = ['running', 'done', 'failed', 'undoing', 'undone'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

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
  onConflict: v.optional(v.string()),
});
export type ImportQuery = v.InferOutput<typeof ImportQuerySchema>;

export const ImportRowErrorSchema = v.object({
  line: v.number(),
  column: v.optional(v.string()),
  reason: v.string(),
});

/** A stored reading the file gave another value at the same time: the stored one is kept. */
export const ImportConflictSchema = v.object({
  ts: v.number(),
  param: v.string(),
  stored: v.nullable(v.number()),
  file: v.number(),
});

export const ImportJobSchema = v.object({
  id: v.number(),
  deviceId: v.number(),
  format: v.picklist(IMPORT_FORMATS),
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
