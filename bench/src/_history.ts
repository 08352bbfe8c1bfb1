/**
 * History from a file for the benches that run against stored history (`pnpm bench query`, `rollup`,
 * `export`): `--history FILE [--history-format kilowatch|csv|line-protocol] [--mapping JSON|@file]
 * [--zone ZONE] [--source-device NAME] [--precision ns|us|ms|s] [--encoding ENC]`, the options of
 * POST /api/devices/:id/imports (docs/api.md §History import). The file is read by Kilowatch's own import
 * parser (core `HistoryParser`, docs/domain.md §Importing history), a chunk at a time, once per bench
 * device, and handed to the store in batches as the synthetic readings are.
 *
 * Devices: each device of a Kilowatch export of several devices is a bench device of its own (file
 * order); a file of one device or series (any CSV or line-protocol file, or `--source-device`) is copied
 * to every bench device under that device's key, so answers over several devices still have them.
 * `--devices N` takes the first N of the file's devices, and repeats them in order when N is larger.
 * The bench's time range is the file's: from the UTC hour of its first reading to the end of the hour of
 * its last.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import {
  DAY_MS,
  HistoryImportError,
  type HistoryImportOptions,
  HistoryParser,
  type HistoryRowError,
  type HistorySummary,
  HOUR_MS,
  type Reading,
} from '@kilowatch/core';
import { strArg } from './_args.ts';

export const HISTORY_FORMATS = ['kilowatch', 'csv', 'line-protocol'] as const;
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** What `--history` and the options beside it name. */
export interface HistoryFile {
  path: string;
  format: HistoryFormat;
  /** A CSV or line-protocol mapping (core `CsvMapping`, `LineProtocolMapping`). */
  mapping?: Record<string, unknown>;
  /** The zone of local stamps (or local days) when the mapping names none. */
  zone?: string;
  /** The one device of a Kilowatch export of several to read. */
  sourceDevice?: string;
  /** A line-protocol file's timestamp unit when the mapping names none. */
  precision?: string;
  encoding?: string;
}

/** A file ready to be read: its size and the devices of it the bench devices take in turn. */
export interface HistoryPlan {
  file: HistoryFile;
  bytes: number;
  /** A Kilowatch export's device names in file order, or `[undefined]`: one device or series. */
  sources: (string | undefined)[];
}

/** What one pass over the file gave one bench device. */
export interface HistoryPass {
  deviceKey: string;
  source: string | null;
  rows: number;
  readings: number;
  duplicates: number;
  rejected: number;
  first: number | null;
  last: number | null;
}

/** The history a bench ran on, for its JSON result. */
export interface HistoryUsed {
  file: string;
  path: string;
  format: HistoryFormat;
  fileMB: number;
  /** The file's devices the bench devices took their readings from (null: the file's one series). */
  sourceDevices: (string | null)[];
  benchDevices: number;
  /** Data rows read and readings stored over every bench device's pass. */
  rows: number;
  readings: number;
  duplicates: number;
  rejected: number;
  /** The first and last reading stored (ISO), and the bench's range around them. */
  firstReading: string | null;
  lastReading: string | null;
  from: string;
  to: string;
  days: number;
  /** Time spent in the parser (all passes). */
  parseSeconds: number;
}

/** Tallies the passes over one file: ranges, counts, the first row errors. */
export class HistoryTally {
  readonly passes: HistoryPass[] = [];
  readonly errors: HistoryRowError[] = [];
  seconds = 0;
  constructor(readonly plan: HistoryPlan) {}

  /** The bench's range: the UTC hour of the first reading to the end of the last reading's hour. */
  range(): { from: number; to: number } {
    const firsts = this.passes.flatMap((p) => (p.first === null ? [] : [p.first]));
    const lasts = this.passes.flatMap((p) => (p.last === null ? [] : [p.last]));
    if (firsts.length === 0) throw new Error(`${this.plan.file.path}: the file gave no readings`);
    const first = Math.min(...firsts);
    const last = Math.max(...lasts);
    return {
      from: Math.floor(first / HOUR_MS) * HOUR_MS,
      to: Math.floor(last / HOUR_MS) * HOUR_MS + HOUR_MS,
    };
  }

  /** Bench device `index`'s readings under `deviceKey`, in batches of `batch` (`historyReadings`). */
  readings(index: number, deviceKey: string, batch: number): AsyncGenerator<Reading[]> {
    return historyReadings(this, index, deviceKey, batch);
  }

  /** What the passes gave, told on stderr too (with the first row errors). */
  report(): HistoryUsed {
    const used = this.used();
    process.stderr.write(describeHistory(used, this.errors));
    return used;
  }

  used(): HistoryUsed {
    const { from, to } = this.range();
    const sum = (k: 'rows' | 'readings' | 'duplicates' | 'rejected') =>
      this.passes.reduce((s, p) => s + p[k], 0);
    const firsts = this.passes.flatMap((p) => (p.first === null ? [] : [p.first]));
    const lasts = this.passes.flatMap((p) => (p.last === null ? [] : [p.last]));
    const f = this.plan.file;
    return {
      file: path.basename(f.path),
      path: path.resolve(f.path),
      format: f.format,
      fileMB: +(this.plan.bytes / 1e6).toFixed(1),
      sourceDevices: this.passes.map((p) => p.source),
      benchDevices: this.passes.length,
      rows: sum('rows'),
      readings: sum('readings'),
      duplicates: sum('duplicates'),
      rejected: sum('rejected'),
      firstReading: firsts.length ? new Date(Math.min(...firsts)).toISOString() : null,
      lastReading: lasts.length ? new Date(Math.max(...lasts)).toISOString() : null,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      days: +((to - from) / DAY_MS).toFixed(3),
      parseSeconds: +this.seconds.toFixed(2),
    };
  }
}

function mappingArg(text: string): Record<string, unknown> {
  const json = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
  let mapping: unknown;
  try {
    mapping = JSON.parse(json);
  } catch (e) {
    throw new Error(`--mapping is not JSON: ${(e as Error).message}`);
  }
  if (mapping === null || typeof mapping !== 'object' || Array.isArray(mapping))
    throw new Error('--mapping is a JSON object');
  return mapping as Record<string, unknown>;
}

/** The options `historyArg` reads, each with a value. */
export const HISTORY_OPTIONS: readonly string[] = [
  '--history',
  '--history-format',
  '--mapping',
  '--zone',
  '--source-device',
  '--precision',
  '--encoding',
];

/** `--history FILE` and the options beside it, or undefined without `--history`. */
export function historyArg(args: readonly string[]): HistoryFile | undefined {
  const a = args as string[];
  const file = strArg(a, 'history');
  if (file === undefined) return undefined;
  if (file === '' || file.startsWith('--')) throw new Error('--history needs a file');
  const format = (strArg(a, 'history-format') ?? 'kilowatch') as HistoryFormat;
  if (!HISTORY_FORMATS.includes(format))
    throw new Error(`--history-format is ${HISTORY_FORMATS.join(', ')}, not '${format}'`);
  const mapping = strArg(a, 'mapping');
  if (format !== 'kilowatch' && mapping === undefined)
    throw new Error(`a ${format} history needs --mapping (JSON, or @file)`);
  const out: HistoryFile = { path: file, format };
  if (mapping !== undefined) out.mapping = mappingArg(mapping);
  for (const [name, key] of [
    ['zone', 'zone'],
    ['source-device', 'sourceDevice'],
    ['precision', 'precision'],
    ['encoding', 'encoding'],
  ] as const) {
    const v = strArg(a, name);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** The parser's options for one device's pass, as the API builds them from its query parameters. */
export function parserOptions(
  file: HistoryFile,
  deviceKey: string,
  sourceDevice: string | undefined,
): HistoryImportOptions {
  const common = { deviceKey, ...(file.encoding !== undefined ? { encoding: file.encoding } : {}) };
  if (file.format === 'kilowatch')
    return { ...common, format: 'kilowatch', ...(sourceDevice !== undefined ? { sourceDevice } : {}) };
  let mapping = { ...file.mapping };
  if (file.zone !== undefined && mapping.zone === undefined && mapping.offset === undefined)
    mapping = { ...mapping, zone: file.zone };
  if (file.format === 'csv') return { ...common, format: 'csv', mapping: mapping as never };
  if (file.precision !== undefined && mapping.precision === undefined)
    mapping = { ...mapping, precision: file.precision };
  return { ...common, format: 'line-protocol', mapping: mapping as never };
}

const CHUNK = 256 * 1024;
/** A device name no export holds: a pass that reads no row of any device, only their names. */
const NO_DEVICE = '\u0000';

/**
 * Checks the options and, for a Kilowatch export, lists its devices (a pass that decodes no values).
 * Problems with the options or the file throw before any store is made.
 */
export async function planHistory(file: HistoryFile): Promise<HistoryPlan> {
  const bytes = (await stat(file.path)).size;
  const probe = '000000000000';
  new HistoryParser(parserOptions(file, probe, file.sourceDevice));
  if (file.format !== 'kilowatch' || file.sourceDevice !== undefined)
    return { file, bytes, sources: [file.sourceDevice] };
  const parser = new HistoryParser(parserOptions(file, probe, NO_DEVICE));
  for await (const chunk of createReadStream(file.path, { highWaterMark: CHUNK }))
    parser.feed(chunk as Buffer);
  try {
    parser.finish();
  } catch (e) {
    // Its end says that no row was of the device the pass asked for: expected here.
    if (!(e instanceof HistoryImportError) || e.line !== undefined) throw e;
  }
  const devices = parser.summary.devices;
  if (devices.length === 0) throw new Error(`${file.path}: the Kilowatch export has no readings`);
  return { file, bytes, sources: devices };
}

/**
 * How many bench devices a file fills: `requested` when given (`--devices`), else every device of a
 * Kilowatch export of several, else `fallback`; at least `min`.
 */
export function historyDevices(
  plan: HistoryPlan,
  requested: number | undefined,
  fallback: number,
  min = 1,
): number {
  const n = requested ?? (plan.sources.length > 1 ? plan.sources.length : fallback);
  return Math.max(min, Math.floor(n));
}

/**
 * Bench device `index`'s readings from the file under `deviceKey`, in batches of `batch`: one streamed
 * pass, the file's device `index` (mod the file's devices). Row errors are counted, the first kept.
 */
export async function* historyReadings(
  tally: HistoryTally,
  index: number,
  deviceKey: string,
  batch: number,
): AsyncGenerator<Reading[]> {
  const { plan } = tally;
  const source = plan.sources[index % plan.sources.length];
  const parser = new HistoryParser(parserOptions(plan.file, deviceKey, source));
  const pass: HistoryPass = {
    deviceKey,
    source: source ?? null,
    rows: 0,
    readings: 0,
    duplicates: 0,
    rejected: 0,
    first: null,
    last: null,
  };
  tally.passes.push(pass);
  let out: Reading[] = [];
  const take = (readings: Reading[], errors: HistoryRowError[], summary: HistorySummary) => {
    for (const e of errors) if (tally.errors.length < 5) tally.errors.push(e);
    pass.rows = summary.rows;
    pass.readings = summary.readings;
    pass.duplicates = summary.duplicates;
    pass.rejected = summary.errors;
    pass.first = summary.first ?? null;
    pass.last = summary.last ?? null;
    for (const r of readings) out.push(r);
  };
  for await (const chunk of createReadStream(plan.file.path, { highWaterMark: CHUNK })) {
    const t = performance.now();
    const b = parser.feed(chunk as Buffer);
    tally.seconds += (performance.now() - t) / 1000;
    take(b.readings, b.errors, parser.summary);
    if (out.length >= batch) {
      const full = out;
      out = [];
      yield full;
    }
  }
  const t = performance.now();
  const b = parser.finish();
  tally.seconds += (performance.now() - t) / 1000;
  take(b.readings, b.errors, parser.summary);
  if (out.length) yield out;
}

/** One line for stderr about the history a bench ran on. */
export function describeHistory(used: HistoryUsed, errors: readonly HistoryRowError[]): string {
  const from = used.sourceDevices.some((s) => s !== null)
    ? `devices ${[...new Set(used.sourceDevices)].map((s) => `'${s}'`).join(', ')}`
    : 'its one series';
  const lines = [
    `history ${used.file} (${used.format}, ${used.fileMB} MB): ${used.readings} readings from ${from} on ${used.benchDevices} bench devices, ${used.firstReading} to ${used.lastReading}, ${used.rejected} row errors`,
    ...errors.map((e) => `  line ${e.line}${e.column ? ` (${e.column})` : ''}: ${e.reason}`),
  ];
  return `${lines.join('\n')}\n`;
}
