/**
 * What the import screen shows of a picked file before anything is sent: its first rows split into the
 * columns it has, the format it looks like and a first guess at the mapping (docs/domain.md §Importing
 * history). Only the file's head is read; the server parses the whole file with the same rules.
 */
import type { CsvMapping, ImportFormat, LineProtocolMapping } from '@kilowatch/core';

/** Bytes of the file read for the preview. */
export const HEAD_BYTES = 64 * 1024;
/** Rows the preview shows. */
export const PREVIEW_ROWS = 20;

export type Separator = ',' | ';' | '\t';
export type DecimalMark = '.' | ',';

/** The head of a file as whole lines: a line cut by the head's end is left out. */
export function headLines(text: string, whole: boolean): string[] {
  const body = text.replace(/^\uFEFF/, '');
  const lines = body.split(/\r?\n/);
  if (!whole) lines.pop();
  return lines.filter((l) => l.trim() !== '');
}

/** Splits one CSV line at `sep`, honouring double quotes (`""` inside quotes is a quote). */
export function splitCsvLine(line: string, sep: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) {
      cells.push(cell);
      cell = '';
    } else cell += c;
  }
  cells.push(cell);
  return cells.map((x) => x.trim());
}

/** The separator a line uses most, outside quotes (`,` when it has none). */
export function detectSeparator(line: string): Separator {
  const counts: Record<Separator, number> = { ',': 0, ';': 0, '\t': 0 };
  let quoted = false;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ',' || c === ';' || c === '\t')) counts[c]++;
  }
  const best = (Object.entries(counts) as [Separator, number][]).sort((a, b) => b[1] - a[1])[0]!;
  return best[1] > 0 ? best[0] : ',';
}

const PROTOCOL_LINE = /^[^\s#,][^\s]*\s+[^\s=]+=[^\s]+(\s+-?\d+)?$/;

/** The format the file looks like: Kilowatch's own export, InfluxDB line protocol, else a CSV to map. */
export function detectFormat(lines: readonly string[]): ImportFormat {
  const first = lines.find((l) => !l.startsWith('#'));
  if (!first) return 'csv';
  if (lines.some((l) => /^"?(timestamp_utc|Time \(UTC\))"?[,]/.test(l))) return 'kilowatch';
  const data = lines.filter((l) => !l.startsWith('#')).slice(0, 5);
  if (data.every((l) => PROTOCOL_LINE.test(l.trim()) && !l.includes(';'))) return 'line-protocol';
  return 'csv';
}

export interface PreviewTable {
  columns: string[];
  rows: string[][];
  /** A Kilowatch export's device names, in file order. */
  devices: string[];
  /** Line protocol: each `measurement.field` met, as the mapping names them. */
  fields: { measurement: string; field: string }[];
}

/** Splits a line-protocol line into measurement, tags, fields and time (escapes are kept as written). */
export function splitProtocolLine(line: string): [string, string, string, string] {
  const parts = line.trim().split(/(?<!\\) +/);
  const [series = '', fieldSet = '', time = ''] = parts;
  const comma = series.search(/(?<!\\),/);
  const measurement = comma < 0 ? series : series.slice(0, comma);
  const tags = comma < 0 ? '' : series.slice(comma + 1);
  return [measurement, tags, fieldSet, time];
}

/** The first rows of the file as a table, for the format it is read as. */
export function previewTable(lines: readonly string[], format: ImportFormat, sep: Separator): PreviewTable {
  if (format === 'line-protocol') {
    const data = lines.filter((l) => !l.startsWith('#'));
    const rows = data.slice(0, PREVIEW_ROWS).map(splitProtocolLine);
    const fields = new Map<string, { measurement: string; field: string }>();
    for (const [measurement, , fieldSet] of data.map(splitProtocolLine))
      for (const pair of fieldSet.split(/(?<!\\),/)) {
        const field = pair.split('=')[0] ?? '';
        if (field) fields.set(`${measurement}\u0000${field}`, { measurement, field });
      }
    return {
      columns: ['measurement', 'tags', 'fields', 'time'],
      rows,
      devices: [],
      fields: [...fields.values()],
    };
  }
  if (format === 'kilowatch') {
    const records = lines.map((l) => splitCsvLine(l, ','));
    const header = records.find((r) => r[0] === 'timestamp_utc') ?? [];
    const data = records.filter((r) => r[0] !== 'timestamp_utc' && r[0] !== 'Time (UTC)');
    const devices = [...new Set(data.map((r) => r[2] ?? '').filter(Boolean))];
    return { columns: header, rows: data.slice(0, PREVIEW_ROWS), devices, fields: [] };
  }
  const records = lines.map((l) => splitCsvLine(l, sep));
  const [header = [], ...data] = records;
  return { columns: header, rows: data.slice(0, PREVIEW_ROWS), devices: [], fields: [] };
}

/** Stamp formats offered for a CSV's time column; any other pattern may be typed. */
export const STAMP_FORMATS = [
  'iso',
  'YYYY-MM-DD HH:mm[:ss]',
  'DD.MM.YYYY HH:mm[:ss]',
  'DD/MM/YYYY HH:mm[:ss]',
  'epoch-s',
  'epoch-ms',
] as const;

/** The stamp format a cell is written in, as far as one cell tells. */
export function guessStampFormat(cell: string): string | null {
  const c = cell.trim();
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(c)) return 'iso';
  if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(c)) return 'YYYY-MM-DD HH:mm[:ss]';
  if (/^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}(:\d{2})?$/.test(c)) return 'DD.MM.YYYY HH:mm[:ss]';
  if (/^\d{2}\/\d{2}\/\d{4} \d{2}:\d{2}(:\d{2})?$/.test(c)) return 'DD/MM/YYYY HH:mm[:ss]';
  if (/^\d{13}$/.test(c)) return 'epoch-ms';
  if (/^\d{9,10}$/.test(c)) return 'epoch-s';
  return null;
}

/** A CSV value column as the screen edits it; `param` '' leaves the column out. */
export interface ValueColumn {
  column: string;
  param: string;
  /** `counter-kWh`, `counter-Wh`, `interval-kWh`, `interval-Wh`; gauges take `counter-kWh` and ignore it. */
  reading: 'counter-kWh' | 'counter-Wh' | 'interval-kWh' | 'interval-Wh';
}

export interface CsvForm {
  timestampColumn: string;
  stampFormat: string;
  zone: string;
  separator: Separator;
  decimal: DecimalMark;
  /** Minutes, or `day`, of an interval energy; and whether its stamp is the interval's start or end. */
  interval: string;
  intervalStamp: 'start' | 'end';
  values: ValueColumn[];
}

/** The screen's first guess: the column whose cells read as stamps, every other column still unmapped. */
export function guessCsvForm(table: PreviewTable, sep: Separator, zone: string): CsvForm {
  const { columns, rows } = table;
  let timestampColumn = columns[0] ?? '';
  let stampFormat = 'iso';
  for (const [i, name] of columns.entries()) {
    const format = guessStampFormat(rows[0]?.[i] ?? '');
    if (format) {
      timestampColumn = name;
      stampFormat = format;
      break;
    }
  }
  const decimal: DecimalMark =
    sep !== ',' && rows.some((r) => r.some((c) => /^-?\d+,\d+$/.test(c))) ? ',' : '.';
  return {
    timestampColumn,
    stampFormat,
    zone,
    separator: sep,
    decimal,
    interval: '60',
    intervalStamp: 'end',
    values: columns
      .filter((c) => c !== timestampColumn)
      .map((column) => ({ column, param: '', reading: 'counter-kWh' })),
  };
}

/** The mapping the form describes, in core's `CsvMapping` shape (what `mapping=` sends). */
export function csvMappingOf(form: CsvForm, isEnergy: (param: string) => boolean): CsvMapping {
  const values = form.values
    .filter((v) => v.param !== '')
    .map((v) => {
      if (!isEnergy(v.param)) return { column: v.column, param: v.param };
      const [kind, unit] = v.reading.split('-') as ['counter' | 'interval', 'kWh' | 'Wh'];
      return { column: v.column, param: v.param, unit, kind };
    });
  const intervals = values.some((v) => 'kind' in v && v.kind === 'interval');
  return {
    timestamp: { column: form.timestampColumn, format: form.stampFormat },
    separator: form.separator,
    decimal: form.decimal,
    zone: form.zone,
    ...(intervals
      ? {
          interval: form.interval === 'day' ? ('day' as const) : Number(form.interval),
          stamp: form.intervalStamp,
        }
      : {}),
    values,
  };
}

/** Timestamp units of line protocol. */
export const PRECISIONS = ['ns', 'us', 'ms', 's'] as const;
export type Precision = (typeof PRECISIONS)[number];

/** A line-protocol field as the screen edits it; `param` '' leaves it out. */
export interface FieldMapping {
  measurement: string;
  field: string;
  param: string;
  reading: ValueColumn['reading'];
}

/** The mapping of a line-protocol file, in core's `LineProtocolMapping` shape. */
export function lineProtocolMappingOf(
  fields: readonly FieldMapping[],
  precision: Precision,
  clock: Pick<CsvForm, 'interval' | 'intervalStamp' | 'zone'>,
  isEnergy: (param: string) => boolean,
): LineProtocolMapping {
  const mapped = fields
    .filter((f) => f.param !== '')
    .map((f) => {
      const base = { measurement: f.measurement, field: f.field, param: f.param };
      if (!isEnergy(f.param)) return base;
      const [kind, unit] = f.reading.split('-') as ['counter' | 'interval', 'kWh' | 'Wh'];
      return { ...base, kind, unit };
    });
  const intervals = mapped.some((f) => 'kind' in f && f.kind === 'interval');
  return {
    precision,
    ...(intervals
      ? {
          interval: clock.interval === 'day' ? ('day' as const) : Number(clock.interval),
          stamp: clock.intervalStamp,
          zone: clock.zone,
        }
      : {}),
    fields: mapped,
  };
}
