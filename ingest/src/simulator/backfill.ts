import type { Reading } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
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
