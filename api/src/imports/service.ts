/**
 * History imports (docs/api.md §History import): a file streamed into core's `HistoryParser`, its
 * readings written in batches through the store's bulk path, with an undo. The job's record lives in the
 * metadata store (`history_imports`), so its state survives a restart and every API process sees it.
 *
 * - **Keep what is stored** (`onConflict=keep`). Before each batch is written, the stored readings of its
 *   time range are read: a stamp already stored is never written again — equal values count as
 *   duplicates, others as conflicts (the stored reading is kept and the first 100 reported). Only new
 *   stamps are written (through `writeBulk`, which keeps what is stored), so importing the same file twice
 *   changes nothing, on either engine, whether it has `writeBulk` or not.
 * - **Or replace it** (`onConflict=replace`). A conflicting reading is written through `write`, whose
 *   re-write of a (device, time) replaces the values it carries and keeps the others: the file's
 *   parameters take the file's values, the stored parameters the file does not have stay. Every value
 *   stored at that time is recorded first (`history_import_replaced`, at most `MAX_REPLACED` readings per
 *   import; past that the import goes on, but `undoRefused` is saved before the first replacement that
 *   is not recorded).
 * - **What it inserted** is recorded as runs of evenly spaced stamps (runs.ts), persisted before each
 *   batch is written: undo removes exactly those stamps (deleteReadings over the stretches where every
 *   stored stamp is one of them), so a reading stored before, or written since, stays. Undo first puts
 *   the replaced readings back as they were (`restoreReplaced`), then removes the inserted stamps.
 * - **Rollups.** Writes and deletions leave the store's dirty marks, as a meter's late readings do; the
 *   job then runs the store's rollup refresh, which recomputes the marked ranges only, taking turns with
 *   ingest's scheduler under the same `rollups` lock.
 * - **Bounds.** A file size limit (`KW_IMPORT_MAX_BYTES`), one import or undo at a time per account (a
 *   unique index decides, across processes), every demo workspace together counting as one account, and
 *   a turn of the event loop for short requests between batches (`nextTurn`).
 */
import {
  type HistoryBatch,
  HistoryImportError,
  type HistoryImportOptions,
  HistoryParser,
  type HistoryRowError,
  type ImportFormat,
  type ImportJob,
  type ImportOnConflict,
  type ImportState,
  MESSAGES,
  nextTurn,
  type Reading,
} from '@kilowatch/core';
import type { RawRow, TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { isUniqueViolation, type Sql } from '../db/sql.ts';
import { InsertedRuns, type Run, runEnd, runHolds } from './runs.ts';

declare module 'fastify' {
  interface FastifyInstance {
    imports: ImportService;
  }
}

/** Row errors and conflicts an import's record carries (`errors`, `conflictList`). */
export const FIRST_KEPT = 100;
/** Row errors kept per import for `errors.csv`. */
export const ERRORS_KEPT = 10_000;
/** Readings checked against the store and written together. */
export const BATCH_READINGS = 5_000;
/** A running import not heard of for this long belonged to a process that stopped: it is failed. */
export const STALE_MS = 2 * 60_000;
/** How often a running import says it is alive, and stale ones are looked for. */
const HEARTBEAT_MS = 20_000;

/** Replaced readings an import records for its undo at most (~25 bytes plus ~25 per value each). */
export const MAX_REPLACED = 50_000;
/** `KW_IMPORT_MAX_BYTES`'s default (api/src/config.ts), the limit `MESSAGES.importTooLarge` names. */
export const DEFAULT_MAX_BYTES = 256 * 1024 ** 2;

/**
 * The size limit's message: core's catalogue text for the default limit; another limit is named in the
 * same sentence (the client translates it by that sentence's fixed part, as it does the default).
 */
export function tooLargeMessage(limit: number): string {
  if (limit === DEFAULT_MAX_BYTES) return MESSAGES.importTooLarge;
  return MESSAGES.importTooLarge.replace('256 MiB', formatBytes(limit));
}

function formatBytes(n: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  }
  return `${n} bytes`;
}

export interface Conflict {
  /** The file's line the value came from (records from before lines were kept have none). */
  line?: number;
  ts: number;
  param: string;
  stored: number | null;
  file: number;
}

interface ImportRow {
  id: number;
  user_id: number;
  device_id: number;
  device_key: string;
  format: ImportFormat;
  on_conflict: ImportOnConflict;
  state: ImportState;
  bytes_read: string | number;
  rows_read: string | number;
  accepted: string | number;
  duplicates: string | number;
  rejected: string | number;
  conflicts: string | number;
  range_from: string | number | null;
  range_to: string | number | null;
  errors: HistoryRowError[] | string;
  conflict_list: Conflict[] | string;
  inserted: Run[] | string;
  undo_refused: string | null;
  failure: string | null;
  started_at: string | number;
  finished_at: string | number | null;
  undone_at: string | number | null;
}

const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

function toJob(r: ImportRow): ImportJob {
  const from = num(r.range_from);
  const to = num(r.range_to);
  return {
    id: r.id,
    deviceId: r.device_id,
    format: r.format,
    onConflict: r.on_conflict,
    state: r.state,
    bytesRead: Number(r.bytes_read),
    rowsRead: Number(r.rows_read),
    accepted: Number(r.accepted),
    duplicates: Number(r.duplicates),
    rejected: Number(r.rejected),
    conflicts: Number(r.conflicts),
    range: from === null || to === null ? null : { from, to },
    errors: json(r.errors).map((e) => ({
      line: e.line,
      ...(e.column !== undefined && e.column !== null ? { column: e.column } : {}),
      reason: e.reason,
    })),
    conflictList: json(r.conflict_list),
    failure: r.failure,
    undoRefused: r.undo_refused,
    startedAt: Number(r.started_at),
    finishedAt: num(r.finished_at),
    undoneAt: num(r.undone_at),
  };
}

/** Why a running import stopped before its end, and what the request answers. */
export type ImportStop =
  | { kind: 'too-large'; limit: number }
  | { kind: 'format'; problems: readonly string[]; line?: number };

/** A stored reading an import replaced: every value stored at its time, and whether the file added a parameter. */
interface ReplacedReading {
  ts: number;
  values: Record<string, number>;
  adds: boolean;
}

/** Replaced readings per insert statement (4 parameters each). */
const REPLACED_ROWS_PER_INSERT = 1000;

/** Values equal as stored: the same decimal text gives the same double; a rounding difference is not a conflict. */
function same(a: number, b: number): boolean {
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** One import while its file is read: counts, first errors and conflicts, what it inserted. */
export class ImportRun {
  bytesRead = 0;
  accepted = 0;
  /** Readings already stored with the same values. */
  storedDuplicates = 0;
  conflicts = 0;
  readonly conflictList: Conflict[] = [];
  readonly firstErrors: HistoryRowError[] = [];
  private errorsKept = 0;
  readonly inserted = new InsertedRuns();
  /** Replaced readings recorded for undo (`history_import_replaced`). */
  replacedKept = 0;
  /** More readings were replaced than `maxReplaced`: the replacements are no longer recorded. */
  replacedOverflowed = false;
  private pending: Reading[] = [];
  /** The file's line of each pending reading's values, by parameter (the parser's `lines`). */
  private readonly lines = new WeakMap<Reading, Record<string, number>>();
  private readonly parser: HistoryParser;
  private lastSaved = 0;

  constructor(
    readonly id: number,
    private readonly deviceKey: string,
    options: HistoryImportOptions,
    private readonly store: TelemetryStore,
    private readonly sql: Sql,
    private readonly now: () => number,
    readonly onConflict: ImportOnConflict = 'keep',
    private readonly maxReplaced = MAX_REPLACED,
  ) {
    this.parser = new HistoryParser(options);
  }

  /** Why the import cannot be undone, once it cannot. */
  get undoRefused(): string | null {
    if (this.inserted.overflowed) return MESSAGES.importTooManyRuns;
    if (this.replacedOverflowed) return MESSAGES.importTooManyReplaced;
    return null;
  }

  /**
   * Reads the file to its end (or to the size limit) and writes what it holds. Answers why it stopped
   * early, or null once everything is written; store and metadata failures are thrown.
   */
  async consume(body: AsyncIterable<Buffer | string>, maxBytes: number): Promise<ImportStop | null> {
    try {
      for await (const chunk of body) {
        this.bytesRead += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
        if (this.bytesRead > maxBytes) return { kind: 'too-large', limit: maxBytes };
        await this.take(this.parser.feed(chunk));
      }
      await this.take(this.parser.finish(), true);
      return null;
    } catch (e) {
      if (e instanceof HistoryImportError)
        return { kind: 'format', problems: e.problems, ...(e.line !== undefined ? { line: e.line } : {}) };
      throw e;
    }
  }

  private async take(batch: HistoryBatch, last = false) {
    if (batch.errors.length > 0) await this.keepErrors(batch.errors);
    batch.readings.forEach((r, i) => {
      this.pending.push(r);
      const lines = batch.lines[i];
      if (lines) this.lines.set(r, lines);
    });
    while (this.pending.length >= BATCH_READINGS || (last && this.pending.length > 0)) {
      const next = this.pending.splice(0, BATCH_READINGS);
      await this.write(next);
      await nextTurn();
    }
    // A slow upload still shows its bytes and rows read.
    if (this.now() - this.lastSaved >= 1000) await this.save();
  }

  private async keepErrors(errors: readonly HistoryRowError[]): Promise<void> {
    for (const e of errors) if (this.firstErrors.length < FIRST_KEPT) this.firstErrors.push(e);
    const room = ERRORS_KEPT - this.errorsKept;
    const kept = errors.slice(0, Math.max(0, room));
    if (kept.length === 0) return;
    const values: unknown[] = [];
    const rows = kept.map((e, i) => {
      values.push(this.id, this.errorsKept + i, e.line, e.column ?? null, e.reason);
      const b = i * 5;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5})`;
    });
    this.errorsKept += kept.length;
    await this.sql.query(
      `insert into history_import_errors (import_id, n, line, col, reason) values ${rows.join(', ')}`,
      values,
    );
  }

  /**
   * Checks a batch against what is stored, records the new stamps (and, replacing, the stored readings
   * it replaces), then writes them.
   */
  private async write(batch: Reading[]): Promise<void> {
    batch.sort((a, b) => a.ts - b.ts);
    const from = batch[0]!.ts;
    const to = batch[batch.length - 1]!.ts + 1;
    const wanted = new Set(batch.map((r) => r.ts));
    const stored = new Map<number, RawRow['values']>();
    // Every parameter: a stamp stored with other parameters only is still a stored stamp.
    for await (const page of this.store.streamRaw({ deviceKey: this.deviceKey, from, to, pageSize: 5000 }))
      for (const row of page) if (wanted.has(row.ts)) stored.set(row.ts, row.values);
    const fresh: Reading[] = [];
    const replacing: Reading[] = [];
    const replaced: ReplacedReading[] = [];
    for (const r of batch) {
      const had = stored.get(r.ts);
      if (!had) {
        fresh.push(r);
        continue;
      }
      let conflict = false;
      let adds = false;
      for (const [param, value] of Object.entries(r.values)) {
        const s = had[param];
        if (s !== undefined && same(s, value)) continue;
        conflict = true;
        if (s === undefined) adds = true;
        if (this.conflictList.length < FIRST_KEPT) {
          const line = this.lines.get(r)?.[param];
          this.conflictList.push({
            ...(line !== undefined ? { line } : {}),
            ts: r.ts,
            param,
            stored: s ?? null,
            file: value,
          });
        }
      }
      if (!conflict) {
        this.storedDuplicates++;
        continue;
      }
      this.conflicts++;
      if (this.onConflict === 'replace') {
        replacing.push(r);
        replaced.push({ ts: r.ts, values: had, adds });
      }
    }
    if (replaced.length > 0) await this.recordReplaced(replaced);
    if (fresh.length > 0) {
      // Recorded before it is written: a crash in between leaves an undo that deletes nothing extra
      // (those stamps were not stored), never readings it cannot find.
      this.inserted.add(fresh.map((r) => r.ts));
      await this.save();
      if (this.store.writeBulk) {
        const once = (async function* () {
          yield fresh;
        })();
        await this.store.writeBulk(once);
      } else await this.store.write(fresh);
      this.accepted += fresh.length;
    }
    // `write`, not `writeBulk` (which keeps a stored time as it is): a re-write replaces the values it
    // carries and keeps the stored parameters the file does not have.
    if (replacing.length > 0) await this.store.write(replacing);
  }

  /**
   * Keeps the stored readings about to be replaced, before they are: every value stored at each time.
   * Past `maxReplaced` nothing more is kept and the refusal of undo is saved first (those kept so far are
   * dropped, no longer of use).
   */
  private async recordReplaced(replaced: readonly ReplacedReading[]): Promise<void> {
    if (this.replacedOverflowed) return;
    if (this.replacedKept + replaced.length > this.maxReplaced) {
      this.replacedOverflowed = true;
      await this.save();
      await this.sql.query('delete from history_import_replaced where import_id = $1', [this.id]);
      this.replacedKept = 0;
      return;
    }
    for (let i = 0; i < replaced.length; i += REPLACED_ROWS_PER_INSERT) {
      const part = replaced.slice(i, i + REPLACED_ROWS_PER_INSERT);
      const values: unknown[] = [];
      const rows = part.map((r, k) => {
        values.push(this.id, r.ts, JSON.stringify(r.values), r.adds);
        const b = k * 4;
        return `($${b + 1}, $${b + 2}, $${b + 3}::jsonb, $${b + 4})`;
      });
      // A time the file gives twice (farther apart than the parser's duplicate window) keeps what was
      // stored before the first.
      const res = await this.sql.query(
        `insert into history_import_replaced (import_id, ts, vals, adds) values ${rows.join(', ')}
         on conflict (import_id, ts) do nothing`,
        values,
      );
      this.replacedKept += res.rowCount;
    }
  }

  /** The record as it stands (counts, first errors, what was inserted). */
  async save(extra: { state?: ImportState; failure?: string; finishedAt?: number } = {}): Promise<void> {
    const s = this.parser.summary;
    const now = this.now();
    this.lastSaved = now;
    const range = s.first !== undefined && s.last !== undefined ? [s.first, s.last] : [null, null];
    const sets = [
      'bytes_read = $2',
      'rows_read = $3',
      'accepted = $4',
      'duplicates = $5',
      'rejected = $6',
      'conflicts = $7',
      'range_from = $8',
      'range_to = $9',
      'errors = $10::jsonb',
      'conflict_list = $11::jsonb',
      'inserted = $12::jsonb',
      'undo_refused = $13',
      'updated_at = $14',
    ];
    const values: unknown[] = [
      this.id,
      this.bytesRead,
      s.rows,
      this.accepted,
      s.duplicates + this.storedDuplicates,
      s.errors,
      this.conflicts,
      range[0],
      range[1],
      JSON.stringify(this.firstErrors),
      JSON.stringify(this.conflictList),
      JSON.stringify(this.inserted.runs),
      this.undoRefused,
      now,
    ];
    if (extra.state) {
      values.push(extra.state);
      sets.push(`state = $${values.length}`);
    }
    if (extra.failure !== undefined) {
      values.push(extra.failure);
      sets.push(`failure = $${values.length}`);
    }
    if (extra.finishedAt !== undefined) {
      values.push(extra.finishedAt);
      sets.push(`finished_at = $${values.length}`);
    }
    await this.sql.query(`update history_imports set ${sets.join(', ')} where id = $1`, values);
  }
}

/**
 * Removes exactly the stamps of the runs: over each run's span, the stretches of stored readings that
 * are all the run's own are deleted, and a reading stored there that is not (written before the import
 * at a time the file did not have, or since) stays. Answers the span deleted from, or null.
 */
export async function deleteRuns(
  store: TelemetryStore,
  deviceKey: string,
  runs: readonly Run[],
): Promise<{ from: number; to: number } | null> {
  let span: { from: number; to: number } | null = null;
  for (const run of runs) {
    const first = run[0];
    const last = runEnd(run);
    let start: number | null = null;
    let end = 0;
    const flush = async () => {
      if (start === null) return;
      await store.deleteReadings({ deviceKey, from: start, to: end + 1 });
      span = span
        ? { from: Math.min(span.from, start), to: Math.max(span.to, end + 1) }
        : { from: start, to: end + 1 };
      start = null;
    };
    const stamps: number[] = [];
    for await (const page of store.streamRaw({ deviceKey, from: first, to: last + 1, pageSize: 10_000 }))
      for (const row of page) stamps.push(row.ts);
    for (const ts of stamps) {
      if (runHolds(run, ts)) {
        start ??= ts;
        end = ts;
      } else await flush();
    }
    await flush();
  }
  return span;
}

/**
 * Puts back the stored readings an import replaced, exactly as they were: where the file added a
 * parameter the time did not have, the readings are removed (over the stretches of stored times that are
 * all replaced ones) and written back whole; elsewhere writing them back replaces the file's values with
 * the stored ones. Answers the span written, or null when nothing was replaced.
 */
export async function restoreReplaced(
  store: TelemetryStore,
  sql: Sql,
  importId: number,
  deviceKey: string,
): Promise<{ from: number; to: number } | null> {
  const { rows } = await sql.query<{
    ts: string | number;
    vals: Record<string, number> | string;
    adds: boolean;
  }>('select ts, vals, adds from history_import_replaced where import_id = $1 order by ts', [importId]);
  if (rows.length === 0) return null;
  const originals: Reading[] = rows.map((r) => ({ deviceKey, ts: Number(r.ts), values: json(r.vals) }));
  const added = rows.filter((r) => r.adds).map((r) => Number(r.ts));
  if (added.length > 0) {
    const replaced = new Set(originals.map((r) => r.ts));
    const needed = new Set(added);
    const stamps: number[] = [];
    for await (const page of store.streamRaw({
      deviceKey,
      from: added[0]!,
      to: added.at(-1)! + 1,
      pageSize: 10_000,
    }))
      for (const row of page) stamps.push(row.ts);
    let start: number | null = null;
    let end = 0;
    let needs = false;
    const flush = async () => {
      if (start !== null && needs) await store.deleteReadings({ deviceKey, from: start, to: end + 1 });
      start = null;
      needs = false;
    };
    for (const ts of stamps) {
      if (!replaced.has(ts)) {
        await flush();
        continue;
      }
      start ??= ts;
      end = ts;
      if (needed.has(ts)) needs = true;
    }
    await flush();
  }
  for (let i = 0; i < originals.length; i += BATCH_READINGS) {
    await store.write(originals.slice(i, i + BATCH_READINGS));
    await nextTurn();
  }
  return { from: originals[0]!.ts, to: originals.at(-1)!.ts + 1 };
}

export interface ImportService {
  readonly maxBytes: number;
  /** Replaced readings an import records for undo at most (`MAX_REPLACED`; a test may lower it). */
  maxReplaced: number;
  /** Opens an import's record (state running), or says why not. */
  begin(
    userId: number,
    device: { id: number; deviceKey: string },
    format: ImportFormat,
    options: HistoryImportOptions,
    onConflict?: ImportOnConflict,
  ): Promise<ImportRun | { refused: 'running' | 'demo-running' }>;
  /** The file is read and written: the rollups are refreshed, then the import is done (in the background). */
  complete(run: ImportRun): Promise<void>;
  /** The import stopped early or failed: what it wrote is removed, and it is failed with the reason. */
  fail(run: ImportRun, reason: string): Promise<void>;
  get(userId: number, id: number): Promise<ImportJob | null>;
  list(userId: number, deviceId: number): Promise<ImportJob[]>;
  /** Every kept row error, in order (null: not the user's). */
  errors(userId: number, id: number): Promise<HistoryRowError[] | null>;
  undo(userId: number, id: number): Promise<ImportJob | 'missing' | { refused: string; status: 400 | 409 }>;
}

export default fp(
  async (app: FastifyInstance) => {
    const { sql } = app;
    const store = app.store;
    const now = () => app.clock.now();
    /** Imports of this process still running: failed at shutdown, their heartbeat meanwhile. */
    const running = new Set<number>();

    async function refreshRollups(): Promise<void> {
      // Under the lock ingest's rollup scheduler takes, waiting for its turn.
      await sql.exclusive('rollups', () => store.refreshRollups(), { wait: true });
    }

    async function failStale(): Promise<void> {
      const at = now();
      const mine = [...running];
      await sql.query(
        `update history_imports set state = case when state = 'undoing' then 'done' else 'failed' end,
           failure = case when state = 'undoing' then failure else $2 end, finished_at = coalesce(finished_at, $3), updated_at = $3
         where state in ('running', 'undoing') and updated_at < $1 and not (id = any($4::integer[]))`,
        [at - STALE_MS, MESSAGES.importStopped, at, mine],
      );
    }

    async function heartbeat(): Promise<void> {
      if (running.size === 0) return;
      await sql.query('update history_imports set updated_at = $1 where id = any($2::integer[])', [
        now(),
        [...running],
      ]);
    }

    // A job running when the server stopped is failed now (and every HEARTBEAT_MS, one of a process that
    // died): its record keeps what it inserted, so it can still be undone.
    await sql.query(
      `update history_imports set state = case when state = 'undoing' then 'done' else 'failed' end,
         failure = case when state = 'undoing' then failure else $1 end, finished_at = coalesce(finished_at, $2), updated_at = $2
       where state in ('running', 'undoing') and updated_at < $3`,
      [MESSAGES.importStopped, now(), now() - STALE_MS],
    );
    const timer = setInterval(() => {
      heartbeat()
        .then(failStale)
        .catch((err: unknown) => app.log.warn({ err }, 'import heartbeat failed'));
    }, HEARTBEAT_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      if (running.size === 0) return;
      await sql
        .query(
          `update history_imports set state = 'failed', failure = $2, finished_at = $3, updated_at = $3
           where id = any($1::integer[]) and state = 'running'`,
          [[...running], MESSAGES.importStopped, now()],
        )
        .catch(() => undefined);
    });

    async function own(userId: number, id: number): Promise<ImportRow | null> {
      const { rows } = await sql.query<ImportRow>(
        'select * from history_imports where id = $1 and user_id = $2',
        [id, userId],
      );
      return rows[0] ?? null;
    }

    const service: ImportService = {
      maxBytes: app.config.importMaxBytes,
      maxReplaced: MAX_REPLACED,

      async begin(userId, device, format, options, onConflict = 'keep') {
        const demo = (await app.accounts.findUserById(userId))?.isDemo === true;
        if (demo) {
          // Every demo workspace together is one account here.
          const { rows } = await sql.query(
            `select 1 from history_imports i join users u on u.id = i.user_id
             where i.state in ('running', 'undoing') and u.is_demo limit 1`,
          );
          if (rows.length > 0) return { refused: 'demo-running' };
        }
        const at = now();
        let id: number;
        try {
          const { rows } = await sql.query<{ id: number }>(
            `insert into history_imports (user_id, device_id, device_key, format, on_conflict, state, started_at, updated_at)
             values ($1, $2, $3, $4, $5, 'running', $6, $6) returning id`,
            [userId, device.id, device.deviceKey, format, onConflict, at],
          );
          id = rows[0]!.id;
        } catch (e) {
          if (isUniqueViolation(e)) return { refused: 'running' };
          throw e;
        }
        running.add(id);
        try {
          return new ImportRun(
            id,
            device.deviceKey,
            options,
            store,
            sql,
            now,
            onConflict,
            service.maxReplaced,
          );
        } catch (e) {
          running.delete(id);
          await sql.query('delete from history_imports where id = $1', [id]);
          throw e;
        }
      },

      async complete(run) {
        try {
          await run.save();
          await refreshRollups();
          await run.save({ state: 'done', finishedAt: now() });
        } catch (err) {
          app.log.error({ err, importId: run.id }, 'import failed');
          await run
            .save({ state: 'failed', failure: MESSAGES.importRollupsFailed, finishedAt: now() })
            .catch(() => undefined);
        } finally {
          running.delete(run.id);
        }
      },

      async fail(run, reason) {
        try {
          // Nothing of a file that cannot be imported whole is kept: what it replaced is put back, what
          // it inserted removed (unless it could no longer be undone).
          if ((!run.inserted.empty || run.replacedKept > 0) && run.undoRefused === null) {
            const { rows } = await sql.query<{ device_key: string }>(
              'select device_key from history_imports where id = $1',
              [run.id],
            );
            if (rows[0]) {
              await restoreReplaced(store, sql, run.id, rows[0].device_key);
              await deleteRuns(store, rows[0].device_key, run.inserted.runs);
              await refreshRollups();
              run.inserted.runs.length = 0;
              await sql.query('delete from history_import_replaced where import_id = $1', [run.id]);
              run.replacedKept = 0;
            }
          }
        } catch (err) {
          app.log.warn({ err, importId: run.id }, 'a failed import could not remove its readings');
        } finally {
          running.delete(run.id);
          await run.save({ state: 'failed', failure: reason, finishedAt: now() }).catch(() => undefined);
        }
      },

      async get(userId, id) {
        const r = await own(userId, id);
        return r ? toJob(r) : null;
      },

      async list(userId, deviceId) {
        const { rows } = await sql.query<ImportRow>(
          'select * from history_imports where user_id = $1 and device_id = $2 order by id desc limit 100',
          [userId, deviceId],
        );
        return rows.map(toJob);
      },

      async errors(userId, id) {
        if (!(await own(userId, id))) return null;
        const { rows } = await sql.query<{ line: number; col: string | null; reason: string }>(
          'select line, col, reason from history_import_errors where import_id = $1 order by n',
          [id],
        );
        return rows.map((r) => ({
          line: r.line,
          ...(r.col !== null ? { column: r.col } : {}),
          reason: r.reason,
        }));
      },

      async undo(userId, id) {
        const r = await own(userId, id);
        if (!r) return 'missing';
        if (r.state === 'running' || r.state === 'undoing')
          return { refused: MESSAGES.importStillRunning, status: 409 };
        if (r.state === 'undone') return { refused: MESSAGES.importAlreadyUndone, status: 409 };
        if (r.undo_refused) return { refused: r.undo_refused, status: 409 };
        const runs = json(r.inserted);
        const { rows: kept } = await sql.query(
          'select 1 from history_import_replaced where import_id = $1 limit 1',
          [id],
        );
        if (runs.length === 0 && kept.length === 0)
          return { refused: MESSAGES.importNothingToUndo, status: 409 };
        // The account's one place, held while the readings are removed.
        const claimed = await sql
          .query(
            `update history_imports set state = 'undoing', updated_at = $3 where id = $1 and user_id = $2 and state = $4`,
            [id, userId, now(), r.state],
          )
          .catch((e: unknown) => {
            if (isUniqueViolation(e)) return null;
            throw e;
          });
        if (!claimed) return { refused: MESSAGES.importRunning, status: 409 };
        if (claimed.rowCount === 0) return { refused: MESSAGES.importStillRunning, status: 409 };
        running.add(id);
        try {
          // The replaced readings first: a time the import inserted and then replaced (given twice in
          // the file) is put back as the import first wrote it, then removed with the rest it inserted.
          await restoreReplaced(store, sql, id, r.device_key);
          await deleteRuns(store, r.device_key, runs);
          await refreshRollups();
          const at = now();
          await sql.transaction(async (tx) => {
            await tx.query(
              `update history_imports set state = 'undone', undone_at = $2, updated_at = $2, inserted = '[]'::jsonb where id = $1`,
              [id, at],
            );
            await tx.query('delete from history_import_replaced where import_id = $1', [id]);
          });
        } catch (e) {
          await sql
            .query(`update history_imports set state = $2, updated_at = $3 where id = $1`, [
              id,
              r.state,
              now(),
            ])
            .catch(() => undefined);
          throw e;
        } finally {
          running.delete(id);
        }
        const after = await own(userId, id);
        return after ? toJob(after) : 'missing';
      },
    };
    app.decorate('imports', service);
  },
  { name: 'imports', dependencies: ['metadata', 'telemetry', 'repositories'] },
);
