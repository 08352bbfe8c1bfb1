/**
 * The bridge's transports: where messages come from and where their acknowledgements go.
 *
 * Over MQTT (server deployment): QoS 1 on a persistent session with a fixed client id. mqtt.js handles
 * incoming packets one at a time and sends the PUBACK when `handleMessage` calls back (its other public
 * hook, `customHandleAcks`, holds the next packet the same way). Holding that callback until commit
 * would leave one message per batch, so the callback is answered at once with a marker error (mqtt.js
 * then skips its PUBACK) and the PUBACK is written on the client's stream after the commit, with
 * mqtt-packet (the encoder mqtt.js itself uses). When the in-flight window is full the callback itself is
 * held: mqtt.js stops reading the socket and TCP pushes back on the broker, so memory stays bounded.
 *
 * Attached to the embedded broker (embedded deployment): the meter's own PUBLISH is handed over before
 * the broker acknowledges it, and its PUBACK is released after the commit. A persistent session inside
 * the same process would protect nothing a crash does not also take; this way at-least-once reaches the
 * meter itself, and the second MQTT hop (encode, loopback socket, session queue, decode, PUBACK) is gone.
 * The broker reads nothing more from a meter's connection while its messages wait, which bounds memory
 * the same way.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { writeToStream } from 'mqtt-packet';
import type { BrokerSink, EmbeddedBroker, SinkPacket } from '../broker.ts';
import { routeTopic } from '../decoders/index.ts';
import type { LiveOutlet } from './livePublisher.ts';
import type { IngestLogger } from './logger.ts';

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

/**
 * Takes one message. `ack` acknowledges it after commit (absent: nothing to acknowledge); `resume` lets
 * the transport read on (held while the in-flight window is full).
 */
export type Take = (packet: SinkPacket, ack: (() => void) | undefined, resume: () => void) => void;

export interface Transport {
  /** Whether messages can arrive (always, attached to the embedded broker). */
  connected(): boolean;
  /** True when no message can arrive before some are acknowledged: every sender waits for its ack. */
  noCompany(): boolean;
  /** Runs a batch's acknowledgements, written to the socket together. */
  acknowledge(acks: () => void): void;
  /** Where committed readings are published over MQTT, if the transport has a connection of its own. */
  readonly outlet: LiveOutlet | null;
  /** Leaves the subscriptions (a shared group's member goes); false where there are none to leave. */
  unsubscribe(): Promise<boolean>;
  /** Closes the connection; `endSession` ends the broker's session for this client id too. */
  close(endSession: boolean): Promise<void>;
}

export interface MqttTransportOptions {
  url: string;
  username?: string;
  password?: string;
  clientId: string;
  /** MQTT 5 session expiry (`IngestOptions.sessionExpirySeconds`); unset: MQTT 3.1.1. */
  sessionExpirySeconds?: number;
  shared?: boolean;
  /** The device whose stock Tasmota topic is `tasmota_<suffix>` (`IngestOptions.tasmotaDevice`). */
  tasmotaDevice?: (suffix: string) => Promise<string | null>;
  log: IngestLogger;
}

/** A stock Tasmota topic: `tele/tasmota_A1B2C3/SENSOR`. */
const STOCK_TASMOTA = /^(tele|stat)\/tasmota_([0-9A-Fa-f]{6})\/(.+)$/;

/** Answers `handleMessage` so that mqtt.js reads on without sending its PUBACK. */
const AFTER_COMMIT = new Error('acknowledged after commit');

/** Connects to an MQTT broker, subscribes, and hands every message to `take`. */
export async function connectMqtt(o: MqttTransportOptions, take: Take): Promise<Transport> {
  const { log, clientId } = o;
  const client: MqttClient = mqtt.connect(o.url, {
    clientId,
    ...(o.username ? { username: o.username, password: o.password ?? '' } : {}),
    clean: false,
    // MQTT 5 for the session expiry: group membership follows liveness (see `sessionExpirySeconds`).
    // Without one, MQTT 3.1.1 and a session the broker keeps (brokers without MQTT 5, such as aedes).
    ...(o.sessionExpirySeconds !== undefined
      ? { protocolVersion: 5 as const, properties: { sessionExpiryInterval: o.sessionExpirySeconds } }
      : { protocolVersion: 4 as const }),
    reconnectPeriod: 1000,
    connectTimeout: 10_000,
    resubscribe: true,
  });
  /** Counts connections: a PUBACK is valid only on the connection its message came by. */
  let connection = 0;
  warnOfTakeovers(client, clientId, log, () => connection++);
  client.on('error', (e) => log.warn({ err: e }, 'mqtt error'));
  client.on('reconnect', () => log.info('mqtt reconnecting'));

  /** The PUBACK mqtt.js would have sent from handleMessage's callback, written after the commit. */
  const pubackLater = (messageId: number): (() => void) => {
    const on = connection;
    return () => {
      if (on !== connection || !client.connected) return;
      writeToStream({ cmd: 'puback', messageId }, client.stream, client.options);
    };
  };

  const tasmotaKey = o.tasmotaDevice ? tasmotaKeys(o.tasmotaDevice, log) : null;
  client.handleMessage = ((packet, callback) => {
    const ackAfter =
      packet.qos > 0 && packet.messageId !== undefined ? pubackLater(packet.messageId) : undefined;
    const go = (topic: string) =>
      take(
        { topic, payload: packet.payload, qos: packet.qos },
        ackAfter,
        // mqtt.js skips its own PUBACK on this error and reads the next packet.
        () => callback(ackAfter ? AFTER_COMMIT : undefined),
      );
    const stock = tasmotaKey ? STOCK_TASMOTA.exec(packet.topic) : null;
    if (!stock || !tasmotaKey) return go(packet.topic);
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
  const topics = subscriptionTopics(o.shared);
  await client.subscribeAsync(topics, { qos: 1 });
  log.info({ mqttUrl: o.url, topics }, 'ingest subscribed');

  return {
    connected: () => client.connected,
    noCompany: () => false,
    acknowledge(acks) {
      // One socket write for the batch's PUBACKs, not one write each.
      const stream = client.stream;
      stream.cork();
      try {
        acks();
      } finally {
        stream.uncork();
      }
    },
    outlet: {
      connected: () => client.connected,
      publish: (topic, payload) => client.publish(topic, payload, { qos: 0 }),
    },
    async unsubscribe() {
      if (!client.connected) return false;
      await client.unsubscribeAsync(topics);
      return true;
    },
    close(endSession) {
      // Expiry 0 ends the session now, and with it this process's place in the group.
      const end = endSession ? { properties: { sessionExpiryInterval: 0 } } : {};
      return new Promise<void>((resolve) => {
        const t = setTimeout(() => client.end(true, {}, () => resolve()), 2000);
        client.end(false, end, () => {
          clearTimeout(t);
          resolve();
        });
      });
    },
  };
}

/**
 * A broker closes a connection when another client connects with the same id: two ingest processes
 * sharing one id take the session from each other every second. Said once a minute, with the cure.
 */
function warnOfTakeovers(client: MqttClient, clientId: string, log: IngestLogger, closed: () => void): void {
  let connectedAt = 0;
  let quickCloses: number[] = [];
  let toldTakeover = Number.NEGATIVE_INFINITY;
  client.on('connect', () => {
    connectedAt = performance.now();
  });
  client.on('close', () => {
    closed();
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
}

/** Stock Tasmota topics resolved to device keys, for a minute (unknown suffixes for 5 s). */
function tasmotaKeys(
  lookup: (suffix: string) => Promise<string | null>,
  log: IngestLogger,
): (suffix: string) => Promise<string | null> {
  const known = new Map<string, { key: string | null; at: number }>();
  return async (suffix) => {
    const hit = known.get(suffix);
    const t = performance.now();
    if (hit && t - hit.at < (hit.key ? 60_000 : 5_000)) return hit.key;
    const key = await lookup(suffix).catch((e: unknown) => {
      log.warn({ err: e }, 'could not look up the device of a Tasmota topic');
      return null;
    });
    known.set(suffix, { key, at: t });
    if (known.size > 10_000) known.delete(known.keys().next().value as string);
    return key;
  };
}

/** Attaches to the in-process broker and hands every message to `take`. */
export async function attachBroker(
  broker: EmbeddedBroker,
  take: Take,
  log: IngestLogger,
): Promise<Transport> {
  /**
   * Messages waiting for their commit, per publishing connection. Such a connection sends nothing more
   * until acknowledged (the broker stops reading it, and a client replaying its queue after a reconnect
   * sends one message per PUBACK), so once every connection that publishes waits, no company can come.
   */
  const waiting = new Map<string, number>();
  const held = (packet: SinkPacket, done: () => void): (() => void) => {
    const from = packet.clientId;
    if (from === undefined) return done;
    waiting.set(from, (waiting.get(from) ?? 0) + 1);
    return () => {
      const n = (waiting.get(from) ?? 1) - 1;
      if (n > 0) waiting.set(from, n);
      else waiting.delete(from);
      done();
    };
  };
  const sink: BrokerSink = {
    // Readings topics: the meter's PUBACK waits for the commit. Statuses (also sent as wills) are
    // not stored, so they are watched after the broker took them.
    takes: (topic) => {
      const route = routeTopic(topic);
      return route !== null && route.format !== 'native-status';
    },
    publish: (packet, done) => take(packet, held(packet, done), () => {}),
    watch: ['kilowatch/meters/+/status'],
    message: (packet) => take(packet, undefined, () => {}),
  };
  await broker.attach(sink);
  log.info({ broker: broker.url }, 'ingest attached to the embedded broker');
  return {
    connected: () => true,
    noCompany: () => waiting.size > 0 && waiting.size >= broker.publishers(),
    acknowledge: (acks) => acks(),
    outlet: null,
    unsubscribe: async () => false,
    close: async () => {},
  };
}
