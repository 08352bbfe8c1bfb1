/**
 * The formats a history import reads, each a decoder of lines into rows (docs/domain.md §Importing
 * history): Kilowatch's own CSV export, a CSV file with a column mapping, and InfluxDB line protocol.
 */
import { checkValue, isStoredParam, paramDef } from '../params.ts';
import { parseProtocolLine, protocolInstant } from './lineProtocol.ts';
import { energyExact, fromExact, normalizeNumber } from './numbers.ts';
import { instantProblem, type StampParser, type StampResolver, stampParser } from './stamps.ts';
import { type CsvRecord, CsvRecordReader, type TextLine } from './text.ts';
import {
  type ColumnRef,
  type CsvMapping,
  type DecodedRow,
  type EnergyUnit,
  HistoryImportError,
  type LineProtocolMapping,
  type RowSink,
  type ValueKind,
} from './types.ts';

export interface Decoder {
  line(l: TextLine, sink: RowSink): void;
  end(sink: RowSink): void;
}

const TRUNCATED = ' (the last line ends without a line break: the file may be truncated)';

function hint(terminated: boolean): string {
  return terminated ? '' : TRUNCATED;
}

interface ValueSpec {
  param: string;
  unit?: EnergyUnit;
  kind: ValueKind;
}

/** Problems with the parameters, units and kinds a mapping names. */
export function valueSpecProblems(
  specs: readonly { param: string; unit?: string; kind?: string }[],
  problems: string[],
): void {
  if (specs.length === 0) problems.push('the mapping names no values');
  const seen = new Set<string>();
  for (const s of specs) {
    const def = paramDef(s.param);
    if (!def) {
      problems.push(`unknown parameter '${s.param}'`);
      continue;
    }
    if (seen.has(s.param)) problems.push(`parameter '${s.param}' is mapped twice`);
    seen.add(s.param);
    if (s.unit !== undefined) {
      if (s.unit !== 'Wh' && s.unit !== 'kWh')
        problems.push(`unit '${s.unit}' of ${s.param} is not Wh or kWh`);
      else if (def.unit !== 'kWh' && def.unit !== 'kvarh')
        problems.push(`${s.param} is in ${def.unit || 'no unit'}: it takes no energy unit`);
    }
    if (s.kind !== undefined && s.kind !== 'counter' && s.kind !== 'interval')
      problems.push(`kind '${s.kind}' of ${s.param} is not counter or interval`);
    if (s.kind === 'interval' && def.kind !== 'counter')
      problems.push(`${s.param} is a ${def.kind}, not an energy counter: it cannot take interval energies`);
  }
}

/** Puts one value into the row, or gives the reason it cannot be taken. */
function decodeValue(spec: ValueSpec, normalized: string, row: DecodedRow): string | undefined {
  const def = paramDef(spec.param)!;
  if (spec.kind === 'interval') {
    const exact = energyExact(normalized, spec.unit);
    const value = fromExact(exact);
    if (value < 0 && def.min >= 0)
      return `negative energy ${value} ${def.unit} for ${spec.param}: an interval's energy cannot be negative`;
    row.intervals[spec.param] = { value, exact };
    return undefined;
  }
  const value = spec.unit ? fromExact(energyExact(normalized, spec.unit)) : Number(normalized);
  const check = checkValue(spec.param, value);
  if (!check.ok) {
    if (check.reason === 'not-finite') return `${spec.param} is not a finite number`;
    return `${value} is outside the range of ${spec.param} (${def.min} to ${def.max}${def.unit ? ` ${def.unit}` : ''})`;
  }
  row.values[spec.param] = value;
  return undefined;
}

function emptyRow(line: number, ts: number): DecodedRow {
  return { line, ts, values: {}, intervals: {} };
}

function hasValues(row: DecodedRow): boolean {
  for (const _ in row.values) return true;
  for (const _ in row.intervals) return true;
  return false;
}

/** A text cell of the export: a leading apostrophe guarding a formula character is not part of it. */
function unguard(cell: string): string {
  return /^'[=+\-@\t\r]/.test(cell) ? cell.slice(1) : cell;
}

/**
 * Kilowatch's CSV export (api/src/exports/files.ts): a row of labels (`Time (UTC)`, …), a row of codes
 * (`timestamp_utc`, `timestamp_local (<zone>)`, `device`, parameter codes), then one row per reading with
 * the UTC stamp `YYYY-MM-DD HH:mm:ss`, the local stamp, the device's name and the values, an empty cell
 * where a parameter was not reported. Several exports one after another (several devices) are read too:
 * each header row sets the columns of the rows after it.
 */

/**
 * The CSV record a line completes, or null: while a quoted cell runs on, after a broken record (reported
 * as a row error), and for an empty one (counted as skipped).
 */
function nextRecord(records: CsvRecordReader, l: TextLine, sink: RowSink): CsvRecord | null {
  const r = records.take(l);
  if (r === 'open') return null;
  if ('reason' in r) {
    sink.error({ line: r.line, reason: r.reason });
    return null;
  }
  if (r.cells.every((c) => c.trim() === '')) {
    sink.skip();
    return null;
  }
  return r;
}

export class KilowatchDecoder implements Decoder {
  private readonly records = new CsvRecordReader(',');
  private readonly utc: StampParser = stampParser('iso') as StampParser;
  private columns: (string | null)[] | undefined;
  private chosen: string | undefined;
  readonly devices: string[] = [];

  constructor(
    private readonly clock: StampResolver,
    private readonly sourceDevice: string | undefined,
  ) {}

  line(l: TextLine, sink: RowSink): void {
    const r = nextRecord(this.records, l, sink);
    if (!r) return;
    const first = r.cells[0]!.trim();
    if (first === 'Time (UTC)') return;
    if (first === 'timestamp_utc') {
      this.header(r, sink);
      return;
    }
    this.row(r, sink);
  }

  end(sink: RowSink): void {
    const open = this.records.end();
    if (open) sink.error(open);
    if (this.sourceDevice !== undefined && !this.devices.includes(this.sourceDevice)) {
      const held = this.devices.length
        ? `it holds ${this.devices.map((d) => `'${d}'`).join(', ')}`
        : 'it has no rows';
      throw new HistoryImportError([`the file has no readings of device '${this.sourceDevice}': ${held}`]);
    }
  }

  private header(r: CsvRecord, sink: RowSink): void {
    const cells = r.cells.map((c) => c.trim());
    if (!cells[1]?.startsWith('timestamp_local') || cells[2] !== 'device')
      throw new HistoryImportError(
        ['not a Kilowatch export header: expected timestamp_utc, timestamp_local (<zone>), device, …'],
        r.line,
      );
    this.columns = cells.slice(3).map((code) => {
      if (isStoredParam(code)) return code;
      sink.error({
        line: r.line,
        column: code,
        reason: `unknown parameter '${code}': the column is left out`,
      });
      return null;
    });
  }

  private row(r: CsvRecord, sink: RowSink): void {
    const columns = this.columns;
    if (!columns)
      throw new HistoryImportError(
        ['not a Kilowatch export: no header row of codes (timestamp_utc, …) before the first reading'],
        r.line,
      );
    const want = columns.length + 3;
    if (r.cells.length !== want) {
      const which = r.cells.length < want ? 'too few' : 'too many';
      sink.error({
        line: r.line,
        reason: `${which} columns: ${r.cells.length} of ${want}${hint(r.terminated)}`,
      });
      return;
    }
    const device = unguard(r.cells[2]!);
    if (!this.devices.includes(device)) this.devices.push(device);
    if (this.sourceDevice !== undefined) {
      if (device !== this.sourceDevice) {
        sink.skip();
        return;
      }
    } else if (this.chosen === undefined) this.chosen = device;
    else if (device !== this.chosen)
      throw new HistoryImportError(
        [
          `the file holds readings of several devices (${this.devices.map((d) => `'${d}'`).join(', ')}): choose one with sourceDevice`,
        ],
        r.line,
      );
    const text = r.cells[0]!.trim();
    const at = this.clock.resolve(this.utc(text), text);
    if ('error' in at) {
      sink.error({ line: r.line, column: 'timestamp_utc', reason: at.error + hint(r.terminated) });
      return;
    }
    const row = emptyRow(r.line, at.ts);
    for (const [i, param] of columns.entries()) {
      if (param === null) continue;
      const cell = r.cells[i + 3]!.trim();
      if (cell === '') continue;
      const n = normalizeNumber(cell, '.');
      const problem =
        n === undefined ? `bad number '${cell}'` : decodeValue({ param, kind: 'counter' }, n, row);
      if (problem) {
        sink.error({ line: r.line, column: param, reason: problem + hint(r.terminated) });
        return;
      }
    }
    if (hasValues(row)) sink.row(row);
    else sink.skip();
  }
}

interface ResolvedColumns {
  stamp: number[];
  values: { index: number; spec: ValueSpec }[];
  labels: string[];
  /** Columns a row must have. */
  need: number;
}

/** Problems with a CSV mapping's own settings. */
export function csvMappingProblems(m: CsvMapping, problems: string[]): void {
  const sep = m.separator ?? ',';
  if (sep !== ',' && sep !== ';' && sep !== '\t')
    problems.push(`separator '${sep}' is not ',', ';' or a tab`);
  const dec = m.decimal ?? '.';
  if (dec !== '.' && dec !== ',') problems.push(`decimal '${dec}' is not '.' or ','`);
  if (dec === sep) problems.push('the decimal comma cannot also separate the columns');
  const refs = [...[m.timestamp?.column ?? []].flat(), ...(m.values ?? []).map((v) => v.column)];
  if (!m.timestamp || refs.length === 0) problems.push('the mapping names no timestamp column');
  for (const ref of refs) {
    if (typeof ref === 'number' && !(Number.isInteger(ref) && ref >= 1))
      problems.push(`column ${ref} is not a position from 1`);
    if (typeof ref === 'string' && m.header === false)
      problems.push(`column '${ref}' is named, but the file has no header: give its position from 1`);
  }
  const parser = m.timestamp ? stampParser(m.timestamp.format) : undefined;
  if (typeof parser === 'string') problems.push(parser);
  valueSpecProblems(m.values ?? [], problems);
}

/** A CSV file with a mapping of its columns to the stamp and to parameters. */
export class CsvDecoder implements Decoder {
  private readonly records: CsvRecordReader;
  private readonly stamp: StampParser;
  private columns: ResolvedColumns | undefined;

  constructor(
    private readonly mapping: CsvMapping,
    private readonly clock: StampResolver,
  ) {
    this.records = new CsvRecordReader(mapping.separator ?? ',');
    this.stamp = stampParser(mapping.timestamp.format) as StampParser;
    if (mapping.header === false) this.columns = this.resolve(undefined, 0);
  }

  line(l: TextLine, sink: RowSink): void {
    const r = nextRecord(this.records, l, sink);
    if (!r) return;
    if (!this.columns) {
      this.columns = this.resolve(
        r.cells.map((c) => c.trim()),
        r.line,
      );
      return;
    }
    this.row(r, this.columns, sink);
  }

  end(sink: RowSink): void {
    const open = this.records.end();
    if (open) sink.error(open);
  }

  private resolve(header: string[] | undefined, line: number): ResolvedColumns {
    const problems: string[] = [];
    const labels: string[] = header ? [...header] : [];
    const indexOf = (ref: ColumnRef): number => {
      if (typeof ref === 'number') {
        if (header && ref > header.length)
          problems.push(`column ${ref}: the header has ${header.length} columns`);
        while (labels.length < ref) labels.push(String(labels.length + 1));
        return ref - 1;
      }
      const h = header ?? [];
      let i = h.indexOf(ref.trim());
      if (i < 0) i = h.findIndex((name) => name.toLowerCase() === ref.trim().toLowerCase());
      if (i < 0)
        problems.push(`column '${ref}' is not in the header (it has ${h.map((n) => `'${n}'`).join(', ')})`);
      return i;
    };
    const stamp = [this.mapping.timestamp.column].flat().map(indexOf);
    const values = this.mapping.values.map((v) => ({
      index: indexOf(v.column),
      spec: { param: v.param, kind: v.kind ?? 'counter', ...(v.unit ? { unit: v.unit } : {}) },
    }));
    if (problems.length > 0) throw new HistoryImportError(problems, line || undefined);
    const need = Math.max(...stamp, ...values.map((v) => v.index)) + 1;
    return { stamp, values, labels, need };
  }

  private row(r: CsvRecord, cols: ResolvedColumns, sink: RowSink): void {
    if (r.cells.length < cols.need) {
      sink.error({
        line: r.line,
        column: cols.labels[r.cells.length],
        reason: `too few columns: ${r.cells.length}, the mapping reads ${cols.need}${hint(r.terminated)}`,
      });
      return;
    }
    const text = cols.stamp.map((i) => r.cells[i]!.trim()).join(' ');
    const at = this.clock.resolve(this.stamp(text), text);
    if ('error' in at) {
      sink.error({
        line: r.line,
        column: cols.stamp.map((i) => cols.labels[i]).join(' + '),
        reason: at.error + hint(r.terminated),
      });
      return;
    }
    const row = emptyRow(r.line, at.ts);
    const decimal = this.mapping.decimal ?? '.';
    for (const { index, spec } of cols.values) {
      const cell = r.cells[index]!.trim();
      if (cell === '') continue;
      const n = normalizeNumber(cell, decimal);
      const problem = n === undefined ? `bad number '${cell}'` : decodeValue(spec, n, row);
      if (problem) {
        sink.error({ line: r.line, column: cols.labels[index], reason: problem + hint(r.terminated) });
        return;
      }
    }
    if (hasValues(row)) sink.row(row);
    else sink.skip();
  }
}

/** Problems with a line-protocol mapping's own settings. */
export function lineProtocolMappingProblems(m: LineProtocolMapping, problems: string[]): void {
  const p = m.precision ?? 'ns';
  if (!['ns', 'us', 'ms', 's'].includes(p)) problems.push(`precision '${p}' is not ns, us, ms or s`);
  const keys = new Set<string>();
  for (const f of m.fields ?? []) {
    const key = `${f.measurement ?? ''}\u0000${f.field}`;
    if (keys.has(key)) problems.push(`field '${f.field}' is mapped twice`);
    keys.add(key);
  }
  valueSpecProblems(m.fields ?? [], problems);
}

/** InfluxDB line protocol with a mapping of measurement and field to parameters. */
export class LineProtocolDecoder implements Decoder {
  private readonly specs = new Map<string, ValueSpec>();

  constructor(private readonly mapping: LineProtocolMapping) {
    for (const f of mapping.fields)
      this.specs.set(`${f.measurement ?? ''}\u0000${f.field}`, {
        param: f.param,
        kind: f.kind ?? 'counter',
        ...(f.unit ? { unit: f.unit } : {}),
      });
  }

  line(l: TextLine, sink: RowSink): void {
    const t = l.text.trim();
    if (t === '' || t.startsWith('#')) {
      sink.skip();
      return;
    }
    const p = parseProtocolLine(l.text);
    if (typeof p === 'string') {
      sink.error({ line: l.line, reason: `not line protocol: ${p}${hint(l.terminated)}` });
      return;
    }
    for (const [k, v] of Object.entries(this.mapping.tags ?? {})) {
      if (p.tags[k] !== v) {
        sink.skip();
        return;
      }
    }
    const mapped = p.fields
      .map(([field, value]) => ({
        field,
        value,
        spec: this.specs.get(`${p.measurement}\u0000${field}`) ?? this.specs.get(`\u0000${field}`),
      }))
      .filter((f) => f.spec !== undefined);
    if (mapped.length === 0) {
      sink.skip();
      return;
    }
    if (p.timestamp === undefined) {
      sink.error({
        line: l.line,
        reason: `no timestamp: every imported line needs one${hint(l.terminated)}`,
      });
      return;
    }
    const ts = protocolInstant(p.timestamp, this.mapping.precision ?? 'ns');
    const problem = instantProblem(ts, p.timestamp);
    if (problem) {
      sink.error({ line: l.line, reason: problem + hint(l.terminated) });
      return;
    }
    const row = emptyRow(l.line, ts);
    for (const { field, value, spec } of mapped) {
      let reason: string | undefined;
      if (value.type === 'string') reason = `field '${field}' holds a string, not a number`;
      else reason = decodeValue(spec!, value.type === 'number' ? value.text : value.value ? '1' : '0', row);
      if (reason) {
        sink.error({ line: l.line, column: field, reason: reason + hint(l.terminated) });
        return;
      }
    }
    sink.row(row);
  }

  end(): void {}
}
