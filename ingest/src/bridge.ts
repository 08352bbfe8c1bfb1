/**
 * The MQTT → store bridge. QoS 1 on a persistent session with a fixed client id; each message is
 * decoded and validated, its readings batched, and its PUBACK sent only once the store has committed
 * the batch holding it (at-least-once; the store's idempotent writes make a redelivery harmless).
 *
 * mqtt.js handles incoming packets one at a time and sends the PUBACK when `handleMessage` calls back.
 * Holding that callback until commit would leave one message per batch, so the callback is answered at
 * once with a marker error (mqtt.js then skips its PUBACK) and the PUBACK is written after the commit.
 * When the in-flight window is full the callback itself is held: mqtt.js stops reading the socket and
 * TCP pushes back on the broker, so memory stays bounded.
 *
 * In the embedded deployment the bridge attaches to the in-process broker instead (`broker`): the
 * meter's own PUBLISH is handed over before the broker acknowledges it, and its PUBACK is released
 * after the commit. A persistent session inside the same process would protect nothing a crash does
 * not also take; this way at-least-once reaches the meter itself, and the second MQTT hop (encode,
 * loopback socket, session queue, decode, PUBACK) is gone. The broker reads nothing more from a meter's
 * connection while its messages wait, which bounds memory the same way.
 *
 * When the store takes batches already laid out in columns (`writeColumns`: the embedded DuckDB), the
 * messages are decoded in a worker thread (`decodeThread.ts`) in chunks, in arrival order: the bridge's
 * own thread keeps MQTT, the commits and the acknowledgements. Until the thread is up, or if it fails,
 * the bridge decodes on its own thread.
 */
import { DEVICE_KEY_PATTERN, type Reading, TOPICS } from '@kilowatch/core';
import { StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import { type ColumnBatch, columnize, concatBatches, readingsOf } from '@kilowatch/tsdb/columns';
import mqtt, { type MqttClient } from 'mqtt';
import type { BrokerSink, EmbeddedBroker, SinkPacket } from './broker.ts';
import { DeadLetterStore } from './deadLetters.ts';
import { type Decoded, decodeMessage, routeTopic, type StatusUpdate } from './decoders/index.ts';
import { type ChunkItem, type ChunkReply, type DecodeThread, startDecodeThread } from './decodeThread.ts';
import { type DeviceState, type LiveBus, LocalLiveBus } from './liveBus.ts';
import { createIngestMetrics } from './metrics.ts';
import { type RollupLock, startRollupScheduler } from './rollupScheduler.ts';

/**
 * Where ingest reports (pino's shape, so the API's logger fits as it is): a message alone, or an object
 * first (`{ err }` for an error) and the message after it.
 */
export interface IngestLogger {
  info(o: object | string, msg?: string): void;
  warn(o: object | string, msg?: string): void;
  error(o: object | string, msg?: string): void;
}

/** An `IngestLogger` on the console, for use without one (`info` is dropped unless `verbose`). */
export function consoleLogger(verbose = false): IngestLogger {
  const line =
    (write: (...a: unknown[]) => void) =>
    (o: object | string, msg?: string): void => {
      if (typeof o === 'string') {
        write(o);
        return;
      }
      const { err, ...rest } = o as { err?: unknown };
      const detail = err instanceof Error ? err.message : err === undefined ? '' : String(err);
      write([msg ?? '', detail].filter(Boolean).join(': '), ...(Object.keys(rest).length ? [rest] : []));
    };
  return {
    info: verbose ? line(console.log) : () => {},
    warn: line(console.warn),
    error: line(console.error),
  };
}

export interface IngestOptions {
  store: TelemetryStore;
  /** `mqtt://127.0.0.1:1883`: an MQTT broker the bridge subscribes to (server deployment). */
  mqttUrl?: string;
  /** The embedded broker, attached to in process instead of subscribing over MQTT (embedded deployment). */
  broker?: EmbeddedBroker;
  /** The services' MQTT account on an external broker (`KW_MQTT_USERNAME`, `KW_MQTT_PASSWORD`). */
  mqttUsername?: string;
  mqttPassword?: string;
  /** Fixed, so the broker keeps the session (default `kilowatch-ingest`). */
  clientId?: string;
  /**
   * MQTT 5 session expiry (seconds) on an external broker: how long the broker keeps this process's
   * session, with what it queued for it, after the connection drops without a clean leave (a crash). A
   * restart under the same client id within it takes everything up; past it, the broker discards the
   * session, its place in the shared group and what waited in it (`DEFAULT_SESSION_EXPIRY_S` is the
   * deployment's default). A graceful stop leaves
   * at once (expiry 0) after acknowledging all it was given. Unset: MQTT 3.1.1, and the broker keeps the
   * session for as long as it keeps any (a graceful stop still leaves the shared group first).
   */
  sessionExpirySeconds?: number;
  /**
   * Asked at a graceful stop: leave the shared group (true), or keep the subscription and the session
   * for a restart under the same id (false)? The last member must stay: a group with no member makes
   * the broker drop what meters publish meanwhile. Default: leave when `shared`, stay otherwise (a
   * single ingest keeps its session so that what arrives while it restarts is queued for it).
   */
  leaveGroup?: () => Promise<boolean>;
  /** Subscribe through `$share/kilowatch-ingest/...` (several ingest replicas). */
  shared?: boolean;
  /** Publish committed readings on `kilowatch/live/<deviceKey>` (QoS 0) for api replicas. */
  publishLive?: boolean;
  /** Readings per store write (default 2,000). */
  batchSize?: number;
  /** How long the first reading of an idle bridge waits for company before it is written (default 20 ms). */
  flushIntervalMs?: number;
  /** Messages received and not yet acknowledged before the bridge stops reading (default 20,000). */
  maxInFlight?: number;
  /** Rollup scheduler period; 0 = off (default 10 s). */
  rollupIntervalMs?: number;
  /** Shared by the ingest processes of a deployment: one of them refreshes a dirty range, once. */
  rollupLock?: RollupLock;
  /** Dead letters are appended here as JSON lines when set (and kept in memory, bounded, always). */
  deadLetterDir?: string;
  /** IANA zone of a device's local clock (Tasmota `Time`); default Europe/Warsaw. */
  timeZoneOf?: (deviceKey: string) => string | undefined;
  /** Longest a graceful stop waits for the store before leaving the rest to redelivery (default 15 s). */
  stopTimeoutMs?: number;
  /**
   * Decode in a worker thread when the store takes column batches (default true). Off, every message is
   * decoded on the bridge's own thread.
   */
  decodeThread?: boolean;
  /**
   * On an external broker, the device whose stock Tasmota topic is `tasmota_<suffix>` (the last 6 hex digits
   * of its MAC, upper case), or null when no claimed device — or more than one — has that suffix. The broker
   * lets only that meter publish there; the embedded broker names the device itself and needs none.
   */
  tasmotaDevice?: (suffix: string) => Promise<string | null>;
  /** The clock readings are judged by (a timestamp from the future is refused) and devices are seen at. */
  now?: () => number;
  logger?: IngestLogger;
}

export interface IngestRuntime {
  bus: LiveBus;
  deviceState(deviceKey: string): DeviceState | undefined;
  deviceStates(): DeviceState[];
  metricsText(): string;
  /**
   * Why the store refuses writes right now (its last error, until a write commits again), or null. With a
   * configuration error (a missing database, refused credentials) readings wait unacknowledged for the fix.
   */
  writeProblem(): string | null;
  /** Whether its MQTT connection is up (always, attached to the embedded broker). */
  mqttConnected(): boolean;
  deadLetters(limit?: number): { at: number; topic: string; reason: string; payload: string }[];
  /** The last message of a device that ingest refused (bad payload), if any since start. */
  lastRejection(deviceKey: string): { topic: string; reason: string; detail: string; at: number } | undefined;
  flush(): Promise<void>;
  stop(): Promise<void>;
  /** Whether messages are being decoded in the worker thread now. */
  readonly decodingInThread: boolean;
}

export const INGEST_SUBSCRIPTIONS = [
  'kilowatch/meters/+/readings',
  'kilowatch/meters/+/status',
  'tele/+/SENSOR',
  '+/events/rpc',
] as const;

export const SHARED_GROUP = 'kilowatch-ingest';

/** Default of `IngestOptions.sessionExpirySeconds`. */
export const DEFAULT_SESSION_EXPIRY_S = 600;
/** A leaving bridge has drained what the broker still had for it once nothing arrived for this long. */
const DRAIN_QUIET_MS = 500;

/** Topic filters the bridge subscribes to. */
export function subscriptionTopics(shared = false): string[] {
  return INGEST_SUBSCRIPTIONS.map((t) => (shared ? `$share/${SHARED_GROUP}/${t}` : t));
}

/**
 * One message decoded on the bridge's thread, or a chunk of them decoded together in the worker thread.
 * A unit is committed and acknowledged whole.
 */
interface Unit {
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

/** A stock Tasmota topic: `tele/tasmota_A1B2C3/SENSOR`. */
const STOCK_TASMOTA = /^(tele|stat)\/tasmota_([0-9A-Fa-f]{6})\/(.+)$/;

/** Messages sent to the decode thread at once, at most. */
const CHUNK_MESSAGES = 256;

const AFTER_COMMIT = new Error('acknowledged after commit');

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Store writes in flight at once: one committing, the next validated and queued behind it. */
const MAX_WRITES = 2;

export async function startIngest(opts: IngestOptions): Promise<IngestRuntime> {
  const log = opts.logger ?? consoleLogger();
  const store = opts.store;
  const batchSize = opts.batchSize ?? 2000;
  const flushIntervalMs = opts.flushIntervalMs ?? 20;
  const maxInFlight = opts.maxInFlight ?? 20_000;
  const rollupIntervalMs = opts.rollupIntervalMs ?? 10_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 15_000;
  const now = opts.now ?? Date.now;

  const metrics = createIngestMetrics();
  const deadLetters = new DeadLetterStore(1000, opts.deadLetterDir, (e) =>
    log.error({ err: e }, 'dead-letter write failed'),
  );
  const bus = new LocalLiveBus((e) => log.error({ err: e }, 'live listener failed'));
  const states = new Map<string, DeviceState>();
  /** Each device's last refused message (bounded: the oldest device is forgotten first). */
  const rejections = new Map<string, { topic: string; reason: string; detail: string; at: number }>();

  const pending: Unit[] = [];
  /**
   * Attached to the embedded broker: messages waiting for their commit, per publishing connection. Such
   * a connection sends nothing more until acknowledged (the broker stops reading it, and a client
   * replaying its queue after a reconnect sends one message per PUBACK), so once every connection
   * that publishes waits, no company can come: the batch is written at once instead of after
   * `flushIntervalMs`.
   */
  const waiting = new Map<string, number>();
  const everyoneWaits = () =>
    opts.broker !== undefined && waiting.size > 0 && waiting.size >= opts.broker.publishers();
  /** The chunk gathering messages for the decode thread (the last of `pending`), if any. */
  let chunk: Unit | null = null;
  /** Chunks in the decode thread. */
  const decodes = new Set<Promise<void>>();
  const decoder: DecodeThread | null =
    opts.decodeThread !== false && typeof store.writeColumns === 'function'
      ? startDecodeThread(
          (e) => log.warn({ err: e }, 'the decode thread failed; decoding on the bridge thread'),
          undefined,
          () => log.info('ingest decodes in a worker thread'),
        )
      : null;
  let pendingReadings = 0;
  let inFlight = 0;
  let held: (() => void) | null = null;
  /** Store writes in flight (at most `MAX_WRITES`). */
  const writes = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let connection = 0;
  let stopping = false;
  /** Set when a stop gave up waiting: retries end and nothing more is acknowledged. */
  let abandoned = false;

  const gauges = () => {
    metrics.bufferMessages.set(inFlight);
    metrics.bufferReadings.set(pendingReadings);
  };

  const setState = (deviceKey: string, next: DeviceState) => {
    const prev = states.get(deviceKey);
    states.set(deviceKey, next);
    if (!prev || prev.status !== next.status || prev.rssi !== next.rssi) bus.emitStatus({ ...next });
  };

  const applyStatus = (deviceKey: string, update: StatusUpdate) => {
    const prev = states.get(deviceKey);
    const next: DeviceState = {
      deviceKey,
      status: update.status,
      lastSeen: update.online ? now() : (prev?.lastSeen ?? null),
    };
    const rssi = update.rssi ?? (update.online ? prev?.rssi : undefined);
    if (rssi !== undefined) next.rssi = rssi;
    setState(deviceKey, next);
  };

  const touch = (r: Reading) => {
    const prev = states.get(r.deviceKey);
    if (prev && prev.status !== 'offline') {
      if ((prev.lastSeen ?? 0) < r.ts) prev.lastSeen = r.ts;
      return;
    }
    const next: DeviceState = {
      deviceKey: r.deviceKey,
      status: 'online',
      lastSeen: Math.max(r.ts, prev?.lastSeen ?? 0),
    };
    if (prev?.rssi !== undefined) next.rssi = prev.rssi;
    setState(r.deviceKey, next);
  };

  const clientId = opts.clientId ?? 'kilowatch-ingest';
  if (Boolean(opts.mqttUrl) === Boolean(opts.broker))
    throw new Error('startIngest needs either mqttUrl or broker, not both');
  const client: MqttClient | null = opts.mqttUrl
    ? mqtt.connect(opts.mqttUrl, {
        clientId,
        ...(opts.mqttUsername ? { username: opts.mqttUsername, password: opts.mqttPassword ?? '' } : {}),
        clean: false,
        // MQTT 5 for the session expiry: group membership follows liveness (see `sessionExpirySeconds`).
        // Without one, MQTT 3.1.1 and a session the broker keeps (brokers without MQTT 5, such as aedes).
        ...(opts.sessionExpirySeconds !== undefined
          ? { protocolVersion: 5 as const, properties: { sessionExpiryInterval: opts.sessionExpirySeconds } }
          : { protocolVersion: 4 as const }),
        reconnectPeriod: 1000,
        connectTimeout: 10_000,
        resubscribe: true,
      })
    : null;
  // A broker closes a connection when another client connects with the same id: two ingest processes
  // sharing one id take the session from each other every second. Said once a minute, with the cure.
  let connectedAt = 0;
  let quickCloses: number[] = [];
  let toldTakeover = Number.NEGATIVE_INFINITY;
  client?.on('connect', () => {
    connectedAt = performance.now();
  });
  client?.on('close', () => {
    connection++;
    const now = performance.now();
    if (connectedAt > 0 && now - connectedAt < 5_000) quickCloses.push(now);
    quickCloses = quickCloses.filter((t) => now - t < 60_000);
    if (quickCloses.length >= 3 && now - toldTakeover >= 60_000) {
      toldTakeover = now;
      log.error(
        { clientId, closes: quickCloses.length },
        'the MQTT connection keeps closing right after it opens: is another ingest process using the same client id? Give each one its own (KW_INGEST_CLIENT_ID)',
      );
    }
  });
  client?.on('error', (e) => log.warn({ err: e }, 'mqtt error'));
  client?.on('reconnect', () => log.info('mqtt reconnecting'));

  /** A PUBACK on the bridge's own MQTT connection, valid only on the connection the message came by. */
  const pubackLater = (c: MqttClient, messageId: number): (() => void) => {
    const on = connection;
    return () => {
      if (on !== connection || !c.connected) return;
      // Same packet mqtt.js would have sent from handleMessage's callback (see the note at the top).
      (c as unknown as { _sendPacket(p: object): void })._sendPacket({ cmd: 'puback', messageId });
    };
  };

  /** Acknowledges a batch's messages with one socket write (corked), not one write per PUBACK. */
  const ackAll = (batch: readonly Unit[]) => {
    if (abandoned) return;
    const stream = (client as unknown as { stream?: { cork?(): void; uncork?(): void } } | null)?.stream;
    stream?.cork?.();
    try {
      for (const u of batch) for (const a of u.acks) a();
    } finally {
      stream?.uncork?.();
    }
  };

  const release = () => {
    if (held && inFlight < maxInFlight) {
      const cb = held;
      held = null;
      metrics.paused.set(0);
      cb();
    }
  };

  /**
   * The store's write of a batch of units: columns when any unit was decoded in the worker thread (the
   * units joined column by column, or laid out again when a device's readings do not move forward
   * from one to the next), else the readings.
   */
  const storeWrite = (units: readonly Unit[]): (() => Promise<unknown>) => {
    if (!units.some((u) => u.columns) || !store.writeColumns) {
      const readings = units.flatMap((u) => u.readings);
      return () => store.write(readings);
    }
    const parts = units.flatMap((u) =>
      u.columns ? [u.columns] : u.readings.length > 0 ? [columnize(u.readings)] : [],
    );
    const columns =
      (parts.length === 1 ? parts[0]! : concatBatches(parts)) ??
      columnize(units.flatMap((u) => (u.columns ? readingsOf(u.columns) : u.readings)));
    return () => store.writeColumns!(columns);
  };

  /** The store's last write error, until a write commits again (health reports it). */
  let writeProblem: string | null = null;
  /** When a write failure was last logged, and which: a store down for an hour is not 700 log lines. */
  let lastFailureLog = { at: -Infinity, message: '' };
  let lastRollupFailure = { at: -Infinity, message: '' };

  /**
   * Writes one batch, retrying with backoff while the store is unavailable or misconfigured. A
   * configuration error (database missing, credentials refused) is the deployment's, not the readings':
   * they wait, unacknowledged, until it is fixed. Anything else the store refuses for good is the batch's
   * own: after two more tries it goes to the dead letters.
   */
  const writeBatch = async (units: readonly Unit[]): Promise<'committed' | 'rejected' | 'abandoned'> => {
    let write: () => Promise<unknown>;
    try {
      write = storeWrite(units);
    } catch (e) {
      // Laying the readings out refused them (the store would have, the same way).
      log.error({ err: e }, 'store rejected a batch; dead-lettering it');
      return 'rejected';
    }
    let attempt = 0;
    for (;;) {
      if (abandoned) return 'abandoned';
      const t0 = performance.now();
      try {
        await write();
        metrics.writeLatency.observe((performance.now() - t0) / 1000);
        if (writeProblem !== null) {
          writeProblem = null;
          lastFailureLog = { at: -Infinity, message: '' };
          log.info('store writes commit again');
        }
        return 'committed';
      } catch (e) {
        const storeError = e instanceof StoreError ? e : null;
        const held = storeError?.kind === 'configuration';
        const retryable = !storeError || storeError.retryable || held;
        if (!retryable && attempt >= 2) {
          log.error({ err: e }, 'store rejected a batch; dead-lettering it');
          return 'rejected';
        }
        const message = e instanceof Error ? e.message : String(e);
        writeProblem = message;
        metrics.retried.inc();
        const delay = Math.min(held ? 10_000 : 5000, 100 * 2 ** Math.min(attempt, 7));
        const now = performance.now();
        if (message !== lastFailureLog.message || now - lastFailureLog.at >= 60_000) {
          lastFailureLog = { at: now, message };
          const what = held
            ? 'store refuses writes until its configuration is fixed; readings wait unacknowledged'
            : 'store write failed';
          (held ? log.error : log.warn).call(log, { err: e, attempt: attempt + 1, retryInMs: delay }, what);
        }
        attempt++;
        await sleep(delay);
      }
    }
  };

  /** Decoded units from the head of the line, up to a batch of readings (a unit is never split). */
  const takeBatch = (): Unit[] => {
    const batch: Unit[] = [];
    let n = 0;
    while (pending.length > 0 && (pending[0] as Unit).ready) {
      const next = pending[0] as Unit;
      if (batch.length > 0 && n + next.count > batchSize) break;
      pending.shift();
      batch.push(next);
      n += next.count;
    }
    pendingReadings -= n;
    return batch;
  };

  /** Oldest pending message has waited the idle time bound. */
  const due = () => pending.length > 0 && performance.now() - (pending[0] as Unit).at >= flushIntervalMs;

  /** A committed reading: the device is seen, and the reading goes live. */
  const published = (r: Reading, live: boolean) => {
    touch(r);
    if (!live) return;
    bus.emitReading(r);
    if (opts.publishLive && client?.connected)
      client.publish(TOPICS.live(r.deviceKey), JSON.stringify(r), { qos: 0 });
  };

  /** A unit's readings rebuilt from its columns, with the sequence numbers the meters sent. */
  const liveReadings = (c: ColumnBatch, seq: Float64Array | null): Reading[] => {
    const readings = readingsOf(c);
    if (seq) for (let r = 0; r < readings.length; r++) if (!Number.isNaN(seq[r])) readings[r]!.seq = seq[r]!;
    return readings;
  };

  /** Commits one batch, then acknowledges and publishes it (or dead-letters it when refused). */
  const commit = async (batch: Unit[]) => {
    const count = batch.reduce((n, u) => n + u.count, 0);
    const result = count > 0 ? await writeBatch(batch) : 'committed';
    if (result === 'abandoned') return;
    if (result === 'committed') {
      if (count > 0) {
        metrics.batches.inc();
        metrics.stored.inc(count);
      }
      // Live first, then the acknowledgements: a process killed in between has its batch redelivered
      // (stored again, harmlessly) rather than acknowledged and never published live. Readings decoded in
      // the worker thread are rebuilt from their columns only when someone listens.
      const live = bus.hasReadingListeners || Boolean(opts.publishLive && client?.connected);
      for (const u of batch) {
        for (const r of u.readings) published(r, true);
        const c = u.columns;
        if (!c) continue;
        if (live) for (const r of liveReadings(c, u.seq)) published(r, true);
        else
          for (let d = 0; d < c.keys.length; d++)
            touch({ deviceKey: c.keys[d]!, ts: c.maxByDev[d]!, values: {} });
      }
      ackAll(batch);
    } else {
      metrics.dropped.inc(count, { reason: 'store-rejected' });
      for (const u of batch) {
        if (u.count === 0) continue;
        metrics.rejected.inc(u.withReadings, { reason: 'store-rejected' });
        deadLetters.add(
          `store/${u.deviceKey}`,
          'store-rejected',
          'the store refused the batch',
          JSON.stringify(u.columns ? liveReadings(u.columns, u.seq) : u.readings),
        );
      }
      ackAll(batch);
    }
    inFlight -= batch.reduce((n, u) => n + u.messages, 0);
    gauges();
    release();
  };

  /**
   * Group commit. An idle bridge gives the first reading `flushIntervalMs` to gather company; while a
   * batch commits, what arrives gathers behind it and is written the moment it finishes, whatever its
   * size — so a batch holds about one commit's worth of readings and waits for at most one commit
   * ahead of it. A full batch does not wait: it is handed to the store at once (up to `MAX_WRITES`
   * writes in flight), so its validation and layout overlap the commit ahead while the store keeps
   * commits in order.
   */
  const pump = (force = false, afterCommit = false) => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    while (pending.length > 0 && (pending[0] as Unit).ready && !abandoned && writes.size < MAX_WRITES) {
      const ready =
        force ||
        pendingReadings >= batchSize ||
        (writes.size === 0 && (afterCommit || due() || everyoneWaits()));
      if (!ready) break;
      const write: Promise<void> = commit(takeBatch())
        .catch((e) => log.error({ err: e }, 'ingest writer failed'))
        .finally(() => {
          writes.delete(write);
          pump(false, true);
        });
      writes.add(write);
    }
    // A unit still being decoded pumps again when it is back.
    if (!timer && writes.size === 0 && pending.length > 0 && (pending[0] as Unit).ready && !abandoned) {
      const wait = Math.max(0, (pending[0] as Unit).at + flushIntervalMs - performance.now());
      timer = setTimeout(() => pump(), wait);
    }
  };

  /** Writes everything pending now and resolves once nothing is pending, decoding or being written. */
  const settle = async () => {
    while ((pending.length > 0 || writes.size > 0) && !abandoned) {
      if (chunk) sendChunk();
      pump(true);
      await Promise.all([...writes, ...decodes]);
    }
  };

  const unit = (at: number, deviceKey: string): Unit => ({
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

  /** A message decoded (on whichever thread): counted, dead-lettered or applied, its readings kept. */
  const outcome = (u: Unit, topic: string, payload: Uint8Array | string, d: Decoded) => {
    switch (d.kind) {
      case 'rejected': {
        metrics.rejected.inc(1, { reason: d.reason });
        deadLetters.add(topic, d.reason, d.detail, payload);
        const key = d.deviceKey ?? routeTopic(topic)?.deviceKey;
        if (key && DEVICE_KEY_PATTERN.test(key)) {
          rejections.delete(key);
          const rejection = { topic, reason: d.reason, detail: d.detail, at: Date.now() };
          rejections.set(key, rejection);
          if (rejections.size > 10_000) rejections.delete(rejections.keys().next().value as string);
          // API processes beside an external broker report it on the device's connection route.
          if (opts.publishLive && client?.connected)
            client.publish(TOPICS.rejected(key), JSON.stringify(rejection), { qos: 0 });
        }
        break;
      }
      case 'ignored':
        metrics.ignored.inc();
        break;
      case 'status':
        metrics.statuses.inc();
        applyStatus(d.deviceKey, d.update);
        break;
      case 'readings':
        for (const r of d.readings) u.readings.push(r);
        u.count += d.readings.length;
        u.withReadings++;
        break;
    }
  };

  /** Decodes a unit's messages on this thread (no decode thread, or it failed with them). */
  const decodeHere = (u: Unit) => {
    const at = now();
    for (const it of u.items ?? []) {
      outcome(
        u,
        it.topic,
        it.payload,
        decodeMessage(it.topic, it.payload, { now: at, timeZoneOf: () => it.tz ?? undefined }),
      );
    }
  };

  /** The decode thread's answer for a chunk, applied message by message in order. */
  const applyReply = (u: Unit, reply: ChunkReply) => {
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
      outcome(u, items[i]!.topic, items[i]!.payload, o.decoded);
    }
    if (reply.columns) {
      u.columns = reply.columns;
      u.seq = reply.seq;
    } else if (reply.readings) u.readings = reply.readings;
  };

  /** Hands the open chunk to the decode thread; it rejoins the line, in place, once decoded. */
  const sendChunk = () => {
    const u = chunk;
    if (!u) return;
    chunk = null;
    const done = (decoder as DecodeThread)
      .decode(u.items ?? [], now())
      .then(
        (reply) => applyReply(u, reply),
        () => decodeHere(u),
      )
      .catch((e) => {
        // A reply that does not fit its chunk: decode the messages here instead.
        log.error({ err: e }, 'decode thread reply refused; decoding on the bridge thread');
        u.readings = [];
        u.columns = null;
        u.seq = null;
        u.count = 0;
        u.withReadings = 0;
        decodeHere(u);
      })
      .finally(() => {
        u.items = null;
        u.ready = true;
        pendingReadings += u.count;
        decodes.delete(done);
        gauges();
        pump();
      });
    decodes.add(done);
  };

  /**
   * Takes one message. `ack` acknowledges it after commit; `resume` lets the transport read on (held
   * while the in-flight window is full). A stopping bridge takes nothing more: the message stays
   * unacknowledged and is redelivered later.
   */
  const take = (packet: SinkPacket, acknowledge: (() => void) | undefined, resume: () => void) => {
    if (stopping) return;
    let ack = acknowledge;
    const from = packet.clientId;
    if (ack && from !== undefined && opts.broker) {
      waiting.set(from, (waiting.get(from) ?? 0) + 1);
      const inner = ack;
      ack = () => {
        const n = (waiting.get(from) ?? 1) - 1;
        if (n > 0) waiting.set(from, n);
        else waiting.delete(from);
        inner();
      };
    }
    metrics.received.inc();
    const topic = packet.topic;
    const payload = packet.payload;
    if (decoder?.ready) {
      // To the decode thread, in chunks: what arrives in one turn of the event loop goes together.
      let u = chunk;
      if (!u) {
        u = unit(performance.now(), routeTopic(topic)?.deviceKey ?? '');
        u.items = [];
        chunk = u;
        pending.push(u);
        setImmediate(sendChunk);
      }
      const tz =
        opts.timeZoneOf && topic.startsWith('tele/')
          ? opts.timeZoneOf(routeTopic(topic)?.deviceKey ?? '')
          : undefined;
      (u.items as ChunkItem[]).push({ topic, payload, tz: tz ?? null });
      if (ack) u.acks.push(ack);
      u.messages++;
      if (u.messages >= CHUNK_MESSAGES) sendChunk();
    } else {
      const u = unit(performance.now(), routeTopic(topic)?.deviceKey ?? '');
      outcome(u, topic, payload, decodeMessage(topic, payload, { now: now(), timeZoneOf: opts.timeZoneOf }));
      // Nothing waits ahead of a message without readings: acknowledge it in order, right away.
      if (u.count === 0 && inFlight === 0) {
        ack?.();
        resume();
        return;
      }
      if (ack) u.acks.push(ack);
      u.messages = 1;
      u.ready = true;
      pending.push(u);
      pendingReadings += u.count;
      // A message decoded here behind an open chunk must not pass it: the chunk goes now.
      if (chunk) sendChunk();
    }
    inFlight++;
    gauges();
    pump();
    if (inFlight >= maxInFlight) {
      metrics.paused.set(1);
      held = resume;
    } else {
      resume();
    }
  };

  /** Stock Tasmota topics resolved to device keys, for a minute (unknown suffixes for 5 s). */
  const tasmotaKeys = new Map<string, { key: string | null; at: number }>();
  const tasmotaKey = async (suffix: string): Promise<string | null> => {
    const hit = tasmotaKeys.get(suffix);
    const t = performance.now();
    if (hit && t - hit.at < (hit.key ? 60_000 : 5_000)) return hit.key;
    const key = await opts.tasmotaDevice!(suffix).catch((e: unknown) => {
      log.warn({ err: e }, 'could not look up the device of a Tasmota topic');
      return null;
    });
    tasmotaKeys.set(suffix, { key, at: t });
    if (tasmotaKeys.size > 10_000) tasmotaKeys.delete(tasmotaKeys.keys().next().value as string);
    return key;
  };

  if (client) {
    client.handleMessage = ((packet, callback) => {
      const c = client;
      const ackAfter =
        packet.qos > 0 && packet.messageId !== undefined ? pubackLater(c, packet.messageId) : undefined;
      const go = (topic: string) =>
        take(
          { topic, payload: packet.payload, qos: packet.qos },
          ackAfter,
          // mqtt.js skips its own PUBACK on this error and reads the next packet.
          () => callback(ackAfter ? AFTER_COMMIT : undefined),
        );
      const stock = opts.tasmotaDevice ? STOCK_TASMOTA.exec(packet.topic) : null;
      if (!stock) return go(packet.topic);
      // mqtt.js reads the next packet only after the callback: the order is kept.
      void tasmotaKey(stock[2]!.toUpperCase()).then((key) =>
        go(key ? `${stock[1]}/${key}/${stock[3]}` : packet.topic),
      );
    }) as MqttClient['handleMessage'];
    await new Promise<void>((resolve, reject) => {
      const onError = (e: Error) => {
        client.end(true);
        reject(e);
      };
      client.once('connect', () => {
        client.off('error', onError);
        resolve();
      });
      client.once('error', onError);
    });
    await client.subscribeAsync(subscriptionTopics(opts.shared), { qos: 1 });
    log.info({ mqttUrl: opts.mqttUrl, topics: subscriptionTopics(opts.shared) }, 'ingest subscribed');
  } else if (opts.broker) {
    const sink: BrokerSink = {
      // Readings topics: the meter's PUBACK waits for the commit. Statuses (also sent as wills) are
      // not stored, so they are watched after the broker took them.
      takes: (topic) => {
        const route = routeTopic(topic);
        return route !== null && route.format !== 'native-status';
      },
      publish: (packet, done) => take(packet, done, () => {}),
      watch: ['kilowatch/meters/+/status'],
      message: (packet) => take(packet, undefined, () => {}),
    };
    await opts.broker.attach(sink);
    log.info({ broker: opts.broker.url }, 'ingest attached to the embedded broker');
  }

  const rollups =
    rollupIntervalMs > 0
      ? startRollupScheduler({
          store,
          intervalMs: rollupIntervalMs,
          now,
          ...(opts.rollupLock ? { lock: opts.rollupLock } : {}),
          onRun: (result, e, outcome) => {
            metrics.rollupRuns.inc(1, { result });
            if (outcome) metrics.rollupBuckets.inc(outcome.buckets);
            if (!e) {
              lastRollupFailure = { at: -Infinity, message: '' };
              return;
            }
            // Logged when the reason changes, else once a minute: the scheduler retries every interval.
            const message = e instanceof Error ? e.message : String(e);
            const now = performance.now();
            if (message === lastRollupFailure.message && now - lastRollupFailure.at < 60_000) return;
            lastRollupFailure = { at: now, message };
            log.error({ err: e }, 'rollup refresh failed');
          },
        })
      : null;

  let stopped: Promise<void> | null = null;

  return {
    bus,
    deviceState: (key) => {
      const s = states.get(key);
      return s ? { ...s } : undefined;
    },
    deviceStates: () => [...states.values()].map((s) => ({ ...s })),
    writeProblem: () => writeProblem,
    mqttConnected: () => client?.connected ?? true,
    metricsText: () => {
      gauges();
      return metrics.text();
    },
    deadLetters: (limit) => deadLetters.list(limit),
    lastRejection: (key) => {
      const r = rejections.get(key);
      return r ? { ...r } : undefined;
    },
    get decodingInThread() {
      return decoder?.ready ?? false;
    },
    async flush() {
      await settle();
      await deadLetters.flush();
    },
    stop() {
      stopped ??= (async () => {
        await rollups?.stop();
        // A clean leave: out of the shared group first, so the broker routes nothing more here; then what
        // it had already sent or queued for this session is taken, committed and acknowledged like any
        // message, and only then is the session ended (below).
        let left = false;
        const leave = await (opts.leaveGroup ?? (async () => Boolean(opts.shared)))().catch((e: unknown) => {
          log.warn({ err: e }, 'could not tell whether other ingest processes run; keeping the session');
          return false;
        });
        if (client?.connected && leave) {
          const drainUntil = performance.now() + stopTimeoutMs;
          try {
            await client.unsubscribeAsync(subscriptionTopics(opts.shared));
            let seen = -1;
            while (performance.now() < drainUntil) {
              const now = metrics.received.total();
              if (now === seen && inFlight === 0) break;
              seen = now;
              await sleep(DRAIN_QUIET_MS);
            }
            left = true;
          } catch (e) {
            log.warn(
              { err: e },
              'could not leave the shared subscription; the session is kept for redelivery',
            );
          }
        }
        stopping = true;
        const flushed = settle();
        let giveUp: NodeJS.Timeout | undefined;
        await Promise.race([flushed, new Promise<void>((r) => (giveUp = setTimeout(r, stopTimeoutMs)))]);
        clearTimeout(giveUp);
        if (pending.length > 0 || writes.size > 0) {
          abandoned = true;
          log.warn(`stopping with ${inFlight} unacknowledged messages; the broker will redeliver them`);
        }
        await deadLetters.flush();
        await decoder?.close();
        if (client) {
          // Everything given is acknowledged: the session ends now (expiry 0), and with it this process's
          // place in the group. Otherwise it is kept for the same client id to take up.
          const end =
            left && !abandoned && opts.sessionExpirySeconds !== undefined
              ? { properties: { sessionExpiryInterval: 0 } }
              : {};
          await new Promise<void>((resolve) => {
            const t = setTimeout(() => client.end(true, {}, () => resolve()), 2000);
            client.end(false, end, () => {
              clearTimeout(t);
              resolve();
            });
          });
        }
      })();
      return stopped;
    },
  };
}
