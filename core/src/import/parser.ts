/**
 * The streaming history import (docs/domain.md §Importing history): text goes in chunk by chunk, readings
 * for the store's bulk path and row errors come out. It holds the unfinished line, the stamps of a window
 * of recent rows (to drop duplicates and find conflicts), the running sums of interval energies and the
 * readings of the newest stamp (which a following line may add to) — never the whole file.
 */
import { DEVICE_KEY_PATTERN } from '../devices.ts';
import { checkValue, paramDef } from '../params.ts';
import type { Reading } from '../readings.ts';
import { addLocalDays, DAY_MS, MINUTE_MS } from '../time.ts';
import {
  CsvDecoder,
  csvMappingProblems,
  type Decoder,
  KilowatchDecoder,
  LineProtocolDecoder,
  lineProtocolMappingProblems,
} from './formats.ts';
import { fromExact } from './numbers.ts';
import { clockOf, StampResolver } from './stamps.ts';
import { LineReader } from './text.ts';
import {
  type DecodedRow,
  type HistoryBatch,
  HistoryImportError,
  type HistoryImportOptions,
  type HistoryRowError,
  type HistorySummary,
  type IntervalOptions,
  type RowSink,
} from './types.ts';

/**
 * Default number of recent stamps remembered for duplicates and conflicts within the file: a week of
 * 1-minute rows. Each holds its row's values (a three-phase meter's ~20), so 200,000 held ~300 MB; a
 * duplicate further back is still caught against the store, which keeps what it has.
 */
export const DEFAULT_DEDUP_WINDOW = 10_080;
/** Readings held back at most, when a file's stamps do not run forward. */
const MAX_PENDING = 10_000;

function iso(ts: number): string {
  return new Date(ts).toISOString().replace('.000Z', 'Z');
}

function intervalProblems(o: IntervalOptions, problems: string[]): void {
  if (o.stamp !== undefined && o.stamp !== 'start' && o.stamp !== 'end')
    problems.push(`stamp '${o.stamp}' is not start or end`);
  const i = o.interval;
  if (i !== undefined && i !== 'day' && !(typeof i === 'number' && Number.isInteger(i) && i > 0))
    problems.push(`interval ${i} is not a whole number of minutes or 'day'`);
}

/** The bounds of the interval a row's stamp names. */
type IntervalBounds = (ts: number) => { start: number; end: number } | string;

function boundsOf(o: IntervalOptions, zone: string, fixedOffset: number | undefined): IntervalBounds {
  const stampAtStart = o.stamp === 'start';
  if (o.interval === 'day') {
    return (ts) => {
      if (fixedOffset !== undefined)
        return stampAtStart ? { start: ts, end: ts + DAY_MS } : { start: ts - DAY_MS, end: ts };
      const other = addLocalDays(ts, stampAtStart ? 1 : -1, zone);
      if (addLocalDays(ts, 0, zone) !== ts)
        return `a day's energy must be stamped at local midnight in ${zone}, not at ${iso(ts)}`;
      return stampAtStart ? { start: ts, end: other } : { start: other, end: ts };
    };
  }
  const len = (o.interval ?? 60) * MINUTE_MS;
  return (ts) => (stampAtStart ? { start: ts, end: ts + len } : { start: ts - len, end: ts });
}

interface Seen {
  line: number;
  values: Map<string, number>;
}

/**
 * Parses a history file fed in chunks of text or bytes. `feed` and `finish` answer the readings and row
 * errors they completed; `finish` ends the file. Problems with the options, or a file that cannot be
 * read at all, throw `HistoryImportError`.
 */
export class HistoryParser {
  private readonly reader: LineReader;
  private readonly decoder: Decoder;
  private readonly kilowatch: KilowatchDecoder | undefined;
  private readonly deviceKey: string;
  private readonly dedupWindow: number;
  private readonly bounds: IntervalBounds;
  private readonly sink: RowSink;
  private readonly seen = new Map<number, Seen>();
  private readonly sums = new Map<string, { sum: bigint; lastEnd: number }>();
  private readonly pending = new Map<number, Reading>();
  /** The line each pending reading's value came from, by stamp and parameter. */
  private readonly pendingLines = new Map<number, Record<string, number>>();
  private newestRow = Number.NEGATIVE_INFINITY;
  private errors: HistoryRowError[] = [];
  private finished = false;
  private readonly stats: HistorySummary = {
    lines: 0,
    rows: 0,
    readings: 0,
    duplicates: 0,
    skipped: 0,
    errors: 0,
    devices: [],
    endsWithoutNewline: false,
  };

  constructor(options: HistoryImportOptions) {
    const problems: string[] = [];
    if (typeof options.deviceKey !== 'string' || !DEVICE_KEY_PATTERN.test(options.deviceKey))
      problems.push('deviceKey must be 12 lowercase hex digits');
    const window = options.dedupWindow ?? DEFAULT_DEDUP_WINDOW;
    if (!Number.isInteger(window) || window < 1) problems.push('dedupWindow must be a whole number from 1');
    let reader: LineReader | undefined;
    try {
      reader = new LineReader(options.encoding);
    } catch {
      problems.push(`unknown encoding '${options.encoding}'`);
    }
    let decoder: Decoder | undefined;
    let bounds: IntervalBounds = () => 'no intervals';
    switch (options.format) {
      case 'kilowatch': {
        this.kilowatch = new KilowatchDecoder(new StampResolver('UTC', 0), options.sourceDevice);
        decoder = this.kilowatch;
        break;
      }
      case 'csv': {
        const m = options.mapping;
        if (!m || typeof m !== 'object') {
          problems.push('a csv import needs a mapping');
          break;
        }
        csvMappingProblems(m, problems);
        intervalProblems(m, problems);
        const clock = clockOf(m.zone, m.offset, problems);
        if (problems.length === 0) {
          decoder = new CsvDecoder(m, new StampResolver(clock.zone, clock.offset));
          bounds = boundsOf(m, clock.zone, clock.offset);
        }
        break;
      }
      case 'line-protocol': {
        const m = options.mapping;
        if (!m || typeof m !== 'object') {
          problems.push('a line-protocol import needs a mapping');
          break;
        }
        lineProtocolMappingProblems(m, problems);
        intervalProblems(m, problems);
        const clock = clockOf(m.zone, undefined, problems);
        if (problems.length === 0) {
          decoder = new LineProtocolDecoder(m);
          bounds = boundsOf(m, clock.zone, undefined);
        }
        break;
      }
      default:
        problems.push(
          `unknown format '${(options as { format?: unknown }).format}' (kilowatch, csv or line-protocol)`,
        );
    }
    if (problems.length > 0 || !decoder || !reader) throw new HistoryImportError(problems);
    this.reader = reader;
    this.decoder = decoder;
    this.bounds = bounds;
    this.deviceKey = options.deviceKey;
    this.dedupWindow = window;
    this.sink = {
      row: (row) => this.accept(row),
      error: (e) => this.error(e),
      skip: () => {
        this.stats.skipped++;
      },
    };
  }

  /** Takes the next chunk of the file. */
  feed(chunk: string | Uint8Array): HistoryBatch {
    if (this.finished) throw new HistoryImportError(['the file was already finished']);
    for (const l of this.reader.push(chunk, this.tooLong)) this.decoder.line(l, this.sink);
    return this.take(false);
  }

  /** Ends the file: its last line, if it had no line break, and every reading still held. */
  finish(): HistoryBatch {
    if (this.finished) throw new HistoryImportError(['the file was already finished']);
    this.finished = true;
    for (const l of this.reader.end(this.tooLong)) {
      if (!l.terminated) this.stats.endsWithoutNewline = true;
      this.decoder.line(l, this.sink);
    }
    this.decoder.end(this.sink);
    return this.take(true);
  }

  /** Counts so far (complete after `finish`). */
  get summary(): HistorySummary {
    return {
      ...this.stats,
      lines: this.reader.linesRead,
      devices: this.kilowatch ? [...this.kilowatch.devices] : [],
    };
  }

  private readonly tooLong = (line: number) => this.error({ line, reason: 'the line is longer than 1 MiB' });

  private error(e: HistoryRowError): void {
    this.stats.errors++;
    this.errors.push(e);
  }

  /** Drops exact duplicates, reports conflicts, turns interval energies into register readings. */
  private accept(row: DecodedRow): void {
    this.stats.rows++;
    const prev = this.seen.get(row.ts);
    const fresh: [string, number][] = [];
    const conflicts: string[] = [];
    const check = (key: string, param: string, value: number) => {
      const before = prev?.values.get(key);
      if (before === undefined) fresh.push([key, value]);
      else if (before !== value) conflicts.push(`${param} ${before} on line ${prev!.line}, ${value} here`);
    };
    for (const [p, v] of Object.entries(row.values)) check(p, p, v);
    for (const [p, v] of Object.entries(row.intervals)) check(`~${p}`, p, v.value);
    if (conflicts.length > 0) {
      this.error({
        line: row.line,
        reason: `duplicate stamp ${iso(row.ts)} with a different value: ${conflicts.join('; ')}`,
      });
      return;
    }
    if (fresh.length === 0) {
      this.stats.duplicates++;
      return;
    }
    const intervals = fresh.filter(([k]) => k.startsWith('~')).map(([k]) => k.slice(1));
    let span: { start: number; end: number } | undefined;
    const sums: [string, bigint][] = [];
    if (intervals.length > 0) {
      const b = this.bounds(row.ts);
      if (typeof b === 'string') {
        this.error({ line: row.line, reason: b });
        return;
      }
      span = b;
      for (const p of intervals) {
        const state = this.sums.get(p);
        if (state && b.start < state.lastEnd) {
          this.error({
            line: row.line,
            reason: `the interval ${iso(b.start)} to ${iso(b.end)} of ${p} begins before the previous one ends (${iso(state.lastEnd)}): interval energies must be in time order`,
          });
          return;
        }
        const sum = (state?.sum ?? 0n) + row.intervals[p]!.exact;
        const value = fromExact(sum);
        if (!checkValue(p, value).ok) {
          const def = paramDef(p)!;
          this.error({
            line: row.line,
            reason: `the running sum of ${p} reaches ${value} ${def.unit}, outside its range (${def.min} to ${def.max})`,
          });
          return;
        }
        sums.push([p, sum]);
      }
    }
    let entry = prev;
    if (!entry) {
      entry = { line: row.line, values: new Map() };
      this.seen.set(row.ts, entry);
      if (this.seen.size > this.dedupWindow) this.seen.delete(this.seen.keys().next().value!);
    }
    for (const [k, v] of fresh) entry.values.set(k, v);
    for (const [k, v] of fresh) if (!k.startsWith('~')) this.put(row.ts, k, v, row.line);
    for (const [p, sum] of sums) {
      const state = this.sums.get(p);
      // The first interval of a parameter starts its register: a reading at its start.
      if (!state) this.put(span!.start, p, 0, row.line);
      this.put(span!.end, p, fromExact(sum), row.line);
      this.sums.set(p, { sum, lastEnd: span!.end });
    }
    if (row.ts > this.newestRow) this.newestRow = row.ts;
  }

  private put(ts: number, param: string, value: number, line: number): void {
    let r = this.pending.get(ts);
    let lines = this.pendingLines.get(ts);
    if (!r || !lines) {
      r = { deviceKey: this.deviceKey, ts, values: {} };
      lines = {};
      this.pending.set(ts, r);
      this.pendingLines.set(ts, lines);
    }
    r.values[param] = value;
    lines[param] = line;
  }

  /**
   * The readings no later row can add to (those before the newest row's stamp, or all at the end) in
   * time order, and the errors since the last batch.
   */
  private take(all: boolean): HistoryBatch {
    let out: Reading[] = [];
    const lines: Record<string, number>[] = [];
    if (this.pending.size > 0) {
      const sorted = [...this.pending.values()].sort((a, b) => a.ts - b.ts);
      let n = all ? sorted.length : sorted.findIndex((r) => r.ts >= this.newestRow);
      if (n < 0) n = sorted.length;
      n = Math.max(n, sorted.length - MAX_PENDING);
      out = sorted.slice(0, n);
      for (const r of out) {
        this.pending.delete(r.ts);
        lines.push(this.pendingLines.get(r.ts) ?? {});
        this.pendingLines.delete(r.ts);
      }
    }
    if (out.length > 0) {
      this.stats.readings += out.length;
      const first = out[0]!.ts;
      const last = out[out.length - 1]!.ts;
      if (this.stats.first === undefined || first < this.stats.first) this.stats.first = first;
      if (this.stats.last === undefined || last > this.stats.last) this.stats.last = last;
    }
    const errors = this.errors;
    this.errors = [];
    return { readings: out, errors, lines };
  }
}

/**
 * Parses a history file from a stream of chunks (a Node stream, a web ReadableStream's chunks, strings):
 * one batch per chunk that completed readings or errors, and a last one at the end. Returns the summary.
 */
export async function* parseHistory(
  source: AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>,
  options: HistoryImportOptions,
): AsyncGenerator<HistoryBatch, HistorySummary> {
  const parser = new HistoryParser(options);
  for await (const chunk of source) {
    const batch = parser.feed(chunk);
    if (batch.readings.length > 0 || batch.errors.length > 0) yield batch;
  }
  const last = parser.finish();
  if (last.readings.length > 0 || last.errors.length > 0) yield last;
  return parser.summary;
}
