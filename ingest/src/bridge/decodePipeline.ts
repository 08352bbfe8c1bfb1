/**
 * The decode pipeline: each message received becomes (part of) a unit in the writer's line, in arrival
 * order. With the decode thread up, messages gather in a chunk (what arrives in one turn of the event
 * loop, at most `CHUNK_MESSAGES`) that the worker decodes and lays out in columns; the chunk rejoins the
 * line in place once decoded. Without it (off, not up yet, or failed), each message is decoded here.
 * Refused messages are dead-lettered and counted, statuses applied, readings kept for the writer.
 */
import { DEVICE_KEY_PATTERN } from '@kilowatch/core';
import type { DeadLetterStore } from '../deadLetters.ts';
import { type Decoded, decodeMessage, routeTopic } from '../decoders/index.ts';
import { type ChunkItem, type ChunkReply, type DecodeThread, startDecodeThread } from '../decodeThread.ts';
import type { IngestMetrics } from '../metrics.ts';
import type { DeviceStates, Rejection } from './deviceStates.ts';
import type { IngestLogger } from './logger.ts';
import { newUnit, type Unit } from './units.ts';

/** Messages sent to the decode thread at once, at most. */
const CHUNK_MESSAGES = 256;

/** Where decoded units wait for their commit (the batch writer). */
export interface UnitLine {
  /** A unit joins the line (decoded already, or still being decoded). */
  enqueue(u: Unit): void;
  /** A unit of the line is decoded now. */
  decoded(u: Unit): void;
  /** Messages received and not yet acknowledged. */
  readonly inFlight: number;
}

export interface DecodePipelineOptions {
  line: UnitLine;
  states: DeviceStates;
  deadLetters: DeadLetterStore;
  metrics: IngestMetrics;
  log: IngestLogger;
  now: () => number;
  timeZoneOf?: (deviceKey: string) => string | undefined;
  /** A device's message was refused (after its state noted it). */
  rejected?: (deviceKey: string, rejection: Rejection) => void;
  /** Decode in a worker thread (the store takes column batches, and the thread is not turned off). */
  thread: boolean;
}

export class DecodePipeline {
  private readonly decoder: DecodeThread | null;
  /** The chunk gathering messages for the decode thread (the last unit of the line), if any. */
  private chunk: Unit | null = null;
  /** Chunks in the decode thread. */
  private readonly decodes = new Set<Promise<void>>();

  constructor(private readonly o: DecodePipelineOptions) {
    this.decoder = o.thread
      ? startDecodeThread(
          (e) => o.log.warn({ err: e }, 'the decode thread failed; decoding on the bridge thread'),
          undefined,
          () => o.log.info('ingest decodes in a worker thread'),
        )
      : null;
  }

  /** Whether messages are being decoded in the worker thread now. */
  get inThread(): boolean {
    return this.decoder?.ready ?? false;
  }

  /**
   * Takes one message into the line, with its acknowledgement (after commit). Answers false when it
   * needs none: it carried no readings and nothing waits ahead of it, so it is acknowledged at once.
   */
  take(topic: string, payload: Uint8Array | string, ack: (() => void) | undefined): boolean {
    const { line, now } = this.o;
    if (this.decoder?.ready) {
      // To the decode thread, in chunks: what arrives in one turn of the event loop goes together.
      let u = this.chunk;
      if (!u) {
        u = newUnit(performance.now(), routeTopic(topic)?.deviceKey ?? '');
        u.items = [];
        this.chunk = u;
        line.enqueue(u);
        setImmediate(() => this.sendChunk());
      }
      const tz =
        this.o.timeZoneOf && topic.startsWith('tele/')
          ? this.o.timeZoneOf(routeTopic(topic)?.deviceKey ?? '')
          : undefined;
      (u.items as ChunkItem[]).push({ topic, payload, tz: tz ?? null });
      if (ack) u.acks.push(ack);
      u.messages++;
      if (u.messages >= CHUNK_MESSAGES) this.sendChunk();
      return true;
    }
    const u = newUnit(performance.now(), routeTopic(topic)?.deviceKey ?? '');
    this.outcome(
      u,
      topic,
      payload,
      decodeMessage(topic, payload, { now: now(), timeZoneOf: this.o.timeZoneOf }),
    );
    // Nothing waits ahead of a message without readings: acknowledge it in order, right away.
    if (u.count === 0 && line.inFlight === 0) return false;
    if (ack) u.acks.push(ack);
    u.messages = 1;
    u.ready = true;
    line.enqueue(u);
    // A message decoded here behind an open chunk must not pass it: the chunk goes now.
    if (this.chunk) this.sendChunk();
    return true;
  }

  /** Sends the open chunk, and resolves once no chunk is in the decode thread. */
  async drain(): Promise<void> {
    if (this.chunk) this.sendChunk();
    await Promise.all([...this.decodes]);
  }

  async close(): Promise<void> {
    await this.decoder?.close();
  }

  /** A message decoded (on whichever thread): counted, dead-lettered or applied, its readings kept. */
  private outcome(u: Unit, topic: string, payload: Uint8Array | string, d: Decoded): void {
    const { metrics } = this.o;
    switch (d.kind) {
      case 'rejected': {
        metrics.rejected.inc(1, { reason: d.reason });
        this.o.deadLetters.add(topic, d.reason, d.detail, payload);
        const key = d.deviceKey ?? routeTopic(topic)?.deviceKey;
        if (key && DEVICE_KEY_PATTERN.test(key)) {
          const rejection = { topic, reason: d.reason, detail: d.detail, at: Date.now() };
          this.o.states.reject(key, rejection);
          this.o.rejected?.(key, rejection);
        }
        break;
      }
      case 'ignored':
        metrics.ignored.inc();
        break;
      case 'status':
        metrics.statuses.inc();
        this.o.states.applyStatus(d.deviceKey, d.update);
        break;
      case 'readings':
        for (const r of d.readings) u.readings.push(r);
        u.count += d.readings.length;
        u.withReadings++;
        break;
    }
  }

  /** Decodes a unit's messages on this thread (no decode thread, or it failed with them). */
  private decodeHere(u: Unit): void {
    const at = this.o.now();
    for (const it of u.items ?? []) {
      this.outcome(
        u,
        it.topic,
        it.payload,
        decodeMessage(it.topic, it.payload, { now: at, timeZoneOf: () => it.tz ?? undefined }),
      );
    }
  }

  /** The decode thread's answer for a chunk, applied message by message in order. */
  private applyReply(u: Unit, reply: ChunkReply): void {
    const items = u.items ?? [];
    let other = 0;
    for (let i = 0; i < items.length; i++) {
      const n = reply.counts[i]!;
      if (n >= 0) {
        u.count += n;
        if (n > 0) u.withReadings++;
        continue;
      }
      const o = reply.others[other++];
      if (!o || o.i !== i) throw new Error(`decode thread answered message ${i} out of order`);
      this.outcome(u, items[i]!.topic, items[i]!.payload, o.decoded);
    }
    if (reply.columns) {
      u.columns = reply.columns;
      u.seq = reply.seq;
    } else if (reply.readings) u.readings = reply.readings;
  }

  /** Hands the open chunk to the decode thread; it rejoins the line, in place, once decoded. */
  private sendChunk(): void {
    const u = this.chunk;
    if (!u) return;
    this.chunk = null;
    const done = (this.decoder as DecodeThread)
      .decode(u.items ?? [], this.o.now())
      .then(
        (reply) => this.applyReply(u, reply),
        () => this.decodeHere(u),
      )
      .catch((e) => {
        // A reply that does not fit its chunk: decode the messages here instead.
        this.o.log.error({ err: e }, 'decode thread reply refused; decoding on the bridge thread');
        u.readings = [];
        u.columns = null;
        u.seq = null;
        u.count = 0;
        u.withReadings = 0;
        this.decodeHere(u);
      })
      .finally(() => {
        u.items = null;
        this.decodes.delete(done);
        this.o.line.decoded(u);
      });
    this.decodes.add(done);
  }
}
