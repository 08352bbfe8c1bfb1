/**
 * A write batch in columns, built in one pass over the readings: validation, the device dictionary of
 * the batch, one Float64Array and one validity bitmap per parameter present, the time range per device
 * and the newest value of every (device, parameter). No per-value objects or maps: filling DuckDB's data
 * chunks afterwards is a memory copy per column, and a batch laid out in another thread (the MQTT
 * bridge's decode thread) crosses over by moving its arrays.
 */
import { type Reading, PARAM_NAMES as STORED } from '@kilowatch/core';
import { type ColumnBatch, StoreError } from './port.ts';
import {
  isStorableDeviceKey,
  isStorableTs,
  MAX_DEVICE_KEY_LENGTH,
  type ReadingProblem,
  readingHeadProblem,
  valueColumn,
} from './readingCheck.ts';

export type { ColumnBatch } from './port.ts';

function rejected(message: string): StoreError {
  return new StoreError(message, 'rejected');
}

/** The refusal of a batch for its reading `i` (readingCheck.ts says what is wrong with it). */
function refused(i: number, p: ReadingProblem): StoreError {
  switch (p.code) {
    case 'not-a-reading':
      return rejected(`reading ${i}: not a reading object`);
    case 'device-key':
      return rejected(
        `reading ${i}: device key must be a non-empty single-line string of at most ${MAX_DEVICE_KEY_LENGTH} characters without backslashes`,
      );
    case 'ts':
      return rejected(`reading ${i}: ts must be integer epoch milliseconds between 1677 and 2262`);
    case 'values':
      return rejected(`reading ${i}: values must be an object`);
    case 'unknown-parameter':
      return rejected(`reading ${i}: unknown parameter "${p.param}"`);
    case 'not-finite':
      return rejected(`reading ${i}: parameter "${p.param}" must be a finite number`);
  }
}

/**
 * Merges readings that share (device, ts): a later reading's values win, value by value. Only called
 * when the batch is not in time order per device (redeliveries, late data), so the common path never
 * builds per-reading objects.
 */
function mergeDuplicates(readings: readonly Reading[]): Reading[] {
  const byRow = new Map<string, Reading>();
  for (const rd of readings) {
    const k = `${rd.deviceKey}\u0000${rd.ts}`;
    const prev = byRow.get(k);
    if (prev) Object.assign(prev.values, rd.values);
    else byRow.set(k, { deviceKey: rd.deviceKey, ts: rd.ts, values: { ...rd.values } });
  }
  return [...byRow.values()];
}

/**
 * Validates the whole batch (a bad reading refuses it whole, naming the reading) and lays it out in
 * columns. Readings that repeat a (device, ts) of the same batch are merged, the later one winning.
 */
export function columnize(readings: readonly Reading[], merged = false): ColumnBatch {
  const n = readings.length;
  const words = Math.ceil(n / 64) * 2;
  const keys: string[] = [];
  const keyIndex = new Map<string, number>();
  const dev = new Int32Array(n);
  const ts = new Float64Array(n);
  const byName: (Float64Array<ArrayBuffer> | undefined)[] = new Array(STORED.length);
  const validOf: (Uint32Array<ArrayBuffer> | undefined)[] = new Array(STORED.length);
  const counts = new Int32Array(STORED.length);
  const lastTs: number[] = [];
  const minByDev: number[] = [];
  const maxByDev: number[] = [];
  /** Per device: row holding the newest value of each parameter (-1: none yet). */
  const newestRow: Int32Array[] = [];
  let ordered = true;
  let minTs = Number.POSITIVE_INFINITY;
  let maxTs = Number.NEGATIVE_INFINITY;
  let r = 0;
  for (let i = 0; i < n; i++) {
    const rd = readings[i]!;
    // A key already in the batch's dictionary passed the check at its first reading.
    let d = rd !== null && typeof rd === 'object' ? keyIndex.get(rd.deviceKey) : undefined;
    const problem = readingHeadProblem(rd, d !== undefined);
    if (problem) throw refused(i, problem);
    const key = rd.deviceKey;
    const t = rd.ts;
    const values = rd.values;
    if (d === undefined) {
      d = keys.length;
      keys.push(key);
      keyIndex.set(key, d);
      lastTs.push(Number.NEGATIVE_INFINITY);
      minByDev.push(Number.POSITIVE_INFINITY);
      maxByDev.push(Number.NEGATIVE_INFINITY);
      newestRow.push(new Int32Array(STORED.length).fill(-1));
    }
    const word = r >>> 5;
    const bit = 1 << (r & 31);
    const rows = newestRow[d]!;
    let any = false;
    const names = Object.keys(values);
    for (let k = 0; k < names.length; k++) {
      const name = names[k]!;
      const v = values[name]!;
      const c = valueColumn(name, v);
      if (typeof c !== 'number') throw refused(i, c);
      let col = byName[c];
      if (col === undefined) {
        col = new Float64Array(n);
        byName[c] = col;
        validOf[c] = new Uint32Array(words);
      }
      col[r] = v;
      validOf[c]![word]! |= bit;
      counts[c]!++;
      const prev = rows[c]!;
      if (prev < 0 || t >= ts[prev]!) rows[c] = r;
      any = true;
    }
    // A reading without values stores nothing (it would only move `latest` without a value).
    if (!any) continue;
    if (t <= lastTs[d]!) ordered = false;
    lastTs[d] = t;
    if (t < minByDev[d]!) minByDev[d] = t;
    if (t > maxByDev[d]!) maxByDev[d] = t;
    if (t < minTs) minTs = t;
    if (t > maxTs) maxTs = t;
    dev[r] = d;
    ts[r] = t;
    r++;
  }
  if (!ordered && !merged) {
    // Not in time order per device: a (device, ts) may repeat. Rare (redeliveries): merge, then lay out.
    return columnize(mergeDuplicates(readings), true);
  }
  const cols: number[] = [];
  const values: Float64Array<ArrayBuffer>[] = [];
  const valid: Uint32Array<ArrayBuffer>[] = [];
  const full: boolean[] = [];
  for (let c = 0; c < STORED.length; c++) {
    const col = byName[c];
    if (!col) continue;
    cols.push(c);
    values.push(col);
    valid.push(validOf[c]!);
    full.push(counts[c] === r);
  }
  const newest: number[] = [];
  newestRow.forEach((rows, d) => {
    for (const c of cols) {
      const row = rows[c]!;
      if (row >= 0) newest.push(d, c, ts[row]!, byName[c]![row]!);
    }
  });
  return {
    rows: r,
    keys,
    dev,
    ts,
    cols,
    values,
    valid,
    full,
    minTs,
    maxTs,
    minByDev,
    maxByDev,
    newest,
  };
}

/** Sets bits [from, to) of a little-endian bitmap of 32-bit words. */
function setBits(bits: Uint32Array, from: number, to: number): void {
  let r = from;
  while (r < to && (r & 31) !== 0) {
    bits[r >>> 5]! |= 1 << (r & 31);
    r++;
  }
  for (; r + 32 <= to; r += 32) bits[r >>> 5] = 0xffffffff;
  for (; r < to; r++) bits[r >>> 5]! |= 1 << (r & 31);
}

/** The buffers behind a batch's typed arrays, for moving it to another thread (`postMessage`'s transfer list). */
export function columnBuffers(b: ColumnBatch): ArrayBuffer[] {
  return [b.dev.buffer, b.ts.buffer, ...b.values.map((v) => v.buffer), ...b.valid.map((v) => v.buffer)];
}

/**
 * Several laid-out batches as one, when every device's readings only move forward from one batch to the
 * next (so no (device, ts) repeats across them); otherwise null, and the caller lays the readings out
 * again. The journal applies the batches acknowledged during a checkpoint together this way.
 */
export function concatBatches(batches: readonly ColumnBatch[]): ColumnBatch | null {
  const keys: string[] = [];
  const keyIndex = new Map<string, number>();
  const minByDev: number[] = [];
  const maxByDev: number[] = [];
  let rows = 0;
  const maps: Int32Array[] = [];
  for (const b of batches) {
    const map = new Int32Array(b.keys.length);
    for (let d = 0; d < b.keys.length; d++) {
      const key = b.keys[d]!;
      let k = keyIndex.get(key);
      if (k === undefined) {
        k = keys.length;
        keys.push(key);
        keyIndex.set(key, k);
        minByDev.push(b.minByDev[d]!);
        maxByDev.push(b.maxByDev[d]!);
      } else {
        if (b.minByDev[d]! <= maxByDev[k]!) return null;
        maxByDev[k] = b.maxByDev[d]!;
      }
      map[d] = k;
    }
    maps.push(map);
    rows += b.rows;
  }
  const words = Math.ceil(rows / 64) * 2;
  const dev = new Int32Array(rows);
  const ts = new Float64Array(rows);
  const present = new Set<number>();
  for (const b of batches) for (const c of b.cols) present.add(c);
  const cols = [...present].sort((x, y) => x - y);
  const slot = new Map(cols.map((c, i) => [c, i]));
  const values = cols.map(() => new Float64Array(rows));
  const valid = cols.map(() => new Uint32Array(words));
  const counts = new Int32Array(cols.length);
  /** Newest entry per (device, parameter): the last batch holding one is the newest. */
  const newestAt = new Map<number, number[]>();
  let off = 0;
  batches.forEach((b, bi) => {
    const map = maps[bi]!;
    for (let r = 0; r < b.rows; r++) dev[off + r] = map[b.dev[r]!]!;
    ts.set(b.ts.subarray(0, b.rows), off);
    b.cols.forEach((c, j) => {
      const s = slot.get(c)!;
      values[s]!.set(b.values[j]!.subarray(0, b.rows), off);
      const bits = valid[s]!;
      const src = b.valid[j]!;
      if (b.full[j]) {
        setBits(bits, off, off + b.rows);
        counts[s]! += b.rows;
        return;
      }
      for (let r = 0; r < b.rows; r++) {
        if ((src[r >>> 5]! & (1 << (r & 31))) !== 0) {
          const at = off + r;
          bits[at >>> 5]! |= 1 << (at & 31);
          counts[s]!++;
        }
      }
    });
    for (let i = 0; i < b.newest.length; i += 4) {
      const d = map[b.newest[i]!]!;
      const c = b.newest[i + 1]!;
      newestAt.set(d * STORED.length + c, [d, c, b.newest[i + 2]!, b.newest[i + 3]!]);
    }
    off += b.rows;
  });
  return {
    rows,
    keys,
    dev,
    ts,
    cols,
    values,
    valid,
    full: cols.map((_, s) => counts[s] === rows),
    minTs: Math.min(...batches.map((b) => b.minTs)),
    maxTs: Math.max(...batches.map((b) => b.maxTs)),
    minByDev,
    maxByDev,
    newest: [...newestAt.values()].flat(),
  };
}

/**
 * Builders of a row's values for batches whose parameters are all set in every row (the common case: a
 * meter sends the same set each time), one per parameter set: an object literal with a fixed shape is
 * much cheaper to create than one grown property by property.
 */
const rowBuilders = new Map<string, (cols: readonly Float64Array[], r: number) => Record<string, number>>();

function rowBuilder(cols: readonly number[]) {
  const key = cols.join(',');
  let build = rowBuilders.get(key);
  if (!build) {
    // Names are catalogue identifiers (checked against /^[a-z][a-z0-9_]*$/ in schema.ts).
    const body = cols.map((c, j) => `${JSON.stringify(STORED[c])}: v[${j}][r]`).join(', ');
    build = new Function('v', 'r', `return { ${body} };`) as (
      cols: readonly Float64Array[],
      r: number,
    ) => Record<string, number>;
    if (rowBuilders.size < 256) rowBuilders.set(key, build);
  }
  return build;
}

/** The readings a laid-out batch holds, one per row (for the live feed and for laying batches out again). */
export function readingsOf(b: ColumnBatch): Reading[] {
  const out: Reading[] = new Array(b.rows);
  if (b.full.every(Boolean)) {
    const build = rowBuilder(b.cols);
    for (let r = 0; r < b.rows; r++)
      out[r] = { deviceKey: b.keys[b.dev[r]!]!, ts: b.ts[r]!, values: build(b.values, r) };
    return out;
  }
  const names = b.cols.map((c) => STORED[c]!);
  for (let r = 0; r < b.rows; r++) {
    const values: Record<string, number> = {};
    const word = r >>> 5;
    const bit = 1 << (r & 31);
    for (let j = 0; j < names.length; j++) {
      if (b.full[j] || (b.valid[j]![word]! & bit) !== 0) values[names[j]!] = b.values[j]![r]!;
    }
    out[r] = { deviceKey: b.keys[b.dev[r]!]!, ts: b.ts[r]!, values };
  }
  return out;
}

/**
 * Checks that a batch laid out elsewhere (another thread's `columnize`) is whole: its arrays as long as
 * its rows, its parameters known and ascending, its device indices and times in range. Refuses it
 * otherwise, as `columnize` refuses a bad reading.
 */
export function checkBatch(b: ColumnBatch): void {
  const n = b.rows;
  const words = Math.ceil(n / 64) * 2;
  const ok =
    Number.isSafeInteger(n) &&
    n >= 0 &&
    b.dev.length >= n &&
    b.ts.length >= n &&
    b.keys.every(isStorableDeviceKey) &&
    b.minByDev.length === b.keys.length &&
    b.maxByDev.length === b.keys.length &&
    b.cols.length === b.values.length &&
    b.cols.length === b.valid.length &&
    b.cols.length === b.full.length &&
    b.cols.every(
      (c, j) => Number.isInteger(c) && c >= 0 && c < STORED.length && (j === 0 || c > b.cols[j - 1]!),
    ) &&
    b.values.every((v) => v.length >= n) &&
    b.valid.every((v) => v.length >= words) &&
    b.newest.length % 4 === 0;
  if (!ok) throw rejected('malformed column batch');
  for (let r = 0; r < n; r++) {
    const d = b.dev[r]!;
    if (!(d >= 0 && d < b.keys.length) || !isStorableTs(b.ts[r]))
      throw rejected(`malformed column batch at row ${r}`);
  }
  b.values.forEach((v, j) => {
    for (let r = 0; r < n; r++) {
      if (!Number.isFinite(v[r]) && (b.full[j] || (b.valid[j]![r >>> 5]! & (1 << (r & 31))) !== 0))
        throw rejected(`malformed column batch: ${STORED[b.cols[j]!]} at row ${r} is not a finite number`);
    }
  });
}
