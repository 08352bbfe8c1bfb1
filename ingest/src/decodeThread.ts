/**
 * A worker thread that decodes the bridge's MQTT messages. Parsing JSON, checking every value against
 * the catalogue and laying the readings out in columns is most of the bridge's per-message work; done
 * here it runs beside the event loop that speaks MQTT and commits to the store, on the machine's other
 * core. Messages go over in chunks (one copy of their payloads, one `postMessage`), and the readings come
 * back as column arrays that are moved, not copied.
 *
 * Chunks are answered in the order they were sent. When the thread fails (it cannot start, or dies), every
 * chunk still out is rejected and the bridge decodes those messages itself: nothing is lost, only slower.
 */
import { Worker } from 'node:worker_threads';
import type { Reading } from '@kilowatch/core';
import type { ColumnBatch } from '@kilowatch/tsdb/columns';
import type { Decoded } from './decoders/index.ts';

export interface ChunkRequest {
  id: number;
  topics: string[];
  /** Time zone per message (Tasmota's local timestamps), resolved on the bridge's thread. */
  tzs: (string | null)[];
  /** Every payload, back to back; message `i` is `offsets[i]` to `offsets[i + 1]`. */
  buf: ArrayBuffer;
  offsets: Int32Array;
  /** The bridge's clock when the chunk was sent: the decoder's idea of "now" (readings from the future). */
  now: number;
}

/** What message `i` came to when it carried no readings. */
export interface SparseOutcome {
  i: number;
  decoded: Exclude<Decoded, { kind: 'readings' }>;
}

export interface ChunkReply {
  id: number;
  /** Readings per message; -1 for a message described in `others`. */
  counts: Int32Array;
  others: SparseOutcome[];
  /** The chunk's readings in columns, or null with `readings` when they could not be laid out. */
  columns: ColumnBatch | null;
  /** The meters' sequence numbers per row of `columns` (NaN: none), or null when no message had one. */
  seq: Float64Array | null;
  readings: Reading[] | null;
}

export interface ChunkItem {
  topic: string;
  payload: Uint8Array | string;
  tz: string | null;
}

export interface DecodeThread {
  /** Whether chunks can be sent (the thread has loaded its code and has not failed). */
  readonly ready: boolean;
  decode(items: readonly ChunkItem[], now: number): Promise<ChunkReply>;
  close(): Promise<void>;
}

/**
 * Whether this code runs compiled (`pnpm build` bundles the server into `api/dist/`, the decode thread's
 * body beside it as `decodeWorker.js`) rather than from its TypeScript sources.
 */
const compiled = import.meta.url.endsWith('.js');

/** Starts the thread; `entry` is its code (tests start threads that fail). */
export function startDecodeThread(
  onFailure: (e: unknown) => void,
  entry: URL = new URL(compiled ? './decodeWorker.js' : './decodeWorker.ts', import.meta.url),
  onReady: () => void = () => {},
): DecodeThread {
  // Compiled JavaScript starts as it is; TypeScript sources need the loader registered in the thread
  // first, which the boot file does (it is not inherited from the parent's flags).
  const worker = entry.pathname.endsWith('.js')
    ? new Worker(entry, { execArgv: [] })
    : new Worker(new URL('./decodeThreadBoot.mjs', import.meta.url), {
        workerData: { entry: entry.href },
        execArgv: [],
      });
  worker.unref();
  let ready = false;
  let failed = false;
  let nextId = 0;
  const waiting = new Map<number, { resolve(r: ChunkReply): void; reject(e: unknown): void }>();

  const fail = (e: unknown) => {
    if (failed) return;
    failed = true;
    ready = false;
    onFailure(e);
    for (const w of waiting.values()) w.reject(e);
    waiting.clear();
  };
  worker.on('message', (m: ChunkReply | { ready: true }) => {
    if ('ready' in m) {
      ready = !failed;
      if (ready) onReady();
      return;
    }
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    w?.resolve(m);
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the decode thread exited (code ${code})`)));

  return {
    get ready() {
      return ready;
    },
    decode(items, now) {
      if (failed) return Promise.reject(new Error('the decode thread has failed'));
      const parts = items.map((it) =>
        typeof it.payload === 'string' ? Buffer.from(it.payload, 'utf8') : it.payload,
      );
      const offsets = new Int32Array(parts.length + 1);
      for (let i = 0; i < parts.length; i++) offsets[i + 1] = offsets[i]! + parts[i]!.byteLength;
      // A fresh buffer of its own (never a slice of Node's shared pool), so it can be moved.
      const bytes = new Uint8Array(offsets[parts.length]!);
      for (let i = 0; i < parts.length; i++) bytes.set(parts[i]!, offsets[i]!);
      const req: ChunkRequest = {
        id: nextId++,
        topics: items.map((it) => it.topic),
        tzs: items.map((it) => it.tz),
        buf: bytes.buffer,
        offsets,
        now,
      };
      return new Promise<ChunkReply>((resolve, reject) => {
        waiting.set(req.id, { resolve, reject });
        worker.postMessage(req, [req.buf, offsets.buffer]);
      });
    },
    async close() {
      failed = true;
      ready = false;
      for (const w of waiting.values()) w.reject(new Error('the decode thread was closed'));
      waiting.clear();
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}
