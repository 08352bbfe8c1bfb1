/**
 * What the bridge's parts pass along: a unit is one message decoded on the bridge's thread, or a chunk
 * of messages decoded together in the worker thread. A unit is committed and acknowledged whole.
 */
import type { Reading } from '@kilowatch/core';
import { type ColumnBatch, readingsOf } from '@kilowatch/tsdb/columns';
import type { ChunkItem } from '../decodeThread.ts';

export interface Unit {
  /** Acknowledge its messages to the broker (or, attached in process, to the meters) after commit. */
  acks: (() => void)[];
  /** Messages in the unit (the in-flight count). */
  messages: number;
  /** Messages that carried readings (counted as store-rejected if the store refuses them). */
  withReadings: number;
  /** Readings decoded on this thread. */
  readings: Reading[];
  /** Readings decoded in the worker thread, in columns. */
  columns: ColumnBatch | null;
  /** Their meters' sequence numbers per row (NaN: none), kept for the live feed. */
  seq: Float64Array | null;
  /** Readings in the unit, however held. */
  count: number;
  /** False while the worker thread has it (or, for the open chunk, before it is sent). */
  ready: boolean;
  /** Arrival of its first message (performance.now()), for the batch time bound. */
  at: number;
  /** The messages themselves until decoded (dead letters keep a rejected message's payload). */
  items: ChunkItem[] | null;
  /** The first message's device key, naming a dead-lettered unit. */
  deviceKey: string;
}

export const newUnit = (at: number, deviceKey: string): Unit => ({
  acks: [],
  messages: 0,
  withReadings: 0,
  readings: [],
  columns: null,
  seq: null,
  count: 0,
  ready: false,
  at,
  items: null,
  deviceKey,
});

/** A unit's column readings rebuilt as objects, with the sequence numbers the meters sent. */
export function columnReadings(c: ColumnBatch, seq: Float64Array | null): Reading[] {
  const readings = readingsOf(c);
  if (seq) for (let r = 0; r < readings.length; r++) if (!Number.isNaN(seq[r])) readings[r]!.seq = seq[r]!;
  return readings;
}

/** Every reading of a unit as objects, however it holds them. */
export const unitReadings = (u: Unit): Reading[] =>
  u.columns ? columnReadings(u.columns, u.seq) : u.readings;
