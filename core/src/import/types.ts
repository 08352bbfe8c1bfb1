/**
 * The shapes of a history import (docs/domain.md §Importing history): what the parser is told, what it
 * hands back batch by batch, and the errors it reports.
 */
import type { Reading } from '../readings.ts';

/** One row the import could not take, with the 1-based line it starts on and, when known, the column. */
export interface HistoryRowError {
  line: number;
  /** The column's header name, or its 1-based position in a file without a header. */
  column?: string;
  reason: string;
}

/** What one `feed` or `finish` produced: readings ready for the store, in time order, and row errors. */
export interface HistoryBatch {
  readings: Reading[];
  errors: HistoryRowError[];
  /**
   * Beside each reading (same index), the 1-based line each of its values came from, by parameter: the
   * row that gave the value, or for an interval energy's register reading the row of that interval (the
   * reading of 0 at the first interval's start included).
   */
  lines: Record<string, number>[];
}

export interface HistorySummary {
  /** Physical lines read. */
  lines: number;
  /** Data rows decoded into values (before duplicates are dropped). */
  rows: number;
  /** Readings handed out. */
  readings: number;
  /** Rows dropped because an earlier row said exactly the same. */
  duplicates: number;
  /** Rows left out on purpose: blank lines, comments, other devices' rows, unmapped fields, empty cells. */
  skipped: number;
  /** Row errors reported. */
  errors: number;
  /** Device names met in a Kilowatch export, in file order. */
  devices: string[];
  /** The file's last line had no line break (it may be truncated). */
  endsWithoutNewline: boolean;
  /** Earliest and latest reading handed out (UTC epoch ms), when any. */
  first?: number;
  last?: number;
}

/** A column of a CSV file: its header name, or its 1-based position. */
export type ColumnRef = string | number;

/**
 * How a timestamp is written: ISO 8601 (an offset in it is used, otherwise the mapping's zone), Unix
 * seconds or milliseconds, or a pattern of `YYYY MM DD HH mm ss SSS Z` (Z: an offset such as +01:00)
 * with `[ ]` around optional parts, e.g. `YYYY-MM-DD HH:mm[:ss]` or `DD.MM.YYYY HH:mm`.
 */
export type StampFormat = 'iso' | 'epoch-s' | 'epoch-ms' | (string & {});

/**
 * A value column is a register reading (`counter`, the default, and every gauge or state parameter) or
 * the energy of one interval (`interval`), which the import turns into register readings.
 */
export type ValueKind = 'counter' | 'interval';
export type EnergyUnit = 'Wh' | 'kWh';

/** How interval energies are stamped and how long an interval is. */
export interface IntervalOptions {
  /** Whether an interval's stamp is its start or its end (default `end`, as utility load profiles). */
  stamp?: 'start' | 'end';
  /** Interval length in minutes (default 60), or `day` for local days of the zone. */
  interval?: number | 'day';
}

/** Where local wall-clock stamps are read: an IANA zone (default Europe/Warsaw) or a fixed offset. */
export interface ClockOptions {
  zone?: string;
  /** A fixed offset east of UTC, `+01:00` or minutes; it replaces the zone. */
  offset?: string | number;
}

export interface CsvValueMapping {
  column: ColumnRef;
  /** A parameter of core's catalogue (docs/domain.md §Parameters). */
  param: string;
  /** The unit the file writes energy in; the catalogue's unit (kWh, kvarh) by default. */
  unit?: EnergyUnit;
  kind?: ValueKind;
}

export interface CsvMapping extends IntervalOptions, ClockOptions {
  timestamp: {
    /** One column, or several whose cells are joined with a space (a date and a time column). */
    column: ColumnRef | readonly ColumnRef[];
    format: StampFormat;
  };
  separator?: ',' | ';' | '\t';
  decimal?: '.' | ',';
  /** Whether the first row names the columns (default true). */
  header?: boolean;
  values: readonly CsvValueMapping[];
}

export interface LineProtocolFieldMapping {
  /** The measurement the field belongs to; any measurement when left out. */
  measurement?: string;
  field: string;
  param: string;
  unit?: EnergyUnit;
  kind?: ValueKind;
}

export interface LineProtocolMapping extends IntervalOptions {
  /** Unit of the line's timestamp (default ns, as InfluxDB writes). */
  precision?: 'ns' | 'us' | 'ms' | 's';
  /** Only lines carrying all these tags are read; others are skipped (one series of several). */
  tags?: Readonly<Record<string, string>>;
  fields: readonly LineProtocolFieldMapping[];
  /** The zone of local days when `interval` is `day`. */
  zone?: string;
}

interface CommonOptions {
  /** The Kilowatch device the readings are imported into. */
  deviceKey: string;
  /** Text encoding of byte chunks (default utf-8; windows-1250 for older Polish portals). */
  encoding?: string;
  /**
   * How many of the most recent stamps are remembered to drop duplicates and find conflicts within the
   * file (default 10,080, a week of minutes): the memory an import holds stays bounded.
   */
  dedupWindow?: number;
}

export type HistoryImportOptions = CommonOptions &
  (
    | { format: 'kilowatch'; sourceDevice?: string }
    | { format: 'csv'; mapping: CsvMapping }
    | { format: 'line-protocol'; mapping: LineProtocolMapping }
  );

/**
 * An import that cannot go on: options that do not make sense, a header that lacks a mapped column, a
 * Kilowatch export holding several devices with none chosen. Readings handed out before it belong to a
 * file that is not imported whole: a job checks a file in one pass and writes it in a second.
 */
export class HistoryImportError extends Error {
  readonly problems: readonly string[];
  readonly line?: number;
  constructor(problems: readonly string[], line?: number) {
    super(line === undefined ? problems.join('; ') : `line ${line}: ${problems.join('; ')}`);
    this.name = 'HistoryImportError';
    this.problems = problems;
    if (line !== undefined) this.line = line;
  }
}

/** A data row after decoding: its stamp and values, before duplicates and intervals are dealt with. */
export interface DecodedRow {
  line: number;
  ts: number;
  /** Register and gauge values in the catalogue's units. */
  values: Record<string, number>;
  /** Interval energies in the catalogue's unit, with the exact amount in 1e-12 of it. */
  intervals: Record<string, { value: number; exact: bigint }>;
}

/** Where a format's decoder puts what it read. */
export interface RowSink {
  row(row: DecodedRow): void;
  error(error: HistoryRowError): void;
  skip(): void;
}
