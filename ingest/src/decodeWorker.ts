/**
 * The decode thread's body: MQTT payloads in, readings laid out in columns out. Runs `decodeMessage` on
 * every message of a chunk (the same decoders and checks as on the bridge's own thread) and `columnize`
 * on the readings it accepted, and sends back one outcome per message and the column arrays (moved, not
 * copied). See `decodeThread.ts`.
 */
import { parentPort } from 'node:worker_threads';
import type { Reading } from '@kilowatch/core';
import { type ColumnBatch, columnize } from '@kilowatch/tsdb/columns';
import { decodeMessage } from './decoders/index.ts';
import type { ChunkReply, ChunkRequest, SparseOutcome } from './decodeThread.ts';

const port = parentPort;
if (!port) throw new Error('decodeWorker.ts runs as a worker thread');

/**
 * The meters' sequence numbers per row of the laid-out batch (NaN where a reading had none), or null
 * when no reading had one. Rows follow the readings unless repeated (device, ts) were merged.
 */
function seqOf(readings: readonly Reading[], b: ColumnBatch): Float64Array<ArrayBuffer> | null {
  if (!readings.some((r) => r.seq !== undefined)) return null;
  const seq = new Float64Array(b.rows).fill(Number.NaN);
  if (b.rows === readings.length) {
    for (let r = 0; r < b.rows; r++) seq[r] = readings[r]!.seq ?? Number.NaN;
    return seq;
  }
  const byRow = new Map<string, number>();
  for (const r of readings) if (r.seq !== undefined) byRow.set(`${r.deviceKey}\u0000${r.ts}`, r.seq);
  for (let r = 0; r < b.rows; r++) seq[r] = byRow.get(`${b.keys[b.dev[r]!]}\u0000${b.ts[r]}`) ?? Number.NaN;
  return seq;
}

function decodeChunk(req: ChunkRequest): { reply: ChunkReply; transfer: ArrayBuffer[] } {
  const bytes = new Uint8Array(req.buf);
  const n = req.topics.length;
  const counts = new Int32Array(n);
  const others: SparseOutcome[] = [];
  const readings: Reading[] = [];
  const now = req.now;
  for (let i = 0; i < n; i++) {
    const payload = Buffer.from(bytes.buffer, req.offsets[i]!, req.offsets[i + 1]! - req.offsets[i]!);
    const tz = req.tzs[i] ?? undefined;
    const d = decodeMessage(req.topics[i]!, payload, { now, timeZoneOf: () => tz });
    if (d.kind === 'readings') {
      counts[i] = d.readings.length;
      for (const r of d.readings) readings.push(r);
      continue;
    }
    counts[i] = -1;
    others.push({ i, decoded: d });
  }
  let columns: ColumnBatch | null = null;
  try {
    if (readings.length > 0) columns = columnize(readings);
  } catch {
    // Decoded readings always lay out; should one not, the bridge lays them out itself and the store's
    // refusal takes its usual way (dead letters).
    return {
      reply: { id: req.id, counts, others, columns: null, seq: null, readings },
      transfer: [counts.buffer],
    };
  }
  const transfer: ArrayBuffer[] = [counts.buffer];
  let seq: Float64Array<ArrayBuffer> | null = null;
  if (columns) {
    transfer.push(columns.dev.buffer, columns.ts.buffer);
    for (const v of columns.values) transfer.push(v.buffer);
    for (const v of columns.valid) transfer.push(v.buffer);
    seq = seqOf(readings, columns);
    if (seq) transfer.push(seq.buffer);
  }
  return { reply: { id: req.id, counts, others, columns, seq, readings: null }, transfer };
}

port.on('message', (req: ChunkRequest) => {
  const { reply, transfer } = decodeChunk(req);
  port.postMessage(reply, transfer);
});
port.postMessage({ ready: true });
