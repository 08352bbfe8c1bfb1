/**
 * The decode pipeline: each message received becomes (part of) a unit in the writer's line, in arrival
 * order. With the decode thread up, messages gather in a chunk (what arrives in one turn of the event
 * loop, at most `CHUNK_MESSAGES`) that the worker decodes and lays out in columns; the chunk rejoins the
 * line in place once decoded. Without it (off, not up yet, or failed), each message is decoded here.
 * Refused messages are dead-lettered and counted, statuses applied, readings kept for the writer. A
 * meter past its write budget (`meterBudget.ts`) has its messages refused here, before they are decoded.
 */
import { DEVICE_KEY_PATTERN } from '@kilowatch/core';
import type { DeadLetterStore } from '../deadLetters.ts';
import { type Decoded, decodeMessage, routeTopic } from '../decoders/index.ts';
import { type ChunkItem, type ChunkReply, type DecodeThread, startDecodeThread } from '../decodeThread.ts';
import type { IngestMetrics } from '../metrics.ts';
import type { DeviceStates, Rejection } from './deviceStates.ts';
import type { IngestLogger } from './logger.ts';
import type { MeterBudget, Refusal } from './meterBudget.ts';
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
  /**
   * An acknowledgement that goes with the line's next commit, after everything ahead of it (the order
   * the broker sent the messages in); false when nothing waits, so it may be given at once.
   */
  attach(ack: () => void): boolean;
}

/**
 * What became of a message taken: it joined the line (`line`, counted in flight); it needs no commit and
 * nothing waits ahead of it (`now`: acknowledge it at once); or its acknowledgement goes with the line's
 * next commit without taking a place in the in-flight window (`attached`).
 */
export type Taken = 'line' | 'now' | 'attached';

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
  /** Each meter's write budget; none: no bound. */
  budget?: MeterBudget;
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

  /** Takes one message into the line, with its acknowledgement (after commit). */
  take(topic: string, payload: Uint8Array | string, ack: (() => void) | undefined): Taken {
    const { line, now, budget } = this.o;
    const route = routeTopic(topic);
    if (budget?.active && route && route.format !== 'native-status') {
      const refusal = budget.admit(route.deviceKey, Boolean(this.decoder?.ready));
      if (refusal) return this.refuse(route.deviceKey, topic, refusal, ack);
    }
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
      return 'line';
    }
    const u = newUnit(performance.now(), routeTopic(topic)?.deviceKey ?? '');
    this.outcome(
      u,
      topic,
      payload,
      decodeMessage(topic, payload, { now: now(), timeZoneOf: this.o.timeZoneOf }),
    );
    this.charge(u, [{ topic, payload, tz: null }], false);
    // Nothing waits ahead of a message without readings: acknowledge it in order, right away.
    if (u.count === 0 && line.inFlight === 0) return 'now';
    if (ack) u.acks.push(ack);
    u.messages = 1;
    u.ready = true;
    line.enqueue(u);
    // A message decoded here behind an open chunk must not pass it: the chunk goes now.
    if (this.chunk) this.sendChunk();
    return 'line';
  }

  /**
   * A message of a meter past its budget: counted, not stored, and acknowledged in order (QoS 1) so that
   * the meter does not send it again; the device's state notes it (the first of a flood, then once a
   * second), as it does a refused payload.
   */
  private refuse(deviceKey: string, topic: string, why: Refusal, ack: (() => void) | undefined): Taken {
    const budget = this.o.budget as MeterBudget;
    this.o.metrics.refused.inc(1, { reason: why });
    const since = budget.report(deviceKey);
    if (since !== null && DEVICE_KEY_PATTERN.test(deviceKey)) {
      const l = budget.limits;
      const rejection: Rejection = {
        topic,
        reason: why === 'rate' ? 'rate-limited' : 'backdated-limited',
        detail:
          why === 'rate'
            ? `this meter wrote more than ${l.readingsPerSecond} readings a second (${l.readingsBurst} at once); its messages are acknowledged and not stored until it slows down`
            : `this meter wrote more than ${l.backdatedPerSecond} readings a second (${l.backdatedBurst} at once) older than ${Math.round(l.backdatedAfterMs / 1000)} s; its messages are acknowledged and not stored until it slows down`,
        at: this.o.now(),
      };
      this.o.states.reject(deviceKey, rejection);
      this.o.rejected?.(deviceKey, rejection);
    }
    if (!ack) return 'now';
    if (this.o.line.attach(ack)) return 'attached';
    return 'now';
  }

  /**
   * A unit's readings taken from their meters' budgets, per device; `items` are its messages, admitted
   * uncharged when `uncharged` (decoded in the worker thread).
   */
  private charge(u: Unit, items: readonly ChunkItem[], uncharged: boolean): void {
    const budget = this.o.budget;
    if (!budget?.active) return;
    const before = budget.backdatedBefore();
    const per = new Map<string, { n: number; back: number; messages: number }>();
    const of = (key: string) => {
      let e = per.get(key);
      if (!e) {
        e = { n: 0, back: 0, messages: 0 };
        per.set(key, e);
      }
      return e;
    };
    if (u.columns) {
      const c = u.columns;
      const n = new Array<number>(c.keys.length).fill(0);
      const back = new Array<number>(c.keys.length).fill(0);
      for (let r = 0; r < c.rows; r++) {
        const d = c.dev[r]!;
        n[d]!++;
        if (c.ts[r]! < before) back[d]!++;
      }
      c.keys.forEach((key, d) => {
        const e = of(key);
        e.n += n[d]!;
        e.back += back[d]!;
      });
    } else {
      for (const r of u.readings) {
        const e = of(r.deviceKey);
        e.n++;
        if (r.ts < before) e.back++;
      }
    }
    for (const it of items) {
      const key = routeTopic(it.topic);
      if (key && key.format !== 'native-status') of(key.deviceKey).messages++;
    }
    for (const [key, e] of per) budget.charge(key, e.n, e.back, e.messages, uncharged);
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
        this.charge(u, u.items ?? [], true);
        u.items = null;
        this.decodes.delete(done);
        this.o.line.decoded(u);
      });
    this.decodes.add(done);
  }
}
