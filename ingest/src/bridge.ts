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
 */
import { type Reading, TOPICS } from '@kilowatch/core';
import { StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import mqtt, { type MqttClient } from 'mqtt';
import type { BrokerSink, EmbeddedBroker, SinkPacket } from './broker.ts';
import { DeadLetterStore } from './deadLetters.ts';
import { decodeMessage, routeTopic, type StatusUpdate } from './decoders/index.ts';
import { type DeviceState, type LiveBus, LocalLiveBus } from './liveBus.ts';
import { createIngestMetrics } from './metrics.ts';
import { startRollupScheduler } from './rollupScheduler.ts';

export interface IngestLogger {
  info(o: object | string, msg?: string): void;
  warn(...a: unknown[]): void;
  error(...a: unknown[]): void;
}

export interface IngestOptions {
  store: TelemetryStore;
  /** `mqtt://127.0.0.1:1883`: an MQTT broker the bridge subscribes to (server deployment). */
  mqttUrl?: string;
  /** The embedded broker, attached to in process instead of subscribing over MQTT (embedded deployment). */
  broker?: EmbeddedBroker;
  /** Fixed, so the broker keeps the session (default `kilowatch-ingest`). */
  clientId?: string;
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
  /** Dead letters are appended here as JSON lines when set (and kept in memory, bounded, always). */
  deadLetterDir?: string;
  /** IANA zone of a device's local clock (Tasmota `Time`); default Europe/Warsaw. */
  timeZoneOf?: (deviceKey: string) => string | undefined;
  /** Longest a graceful stop waits for the store before leaving the rest to redelivery (default 15 s). */
  stopTimeoutMs?: number;
  logger?: IngestLogger;
}

export interface IngestRuntime {
  bus: LiveBus;
  deviceState(deviceKey: string): DeviceState | undefined;
  deviceStates(): DeviceState[];
  metricsText(): string;
  deadLetters(limit?: number): { at: number; topic: string; reason: string; payload: string }[];
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export const INGEST_SUBSCRIPTIONS = [
  'kilowatch/meters/+/readings',
  'kilowatch/meters/+/status',
  'tele/+/SENSOR',
  '+/events/rpc',
] as const;

export const SHARED_GROUP = 'kilowatch-ingest';

/** Topic filters the bridge subscribes to. */
export function subscriptionTopics(shared = false): string[] {
  return INGEST_SUBSCRIPTIONS.map((t) => (shared ? `$share/${SHARED_GROUP}/${t}` : t));
}

interface Message {
  readings: Reading[];
  /** Acknowledges the message to the broker (or, attached in process, to the meter) after commit. */
  ack?: () => void;
  /** Arrival (performance.now()), for the batch time bound. */
  at: number;
}

const AFTER_COMMIT = new Error('acknowledged after commit');
const silentLogger: IngestLogger = { info() {}, warn: console.warn, error: console.error };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Store writes in flight at once: one committing, the next validated and queued behind it. */
const MAX_WRITES = 2;

export async function startIngest(opts: IngestOptions): Promise<IngestRuntime> {
  const log = opts.logger ?? silentLogger;
  const store = opts.store;
  const batchSize = opts.batchSize ?? 2000;
  const flushIntervalMs = opts.flushIntervalMs ?? 20;
  const maxInFlight = opts.maxInFlight ?? 20_000;
  const rollupIntervalMs = opts.rollupIntervalMs ?? 10_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 15_000;

  const metrics = createIngestMetrics();
  const deadLetters = new DeadLetterStore(1000, opts.deadLetterDir, (e) =>
    log.error('dead-letter write failed', e),
  );
  const bus = new LocalLiveBus((e) => log.error('live listener failed', e));
  const states = new Map<string, DeviceState>();

  const pending: Message[] = [];
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
      lastSeen: update.online ? Date.now() : (prev?.lastSeen ?? null),
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

  if (Boolean(opts.mqttUrl) === Boolean(opts.broker))
    throw new Error('startIngest needs either mqttUrl or broker, not both');
  const client: MqttClient | null = opts.mqttUrl
    ? mqtt.connect(opts.mqttUrl, {
        clientId: opts.clientId ?? 'kilowatch-ingest',
        clean: false,
        protocolVersion: 4,
        reconnectPeriod: 1000,
        connectTimeout: 10_000,
        resubscribe: true,
      })
    : null;
  client?.on('close', () => {
    connection++;
  });
  client?.on('error', (e) => log.warn('mqtt error', e.message));
  client?.on('reconnect', () => log.info('mqtt reconnecting'));

  const ack = (m: Message) => {
    if (!abandoned) m.ack?.();
  };

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
  const ackAll = (batch: readonly Message[]) => {
    const stream = (client as unknown as { stream?: { cork?(): void; uncork?(): void } } | null)?.stream;
    stream?.cork?.();
    try {
      for (const m of batch) ack(m);
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

  /** Writes one batch, retrying with backoff while the store is unavailable. */
  const writeBatch = async (readings: Reading[]): Promise<'committed' | 'rejected' | 'abandoned'> => {
    let attempt = 0;
    for (;;) {
      if (abandoned) return 'abandoned';
      const t0 = performance.now();
      try {
        await store.write(readings);
        metrics.writeLatency.observe((performance.now() - t0) / 1000);
        return 'committed';
      } catch (e) {
        const retryable = !(e instanceof StoreError) || e.retryable;
        if (!retryable && attempt >= 2) {
          log.error('store rejected a batch; dead-lettering it', e);
          return 'rejected';
        }
        metrics.retried.inc();
        const delay = Math.min(5000, 100 * 2 ** Math.min(attempt, 6));
        log.warn(
          `store write failed (attempt ${attempt + 1}), retrying in ${delay} ms:`,
          (e as Error).message,
        );
        attempt++;
        await sleep(delay);
      }
    }
  };

  const takeBatch = (): Message[] => {
    const batch: Message[] = [];
    let n = 0;
    while (pending.length > 0) {
      const next = pending[0] as Message;
      if (batch.length > 0 && n + next.readings.length > batchSize) break;
      pending.shift();
      batch.push(next);
      n += next.readings.length;
    }
    pendingReadings -= n;
    return batch;
  };

  /** Oldest pending message has waited the idle time bound. */
  const due = () => pending.length > 0 && performance.now() - (pending[0] as Message).at >= flushIntervalMs;

  /** Commits one batch, then acknowledges and publishes it (or dead-letters it when refused). */
  const commit = async (batch: Message[]) => {
    const readings = batch.flatMap((m) => m.readings);
    const result = readings.length > 0 ? await writeBatch(readings) : 'committed';
    if (result === 'abandoned') return;
    if (result === 'committed') {
      if (readings.length > 0) {
        metrics.batches.inc();
        metrics.stored.inc(readings.length);
      }
      // Live first, then the acknowledgements: a process killed in between has its batch redelivered
      // (stored again, harmlessly) rather than acknowledged and never published live.
      for (const r of readings) {
        touch(r);
        bus.emitReading(r);
        if (opts.publishLive && client?.connected)
          client.publish(TOPICS.live(r.deviceKey), JSON.stringify(r), { qos: 0 });
      }
      ackAll(batch);
    } else {
      metrics.dropped.inc(readings.length, { reason: 'store-rejected' });
      for (const m of batch) {
        if (m.readings.length === 0) continue;
        metrics.rejected.inc(1, { reason: 'store-rejected' });
        deadLetters.add(
          `store/${m.readings[0]?.deviceKey ?? ''}`,
          'store-rejected',
          'the store refused the batch',
          JSON.stringify(m.readings),
        );
        ack(m);
      }
    }
    inFlight -= batch.length;
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
    while (pending.length > 0 && !abandoned && writes.size < MAX_WRITES) {
      const ready = force || pendingReadings >= batchSize || (writes.size === 0 && (afterCommit || due()));
      if (!ready) break;
      const write: Promise<void> = commit(takeBatch())
        .catch((e) => log.error('ingest writer failed', e))
        .finally(() => {
          writes.delete(write);
          pump(false, true);
        });
      writes.add(write);
    }
    if (!timer && writes.size === 0 && pending.length > 0 && !abandoned) {
      const wait = Math.max(0, (pending[0] as Message).at + flushIntervalMs - performance.now());
      timer = setTimeout(() => pump(), wait);
    }
  };

  /** Writes everything pending now and resolves once nothing is pending or being written. */
  const settle = async () => {
    while ((pending.length > 0 || writes.size > 0) && !abandoned) {
      pump(true);
      await Promise.all(writes);
    }
  };

  /**
   * Takes one message. `ack` acknowledges it after commit; `resume` lets the transport read on (held
   * while the in-flight window is full). A stopping bridge takes nothing more: the message stays
   * unacknowledged and is redelivered later.
   */
  const take = (packet: SinkPacket, ack: (() => void) | undefined, resume: () => void) => {
    if (stopping) return;
    metrics.received.inc();
    const topic = packet.topic;
    const payload = packet.payload;
    const decoded = decodeMessage(topic, payload, { now: Date.now(), timeZoneOf: opts.timeZoneOf });
    const message: Message = { readings: [], at: performance.now() };
    if (ack) message.ack = ack;
    switch (decoded.kind) {
      case 'rejected':
        metrics.rejected.inc(1, { reason: decoded.reason });
        deadLetters.add(topic, decoded.reason, decoded.detail, payload);
        break;
      case 'ignored':
        metrics.ignored.inc();
        break;
      case 'status':
        metrics.statuses.inc();
        applyStatus(decoded.deviceKey, decoded.update);
        break;
      case 'readings':
        message.readings = decoded.readings;
        break;
    }
    // Nothing waits ahead of a message without readings: acknowledge it in order, right away.
    if (message.readings.length === 0 && inFlight === 0) {
      ack?.();
      resume();
      return;
    }
    pending.push(message);
    inFlight++;
    pendingReadings += message.readings.length;
    gauges();
    pump();
    if (inFlight >= maxInFlight) {
      metrics.paused.set(1);
      held = resume;
    } else {
      resume();
    }
  };

  if (client) {
    client.handleMessage = ((packet, callback) => {
      const c = client;
      const ackAfter =
        packet.qos > 0 && packet.messageId !== undefined ? pubackLater(c, packet.messageId) : undefined;
      take(
        { topic: packet.topic, payload: packet.payload, qos: packet.qos },
        ackAfter,
        // mqtt.js skips its own PUBACK on this error and reads the next packet.
        () => callback(ackAfter ? AFTER_COMMIT : undefined),
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
          onRun: (result, e) => {
            metrics.rollupRuns.inc(1, { result });
            if (e) log.error('rollup refresh failed', e);
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
    metricsText: () => {
      gauges();
      return metrics.text();
    },
    deadLetters: (limit) => deadLetters.list(limit),
    async flush() {
      await settle();
      await deadLetters.flush();
    },
    stop() {
      stopped ??= (async () => {
        stopping = true;
        await rollups?.stop();
        const flushed = settle();
        let giveUp: NodeJS.Timeout | undefined;
        await Promise.race([flushed, new Promise<void>((r) => (giveUp = setTimeout(r, stopTimeoutMs)))]);
        clearTimeout(giveUp);
        if (pending.length > 0 || writes.size > 0) {
          abandoned = true;
          log.warn(`stopping with ${inFlight} unacknowledged messages; the broker will redeliver them`);
        }
        await deadLetters.flush();
        if (client) {
          await new Promise<void>((resolve) => {
            const t = setTimeout(() => client.end(true, {}, () => resolve()), 2000);
            client.end(false, {}, () => {
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
