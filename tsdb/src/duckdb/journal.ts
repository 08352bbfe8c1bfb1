/**
 * The DuckDB store's write journal. A DuckDB CHECKPOINT holds every commit for its whole duration
 * (0.3–0.6 s for 16 MiB of WAL on a small machine), which a meter waiting for its MQTT acknowledgement
 * would feel. While one runs, the store appends each batch here instead, makes it durable (fdatasync) and
 * acknowledges it; the batches are applied to DuckDB, in order, as soon as the checkpoint ends, and the
 * journal is emptied after they are. On open, whatever the journal still holds is applied again — writes
 * are idempotent on (device, ts), so a batch applied just before a crash and replayed changes nothing.
 *
 * A record is: u32 payload length, u32 CRC-32 of the payload, payload (the batch's readings as JSON),
 * little-endian. A record cut short or failing its checksum (a crash while appending: never
 * acknowledged) ends the replay.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import type { Reading } from '../port.ts';

const HEADER = 8;

/** The complete, intact records of a journal file's contents, in order. */
export function parseJournal(buf: Buffer): Reading[][] {
  const out: Reading[][] = [];
  let off = 0;
  while (off + HEADER <= buf.length) {
    const len = buf.readUInt32LE(off);
    const sum = buf.readUInt32LE(off + 4);
    const end = off + HEADER + len;
    if (end > buf.length) break;
    const payload = buf.subarray(off + HEADER, end);
    if (crc32(payload) !== sum) break;
    try {
      out.push(JSON.parse(payload.toString('utf8')) as Reading[]);
    } catch {
      break;
    }
    off = end;
  }
  return out;
}

export function journalRecord(readings: readonly Reading[]): Buffer {
  const payload = Buffer.from(JSON.stringify(readings), 'utf8');
  const head = Buffer.alloc(HEADER);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
}

export class Journal {
  /** Appends and truncations run one after another, in call order. */
  private tail: Promise<unknown> = Promise.resolve();
  private bytes = 0;

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
  ) {}

  /** Opens (or creates) the journal and returns the batches it still holds. */
  static async open(path: string): Promise<{ journal: Journal; pending: Reading[][] }> {
    const fh = await open(path, 'a+');
    const pending = parseJournal(await fh.readFile());
    const journal = new Journal(fh, path);
    return { journal, pending };
  }

  /** Size written since the last `clear` (bytes). */
  get size(): number {
    return this.bytes;
  }

  /** Appends a batch and resolves once it is on disk. */
  append(readings: readonly Reading[]): Promise<void> {
    const rec = journalRecord(readings);
    return this.chain(async () => {
      await this.fh.write(rec);
      await this.fh.datasync();
      this.bytes += rec.length;
    });
  }

  /** Empties the journal (everything in it has been applied). */
  clear(): Promise<void> {
    return this.chain(async () => {
      await this.fh.truncate(0);
      await this.fh.datasync();
      this.bytes = 0;
    });
  }

  async close(): Promise<void> {
    await this.tail.catch(() => undefined);
    await this.fh.close();
  }

  private chain(fn: () => Promise<void>): Promise<void> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}
