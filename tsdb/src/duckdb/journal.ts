/**
 * The DuckDB store's write journal. A DuckDB CHECKPOINT holds every commit for its whole duration
 * (0.3–0.6 s for 16 MiB of WAL on a small machine), which a meter waiting for its MQTT acknowledgement
 * would feel. While one runs, the store appends each batch here instead, makes it durable (fdatasync) and
 * acknowledges it; the batches are applied to DuckDB, in order, as soon as the checkpoint ends, and the
 * journal is emptied after they are. On open, whatever the journal still holds is applied again — writes
 * are idempotent on (device, ts), so a batch applied just before a crash and replayed changes nothing.
 *
 * A record is: u32 payload length, u32 CRC-32 of the payload, payload; little-endian. The payload is the
 * batch as the store already holds it in columns (no per-reading encoding on the hot path): u32 length
 * of a JSON head (device keys, parameter names, bounds, newest values), the head, then the raw bytes of
 * the device-index, timestamp, value and validity arrays. A record cut short or failing its checksum (a
 * crash while appending: never acknowledged) ends the replay.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { ColumnBatch } from '../columns.ts';
import { Mutex } from './mutex.ts';
import { STORED } from './schema.ts';

const HEADER = 8;

interface Head {
  rows: number;
  keys: string[];
  /** Parameter names (not catalogue positions, which a later build may renumber). */
  cols: string[];
  full: boolean[];
  /** Length of each validity bitmap, in 32-bit words. */
  validWords: number;
  minTs: number;
  maxTs: number;
  minByDev: number[];
  maxByDev: number[];
  newest: number[];
}

const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

export function encodeBatch(b: ColumnBatch): Buffer[] {
  const head: Head = {
    rows: b.rows,
    keys: b.keys,
    cols: b.cols.map((c) => STORED[c]!),
    full: b.full,
    validWords: b.valid[0]?.length ?? 0,
    minTs: b.minTs,
    maxTs: b.maxTs,
    minByDev: b.minByDev,
    maxByDev: b.maxByDev,
    newest: b.newest,
  };
  const json = Buffer.from(JSON.stringify(head), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length, 0);
  const parts = [len, json, bytesOf(b.dev.subarray(0, b.rows)), bytesOf(b.ts.subarray(0, b.rows))];
  b.cols.forEach((_, c) => {
    parts.push(bytesOf(b.values[c]!.subarray(0, b.rows)));
    if (!b.full[c]) parts.push(bytesOf(b.valid[c]!));
  });
  return parts;
}

export function decodeBatch(buf: Buffer): ColumnBatch {
  const hl = buf.readUInt32LE(0);
  const head = JSON.parse(buf.toString('utf8', 4, 4 + hl)) as Head;
  let off = 4 + hl;
  const take = <T extends ArrayBufferView>(make: (n: number) => T, n: number, size: number): T => {
    const out = make(n);
    const bytes = n * size;
    if (off + bytes > buf.length) throw new Error('journal record shorter than its head says');
    new Uint8Array(out.buffer, out.byteOffset, bytes).set(buf.subarray(off, off + bytes));
    off += bytes;
    return out;
  };
  const n = head.rows;
  const words = head.validWords;
  const dev = take((k) => new Int32Array(k), n, 4);
  const ts = take((k) => new Float64Array(k), n, 8);
  const cols = head.cols.map((name) => {
    const c = STORED.indexOf(name);
    if (c < 0) throw new Error(`journal names an unknown parameter "${name}"`);
    return c;
  });
  const values: Float64Array<ArrayBuffer>[] = [];
  const valid: Uint32Array<ArrayBuffer>[] = [];
  cols.forEach((_, c) => {
    values.push(take((k) => new Float64Array(k), n, 8));
    valid.push(
      head.full[c] ? new Uint32Array(words).fill(0xffffffff) : take((k) => new Uint32Array(k), words, 4),
    );
  });
  const { validWords: _, ...rest } = head;
  return { ...rest, dev, ts, cols, values, valid };
}

/** The complete, intact records of a journal file's contents, in order. */
export function parseJournal(buf: Buffer): ColumnBatch[] {
  const out: ColumnBatch[] = [];
  let off = 0;
  while (off + HEADER <= buf.length) {
    const len = buf.readUInt32LE(off);
    const sum = buf.readUInt32LE(off + 4);
    const end = off + HEADER + len;
    if (end > buf.length) break;
    const payload = buf.subarray(off + HEADER, end);
    if (crc32(payload) !== sum) break;
    try {
      out.push(decodeBatch(payload));
    } catch {
      break;
    }
    off = end;
  }
  return out;
}

export function journalRecord(b: ColumnBatch): Buffer {
  const parts = encodeBatch(b);
  let length = 0;
  let sum = 0;
  for (const p of parts) {
    length += p.length;
    sum = crc32(p, sum);
  }
  const head = Buffer.alloc(HEADER);
  head.writeUInt32LE(length, 0);
  head.writeUInt32LE(sum, 4);
  return Buffer.concat([head, ...parts], HEADER + length);
}

export class Journal {
  /** Appends and truncations run one after another, in call order. */
  private readonly order = new Mutex();

  private constructor(private readonly fh: FileHandle) {}

  /** Opens (or creates) the journal and returns the batches it still holds. */
  static async open(path: string): Promise<{ journal: Journal; pending: ColumnBatch[] }> {
    const fh = await open(path, 'a+');
    const pending = parseJournal(await fh.readFile());
    return { journal: new Journal(fh), pending };
  }

  /** Appends a batch and resolves once it is on disk. */
  append(batch: ColumnBatch): Promise<void> {
    const rec = journalRecord(batch);
    return this.order.run(async () => {
      await this.fh.write(rec);
      await this.fh.datasync();
    });
  }

  /** Empties the journal (everything in it has been applied). */
  clear(): Promise<void> {
    return this.order.run(async () => {
      await this.fh.truncate(0);
      await this.fh.datasync();
    });
  }

  async close(): Promise<void> {
    await this.order.run(() => this.fh.close());
  }
}
