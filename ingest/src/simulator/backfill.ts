import { Worker } from 'node:worker_threads';
import type { Reading } from '@kilowatch/core';
import type { ColumnBatch, TelemetryStore } from '@kilowatch/tsdb';
import { columnBuffers } from '@kilowatch/tsdb/columns';
import type { BackfillWork } from './backfillWorker.ts';
import type { SimulatedDevice } from './devices.ts';
import { type SimulationOptions, simulatedReading } from './readings.ts';

export interface BackfillOptions extends SimulationOptions {
  from: number;
  to: number;
  /** Default 60,000 (one reading a minute). */
  stepMs?: number;
  /**
   * Readings per `store.write` (default 50,000). Larger batches load ~10 % faster into DuckDB but hold the
   * event loop longer, and the backfill shares the process with the API.
   */
  batchSize?: number;
  onProgress?: (done: number, total: number) => void;
  /**
   * Generate the readings in a worker thread, laid out in columns there, when the store bulk-loads: the
   * thread that calls this (the server's, answering requests meanwhile) only hands the columns to the
   * store. Default false.
   */
  thread?: boolean;
}

/**
 * Whether this code runs compiled (`pnpm build` bundles the server into `api/dist/`, the generation
 * thread's body beside it as `backfillWorker.js`) rather than from its TypeScript sources.
 */
const compiled = import.meta.url.endsWith('.js');
/** Batches the generation thread makes ahead of the store. */
const AHEAD = 2;
/** The generation thread's old-generation heap, MB (batches of 100,000 readings were generated within it). */
const WORKER_HEAP_MB = 128;

/** Column batches of simulated history made in a worker thread (see `backfillWorker.ts`). */
async function* generatedInThread(work: BackfillWork): AsyncGenerator<ColumnBatch> {
  const entry = new URL(compiled ? './backfillWorker.js' : './backfillWorker.ts', import.meta.url);
  // TypeScript sources need the loader registered in the thread first, which the boot file does.
  // A bounded heap: the thread holds one batch of readings at a time, and without a limit V8 let its
  // heap grow far past that before collecting (memory a home server shares with everything else).
  const resourceLimits = { maxOldGenerationSizeMb: WORKER_HEAP_MB };
  const worker = entry.pathname.endsWith('.js')
    ? new Worker(entry, { execArgv: [], workerData: { work }, resourceLimits })
    : new Worker(new URL('../decodeThreadBoot.mjs', import.meta.url), {
        workerData: { entry: entry.href, work },
        execArgv: [],
        resourceLimits,
      });
  type Msg = { ready?: true; done?: true; batch?: ColumnBatch };
  const queue: Msg[] = [];
  let failure: unknown = null;
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  worker.on('message', (m: Msg) => {
    if (m.ready) for (let i = 0; i < AHEAD; i++) worker.postMessage({ next: true });
    else queue.push(m);
    notify();
  });
  worker.on('error', (e) => {
    failure = e;
    notify();
  });
  worker.on('exit', (code) => {
    failure ??= new Error(`the history generation thread exited (${code})`);
    notify();
  });
  try {
    for (;;) {
      const m = queue.shift();
      if (!m) {
        if (failure) throw failure;
        await new Promise<void>((r) => {
          wake = r;
        });
        continue;
      }
      if (m.done) return;
      worker.postMessage({ next: true });
      yield m.batch!;
      // The store asked for the next batch, so it is done with this one (port.ts). Its column buffers
      // go back to the generation thread, whose frequent collections free them: here they waited for a
      // collection of the server's thread, ~60 MB of them at a time while the demo year was written.
      worker.postMessage({ spent: true }, columnBuffers(m.batch!));
    }
  } finally {
    worker.removeAllListeners('exit');
    await worker.terminate();
  }
}

const YIELD_EVERY = 5_000;
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Writes simulated history for [from, to) in large batches straight into the store: through the store's
 * bulk load when it has one (progress counts readings handed over), otherwise batch by batch with the
 * next batch generated while the previous one is being written.
 */
export async function backfillHistory(
  store: TelemetryStore,
  devices: readonly SimulatedDevice[],
  opts: BackfillOptions,
): Promise<{ readings: number }> {
  const step = opts.stepMs ?? 60_000;
  const batchSize = opts.batchSize ?? 50_000;
  const total = Math.max(0, Math.ceil((opts.to - opts.from) / step)) * devices.length;
  async function* generate(): AsyncGenerator<Reading[]> {
    let batch: Reading[] = [];
    let sinceYield = 0;
    for (let ts = opts.from; ts < opts.to; ts += step) {
      for (const d of devices) batch.push(simulatedReading(d, ts, opts));
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
      // Backfill shares the process with the API: never hold the event loop for long.
      sinceYield += devices.length;
      if (sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
    }
    if (batch.length > 0) yield batch;
  }

  if (store.writeBulk && opts.thread) {
    let handed = 0;
    const progress = async function* (source: AsyncIterable<ColumnBatch>) {
      for await (const b of source) {
        yield b;
        handed += b.rows;
        opts.onProgress?.(handed, total);
      }
    };
    const { seed, counterResetEveryDays } = opts;
    const work: BackfillWork = {
      devices,
      from: opts.from,
      to: opts.to,
      step,
      batchSize,
      ...(seed !== undefined ? { seed } : {}),
      ...(counterResetEveryDays !== undefined ? { counterResetEveryDays } : {}),
    };
    const { written } = await store.writeBulk(progress(generatedInThread(work)));
    return { readings: written };
  }

  if (store.writeBulk) {
    let handed = 0;
    const progress = async function* (source: AsyncIterable<Reading[]>) {
      for await (const b of source) {
        yield b;
        handed += b.length;
        opts.onProgress?.(handed, total);
      }
    };
    const { written } = await store.writeBulk(progress(generate()));
    return { readings: written };
  }

  let written = 0;
  let inFlight: Promise<unknown> | null = null;
  for await (const b of generate()) {
    if (inFlight) await inFlight;
    inFlight = store.write(b).then(() => {
      written += b.length;
      opts.onProgress?.(written, total);
    });
  }
  if (inFlight) await inFlight;
  return { readings: written };
}
