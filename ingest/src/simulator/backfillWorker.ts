/**
 * The demo history's generation thread: simulated readings for a time range, laid out in columns
 * (`columnize`) and sent back batch by batch, the column arrays moved, not copied. A batch is made when
 * the owner asks for one (`next`), so at most the batches it asked ahead for are in memory. See
 * `backfill.ts` (`thread: true`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Reading } from '@kilowatch/core';
import { columnBuffers, columnize } from '@kilowatch/tsdb/columns';
import type { SimulatedDevice } from './devices.ts';
import { type SimulationOptions, simulatedReading } from './readings.ts';

const port = parentPort;
if (!port) throw new Error('backfillWorker.ts runs as a worker thread');

export interface BackfillWork extends SimulationOptions {
  devices: readonly SimulatedDevice[];
  from: number;
  to: number;
  step: number;
  batchSize: number;
}

const work = workerData.work as BackfillWork;
let ts = work.from;

function nextBatch(): void {
  const batch: Reading[] = [];
  for (; ts < work.to && batch.length < work.batchSize; ts += work.step)
    for (const d of work.devices) batch.push(simulatedReading(d, ts, work));
  if (batch.length === 0) {
    port!.postMessage({ done: true });
    return;
  }
  const b = columnize(batch);
  port!.postMessage({ batch: b, readings: batch.length }, columnBuffers(b));
}

// `spent`: a batch's buffers, moved back once the store is done with it, are left to this thread's
// frequent collections (see `backfill.ts`).
port.on('message', (m: { next?: true; spent?: true }) => {
  if (m.next) nextBatch();
});
port.postMessage({ ready: true });
