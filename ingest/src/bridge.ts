/**
 * The MQTT → store bridge, composed of parts with one job each (`bridge/`):
 *
 * - the transport (`transport.ts`): an MQTT connection and its subscriptions (server deployment), or
 *   the in-process broker it is attached to (embedded deployment); it hands over each message with its
 *   acknowledgement, which waits for the commit (at-least-once; the store's idempotent writes make a
 *   redelivery harmless);
 * - the decode pipeline (`decodePipeline.ts`): messages decoded and validated, on this thread or in
 *   chunks in a worker thread when the store takes batches already laid out in columns;
 * - the batch writer (`batchWriter.ts`): group commit, retries, dead letters for refused batches, the
 *   in-flight window that holds the transport;
 * - device states (`deviceStates.ts`): statuses, last seen, last refusal;
 * - the live publisher (`livePublisher.ts`): committed readings to the live bus and, when asked, MQTT.
 */
import { columnWriter, type TelemetryStore } from '@kilowatch/tsdb';
import { BatchWriter } from './bridge/batchWriter.ts';
import { DecodePipeline } from './bridge/decodePipeline.ts';
import { DeviceStates, type Rejection } from './bridge/deviceStates.ts';
import { LivePublisher } from './bridge/livePublisher.ts';
import { consoleLogger, type IngestLogger, sleep } from './bridge/logger.ts';
import { MeterBudget, type MeterLimits } from './bridge/meterBudget.ts';
import { attachBroker, connectMqtt, type Transport } from './bridge/transport.ts';
import type { Unit } from './bridge/units.ts';
import type { EmbeddedBroker, SinkPacket } from './broker.ts';
import { DeadLetterStore } from './deadLetters.ts';
import { type DeviceState, type LiveBus, LocalLiveBus } from './liveBus.ts';
import { createIngestMetrics } from './metrics.ts';
import { type RollupLock, startRollupScheduler } from './rollupScheduler.ts';

export { consoleLogger, type IngestLogger } from './bridge/logger.ts';
export { DEFAULT_METER_LIMITS, type MeterLimits } from './bridge/meterBudget.ts';
export {
  INGEST_SUBSCRIPTIONS,
  SHARED_GROUP,
  subscriptionTopics,
} from './bridge/transport.ts';

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
  /**
   * Each meter's write budget (`bridge/meterBudget.ts`): readings a second and at once, and how many of
   * them may be backdated; past it its messages are refused, acknowledged and counted. Unset: no bound
   * (the server passes `KW_METER_*`, whose defaults are `DEFAULT_METER_LIMITS`).
   */
  meterLimits?: MeterLimits;
  /**
   * The clock readings are judged by (a timestamp from the future is refused), devices are seen at and
   * meters' budgets fill by.
   */
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
  lastRejection(deviceKey: string): Rejection | undefined;
  flush(): Promise<void>;
  stop(): Promise<void>;
  /** Whether messages are being decoded in the worker thread now. */
  readonly decodingInThread: boolean;
}

/** Default of `IngestOptions.sessionExpirySeconds`. */
export const DEFAULT_SESSION_EXPIRY_S = 600;
/** A leaving bridge has drained what the broker still had for it once nothing arrived for this long. */
const DRAIN_QUIET_MS = 500;

export async function startIngest(opts: IngestOptions): Promise<IngestRuntime> {
  const log = opts.logger ?? consoleLogger();
  const store = opts.store;
  const rollupIntervalMs = opts.rollupIntervalMs ?? 10_000;
  const stopTimeoutMs = opts.stopTimeoutMs ?? 15_000;
  const now = opts.now ?? Date.now;
  if (Boolean(opts.mqttUrl) === Boolean(opts.broker))
    throw new Error('startIngest needs either mqttUrl or broker, not both');

  const metrics = createIngestMetrics();
  const deadLetters = new DeadLetterStore(1000, opts.deadLetterDir, (e) =>
    log.error({ err: e }, 'dead-letter write failed'),
  );
  const bus = new LocalLiveBus((e) => log.error({ err: e }, 'live listener failed'));
  const states = new DeviceStates((s) => bus.emitStatus(s), now);
  const writeColumns = columnWriter(store);
  // Set once connected; the writer asks it only for what arrived through it.
  let transport: Transport | null = null;
  let live: LivePublisher | null = null;
  /**
   * What the writer finished before the transport was wired: a broker delivers a persistent session's
   * queued messages right after CONNACK, and a batch of them can commit before the subscription is
   * confirmed. Their live publication and acknowledgements run, in order, once it is.
   */
  const early: (() => void)[] = [];
  const acknowledge = (batch: readonly Unit[]) =>
    transport?.acknowledge(() => {
      for (const u of batch) for (const a of u.acks) a();
    });
  const writer = new BatchWriter({
    store,
    writeColumns,
    batchSize: opts.batchSize ?? 2000,
    flushIntervalMs: opts.flushIntervalMs ?? 20,
    maxInFlight: opts.maxInFlight ?? 20_000,
    noCompany: () => transport?.noCompany() ?? false,
    committed: (batch) => (live ? live.committed(batch) : early.push(() => live?.committed(batch))),
    acknowledge: (batch) => (transport ? acknowledge(batch) : early.push(() => acknowledge(batch))),
    metrics,
    deadLetters,
    log,
  });
  const decoding = new DecodePipeline({
    line: writer,
    states,
    deadLetters,
    metrics,
    log,
    now,
    ...(opts.timeZoneOf ? { timeZoneOf: opts.timeZoneOf } : {}),
    rejected: (key, rejection) =>
      live ? live.rejected(key, rejection) : early.push(() => live?.rejected(key, rejection)),
    thread: opts.decodeThread !== false && writeColumns !== null,
    ...(opts.meterLimits ? { budget: new MeterBudget(opts.meterLimits, now) } : {}),
  });

  let stopping = false;
  /**
   * Takes one message. A stopping bridge takes nothing more: the message stays unacknowledged and is
   * redelivered later.
   */
  const take = (packet: SinkPacket, ack: (() => void) | undefined, resume: () => void) => {
    if (stopping) return;
    metrics.received.inc();
    const taken = decoding.take(packet.topic, packet.payload, ack);
    if (taken === 'line') return writer.admitted(resume);
    if (taken === 'now') ack?.();
    resume();
  };

  transport = opts.mqttUrl
    ? await connectMqtt(
        {
          url: opts.mqttUrl,
          ...(opts.mqttUsername ? { username: opts.mqttUsername, password: opts.mqttPassword ?? '' } : {}),
          clientId: opts.clientId ?? 'kilowatch-ingest',
          ...(opts.sessionExpirySeconds !== undefined
            ? { sessionExpirySeconds: opts.sessionExpirySeconds }
            : {}),
          ...(opts.shared ? { shared: true } : {}),
          ...(opts.tasmotaDevice ? { tasmotaDevice: opts.tasmotaDevice } : {}),
          log,
        },
        take,
      )
    : await attachBroker(opts.broker as EmbeddedBroker, take, log);
  live = new LivePublisher(bus, states, opts.publishLive ? transport.outlet : null);
  for (const f of early.splice(0)) f();

  let lastRollupFailure = { at: -Infinity, message: '' };
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

  const settle = () => writer.settle(() => decoding.drain());
  const connected = transport;
  let stopped: Promise<void> | null = null;

  return {
    bus,
    deviceState: (key) => states.get(key),
    deviceStates: () => states.all(),
    writeProblem: () => writer.writeProblem(),
    mqttConnected: () => connected.connected(),
    metricsText: () => {
      writer.gauges();
      return metrics.text();
    },
    deadLetters: (limit) => deadLetters.list(limit),
    lastRejection: (key) => states.lastRejection(key),
    get decodingInThread() {
      return decoding.inThread;
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
        if (leave) {
          const drainUntil = performance.now() + stopTimeoutMs;
          try {
            if (await connected.unsubscribe()) {
              let seen = -1;
              while (performance.now() < drainUntil) {
                const now = metrics.received.total();
                if (now === seen && writer.inFlight === 0) break;
                seen = now;
                await sleep(DRAIN_QUIET_MS);
              }
              left = true;
            }
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
        let abandoned = false;
        if (writer.busy) {
          abandoned = true;
          writer.abandon();
          log.warn(
            `stopping with ${writer.inFlight} unacknowledged messages; the broker will redeliver them`,
          );
        }
        await deadLetters.flush();
        await decoding.close();
        // Everything given is acknowledged: the session ends now (expiry 0), and with it this process's
        // place in the group. Otherwise it is kept for the same client id to take up.
        await connected.close(left && !abandoned && opts.sessionExpirySeconds !== undefined);
      })();
      return stopped;
    },
  };
}
