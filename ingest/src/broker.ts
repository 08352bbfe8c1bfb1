import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { createSecureContext, createServer as createTlsServer } from 'node:tls';
import {
  type BrokerAuth,
  canonicalMeterTopic,
  type MeterIdentity,
  meterClientIdRefusal,
  meterPublishRefusal,
  meterSubscribeRefusal,
  type TopicRefusal,
} from '@kilowatch/core';
import { Aedes, type AedesOptions, type AedesPublishPacket, type Client } from 'aedes';
import { writeToStream } from 'mqtt-packet';
import { type BrokerPersistence, createBrokerPersistence } from './brokerPersistence.ts';

// mqtt-packet (the encoder of aedes and mqtt.js, one instance per process) builds a cache of 65,536
// two-byte Buffers for packet ids and lengths on its first packet and keeps it: ~7 MB of JavaScript heap
// in 65,536 objects every full collection walks, for writes a 2-byte allocation serves as well.
writeToStream.cacheNumbers = false;

/** A message handed to an attached sink: what the meter published. */
export interface SinkPacket {
  topic: string;
  payload: Buffer | string;
  qos: 0 | 1 | 2;
  /** The publishing connection's client id (held PUBACKs: it sends nothing more until acknowledged). */
  clientId?: string;
}

/**
 * In-process consumer of the embedded broker (the embedded deployment's ingest). Publishes on the
 * topics it `takes` are handed to `publish` before the broker acknowledges them: the broker sends the
 * meter's PUBACK only when `done` is called (after the store commits), and reads nothing more from that
 * meter's connection until then. Messages on `watch` filters (statuses, wills) arrive after the broker
 * took them, with no acknowledgement to hold. A meter's messages reach the sink under the topic of the
 * device its credentials belong to (`canonicalMeterTopic`), whatever name its firmware publishes under.
 */
export interface BrokerSink {
  takes(topic: string): boolean;
  publish(packet: SinkPacket, done: () => void): void;
  watch: readonly string[];
  message(packet: SinkPacket): void;
}

/** An account of the services (ingest, api): trusted with every topic, internal ones included. */
export interface ServiceAccount {
  username: string;
  password: string;
}

export interface BrokerLimits {
  /** Largest MQTT packet (fixed header excluded); a larger one closes the connection before it is read. */
  maxPacketBytes: number;
  /** Messages queued for one client (offline or in flight) before the oldest are dropped. */
  maxQueuedPerClient: number;
  /** A persistent session whose client stays away this long is forgotten, queue and subscriptions. */
  sessionExpiryMs: number;
  /** Retained topics one meter may hold; past it, its messages are delivered but not retained. */
  maxRetainedPerClient: number;
  /**
   * Failed logins per remote address and username per minute; past it, that username's logins from that
   * address are refused unchecked. Good logins are not counted, so a meter that fails cannot lock out
   * others behind the same address (a home's NAT, the simulator).
   */
  connectionsPerMinutePerIp: number;
}

export const DEFAULT_BROKER_LIMITS: BrokerLimits = {
  maxPacketBytes: 512 * 1024,
  maxQueuedPerClient: 1000,
  sessionExpiryMs: 60 * 60_000,
  maxRetainedPerClient: 16,
  connectionsPerMinutePerIp: 120,
};

export type RefusalReason =
  | 'anonymous'
  | 'bad-credentials'
  | 'bad-password'
  | 'rate-limited'
  | 'client-id-taken'
  | 'packet-too-large'
  | 'publish-other-device'
  | 'publish-not-allowed'
  | 'subscribe-other-device'
  | 'subscribe-not-allowed'
  | 'retained-cap';

/** A meter's connection as the broker saw it (GET /api/devices/:id/connection). */
export interface MeterConnection {
  connected: boolean;
  lastConnectedAt: number | null;
  lastRejection?: { reason: 'bad-password' | 'topic-not-allowed'; topic?: string; at: number };
}

export interface EmbeddedBroker {
  url: string;
  port: number;
  /** The TLS listener's `mqtts://` URL and port, when `tls` was given. */
  tlsUrl?: string;
  tlsPort?: number;
  /** Attaches the in-process sink (at most one). */
  attach(sink: BrokerSink): Promise<void>;
  /** Closes every connection made with a device's credentials (rotated or revoked), without its will. */
  disconnectDevice(deviceKey: string): void;
  /** What the broker knows of a device's connection, or undefined when it has never tried. */
  connection(deviceKey: string): MeterConnection | undefined;
  /** Refusals since start, by reason (`kilowatch_mqtt_refused_total`). */
  refusals(): Record<string, number>;
  /** Prometheus text of the broker's counters. */
  metricsText(): string;
  /** Clients with a session (connected or persistent), and messages queued for them. */
  sessions(): { clients: number; queued: number; dropped: number };
  /** Connected clients that have published on a topic the attached sink takes. */
  publishers(): number;
  close(): Promise<void>;
}

/** A TLS listener beside the plain one: same broker, same accounts and limits (KW_MQTT_TLS_*). */
export interface EmbeddedBrokerTls {
  /** Default 0 (any free port). */
  port?: number;
  /** The server's certificate chain and its private key (PEM). */
  cert: string | Buffer;
  key: string | Buffer;
}

export interface EmbeddedBrokerOptions {
  port?: number;
  /** Listen address of both listeners (default 127.0.0.1). */
  host?: string;
  tls?: EmbeddedBrokerTls;
  /** Meters' credentials, checked once per connection. Without it only service accounts connect. */
  auth?: BrokerAuth;
  services?: readonly ServiceAccount[];
  /** Accept connections without credentials, trusted like a service (benchmarks' baseline only). */
  allowAnonymous?: boolean;
  limits?: Partial<BrokerLimits>;
  /** How often expired sessions are looked for (default a minute). */
  sweepIntervalMs?: number;
  now?: () => number;
}

type Identity =
  | { kind: 'meter'; deviceKey: string; stockTopics: boolean; topics?: MeterTopicCache }
  | { kind: 'service' }
  | { kind: 'anonymous' };

/** One meter connection's verdicts on the topics it published to: null (allowed) or why not. */
export type MeterTopicCache = Map<string, { refusal: TopicRefusal | null; topic: string }>;
/** A meter publishes to one or two topics; past this many distinct ones, they are checked each time. */
const METER_TOPIC_CACHE = 16;

/**
 * The per-publish check of a meter's topic: whether it may publish there, and the topic rewritten to its
 * device key. A meter publishes to the same few topics again and again, so after the first publish to
 * a topic this is one map lookup (no database, no hashing: the password was checked at connect).
 */
export function checkMeterTopic(
  cache: MeterTopicCache,
  meter: MeterIdentity,
  topic: string,
): { refusal: TopicRefusal | null; topic: string } {
  const hit = cache.get(topic);
  if (hit) return hit;
  const deviceKey = typeof meter === 'string' ? meter : meter.deviceKey;
  const refusal = meterPublishRefusal(meter, topic);
  const verdict = { refusal, topic: refusal ? topic : canonicalMeterTopic(deviceKey, topic) };
  if (cache.size < METER_TOPIC_CACHE) cache.set(topic, verdict);
  return verdict;
}

const IDENTITY = Symbol('kilowatch identity');
const DROPPED = Symbol('kilowatch dropped');

type KwClient = Client & { [IDENTITY]?: Identity; conn: Socket; _parser?: unknown };

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

class ConnectError extends Error {
  constructor(
    message: string,
    readonly returnCode: number,
  ) {
    super(message);
  }
}

/**
 * The in-process MQTT broker of the embedded deployment (aedes over node:net, loopback only by default).
 * Every connection authenticates: a meter with its device's credentials (checked once, when it connects;
 * its publishes and subscriptions are then checked against its device's topics in memory), the services
 * with their accounts. A meter's publish on a topic that is not its own is acknowledged and dropped, as
 * Mosquitto does, and counted; a subscription outside its own command topics is refused (SUBACK 0x80).
 */
export async function startEmbeddedBroker(opts: EmbeddedBrokerOptions = {}): Promise<EmbeddedBroker> {
  const host = opts.host ?? '127.0.0.1';
  // TLS 1.2 at least, as deploy/mosquitto.conf's listener 8883 (`tls_version tlsv1.2`). Checked first: a
  // certificate or key that is not PEM, or a key that does not match, fails the start before anything listens.
  const tlsOptions = opts.tls
    ? { cert: opts.tls.cert, key: opts.tls.key, minVersion: 'TLSv1.2' as const }
    : undefined;
  if (tlsOptions) createSecureContext(tlsOptions);
  const limits: BrokerLimits = { ...DEFAULT_BROKER_LIMITS, ...opts.limits };
  const now = opts.now ?? Date.now;
  const services = opts.services ?? [];
  const persistence: BrokerPersistence = createBrokerPersistence({
    maxQueuedPerClient: limits.maxQueuedPerClient,
  });

  const refused = new Map<RefusalReason, number>();
  const connections = new Map<string, MeterConnection & { clients: number }>();
  const retained = new Map<string, Set<string>>();
  const attempts = new Map<string, number[]>();

  const refuse = (reason: RefusalReason) => refused.set(reason, (refused.get(reason) ?? 0) + 1);
  const connectionOf = (deviceKey: string) => {
    let c = connections.get(deviceKey);
    if (!c) {
      c = { connected: false, lastConnectedAt: null, clients: 0 };
      connections.set(deviceKey, c);
    }
    return c;
  };
  const rejectTopic = (deviceKey: string, topic: string) => {
    connectionOf(deviceKey).lastRejection = {
      reason: 'topic-not-allowed',
      topic: topic.slice(0, 256),
      at: now(),
    };
  };

  let attached: BrokerSink | null = null;

  const aedes = await Aedes.createBroker({
    persistence: persistence as AedesOptions['persistence'],
    // Stock meters use client ids longer than MQTT 3.1's 23 characters (Shelly's are 30 and more).
    maxClientsIdLength: 128,
    authenticate: (client, username, password, callback) => {
      const c = client as KwClient;
      // Before any credential is looked at: a flood of one failing login costs no database query.
      const ip = c.conn?.remoteAddress ?? '';
      const t = now();
      const attemptKey = `${ip} ${(username ?? '').slice(0, 128)}`;
      const failures = (attempts.get(attemptKey) ?? []).filter((at) => t - at < 60_000);
      if (failures.length >= limits.connectionsPerMinutePerIp) {
        refuse('rate-limited');
        callback(new ConnectError('server unavailable', 3), false);
        return;
      }
      const failed = (reason: RefusalReason, returnCode: number, message: string) => {
        failures.push(now());
        attempts.set(attemptKey, failures);
        if (attempts.size > 10_000)
          for (const [k, v] of attempts) if (t - (v.at(-1) ?? 0) >= 60_000) attempts.delete(k);
        refuse(reason);
        callback(new ConnectError(message, returnCode), false);
      };
      const secret = password ? password.toString('utf8') : '';
      if (username === undefined || username === '') {
        if (opts.allowAnonymous) {
          c[IDENTITY] = { kind: 'anonymous' };
          callback(null, true);
          return;
        }
        failed('anonymous', 5, 'not authorized');
        return;
      }
      if (services.some((s) => s.username === username && sameSecret(s.password, secret))) {
        c[IDENTITY] = { kind: 'service' };
        callback(null, true);
        return;
      }
      if (!opts.auth) {
        failed('bad-credentials', 4, 'bad user name or password');
        return;
      }
      opts.auth.verifyMeter(username, secret).then(
        (verdict) => {
          if (verdict?.ok) {
            const identity = {
              kind: 'meter' as const,
              deviceKey: verdict.deviceKey,
              stockTopics: verdict.stockTopics ?? true,
            };
            // Another account's client id (its stock one, or one it is connected or has a session with):
            // refused, so its session is neither taken over nor shared (CONNACK 2, identifier rejected).
            if (clientIdTaken(identity, c.id)) {
              refuse('client-id-taken');
              callback(new ConnectError('identifier rejected', 2), false);
              return;
            }
            c[IDENTITY] = identity;
            callback(null, true);
            return;
          }
          if (verdict) {
            connectionOf(verdict.deviceKey).lastRejection = { reason: 'bad-password', at: now() };
            failed('bad-password', 4, 'bad user name or password');
          } else failed('bad-credentials', 4, 'bad user name or password');
        },
        () => callback(new ConnectError('server unavailable', 3), false),
      );
    },
    authorizePublish: (client, packet, callback) => {
      const identity = (client as KwClient | null)?.[IDENTITY];
      let topic = packet.topic;
      if (client && !identity) {
        callback(new Error('not authenticated'));
        return;
      }
      if (identity?.kind === 'meter') {
        identity.topics ??= new Map();
        const { refusal, topic: canonical } = checkMeterTopic(identity.topics, identity, topic);
        if (refusal) {
          refuse(refusal === 'other-device' ? 'publish-other-device' : 'publish-not-allowed');
          rejectTopic(identity.deviceKey, topic);
          // Acknowledged and never delivered (MQTT 3.1.1 has no way to say no to a PUBLISH).
          (packet as unknown as Record<symbol, boolean>)[DROPPED] = true;
          callback(null);
          return;
        }
        if (packet.retain) capRetained(identity.deviceKey, packet);
        topic = canonical;
      } else if (!client && topic.startsWith('$')) {
        callback(null);
        return;
      }
      const sink = attached;
      if (!client || !sink?.takes(topic)) {
        callback(null);
        return;
      }
      publishing.add(client);
      sink.publish({ topic, payload: packet.payload, qos: packet.qos, clientId: client.id }, () =>
        callback(null),
      );
    },
    authorizeSubscribe: (client, sub, callback) => {
      const identity = (client as KwClient)[IDENTITY];
      if (!identity) {
        callback(new Error('not authenticated'), null);
        return;
      }
      if (identity.kind !== 'meter') {
        callback(null, sub);
        return;
      }
      const refusal = meterSubscribeRefusal(identity, sub.topic);
      if (refusal) {
        refuse(refusal === 'other-device' ? 'subscribe-other-device' : 'subscribe-not-allowed');
        rejectTopic(identity.deviceKey, sub.topic);
        callback(null, null);
        return;
      }
      callback(null, sub);
    },
  } as AedesOptions);

  /**
   * Whose each client id is while it is connected or has a session: a meter's device key, or '' for the
   * services. A meter may not use another's (nor a stock id of another device: `meterClientIdRefusal`).
   */
  const owners = new Map<string, string>();
  const ownerOf = (identity: Identity | undefined) => (identity?.kind === 'meter' ? identity.deviceKey : '');
  function clientIdTaken(identity: Identity & { kind: 'meter' }, clientId: string): boolean {
    if (meterClientIdRefusal(identity, clientId)) return true;
    const connected = clientsOf(aedes)[clientId];
    if (connected && ownerOf(connected[IDENTITY]) !== identity.deviceKey) return true;
    const owner = owners.get(clientId);
    return owner !== undefined && owner !== identity.deviceKey;
  }

  /** A meter's retained topics, capped: past the cap its message goes out but is not retained. */
  function capRetained(
    deviceKey: string,
    packet: { topic: string; payload: Buffer | string; retain: boolean },
  ) {
    let set = retained.get(deviceKey);
    const clearing = packet.payload.length === 0;
    if (clearing) {
      set?.delete(packet.topic);
      return;
    }
    if (set?.has(packet.topic)) return;
    if (!set) {
      set = new Set();
      retained.set(deviceKey, set);
    }
    if (set.size >= limits.maxRetainedPerClient) {
      refuse('retained-cap');
      packet.retain = false;
      return;
    }
    set.add(packet.topic);
  }

  // Dropped publishes stop here: acknowledged to the meter, delivered to nobody, never retained.
  const publish = aedes.publish.bind(aedes) as (packet: AedesPublishPacket, ...rest: unknown[]) => void;
  aedes.publish = ((packet: AedesPublishPacket, ...rest: unknown[]) => {
    if ((packet as unknown as Record<symbol, boolean>)[DROPPED]) {
      const done = rest.at(-1);
      if (typeof done === 'function') done();
      return;
    }
    publish(packet, ...rest);
  }) as typeof aedes.publish;

  /** Connected clients that have published to the sink (`publishers()`). */
  const publishing = new Set<Client>();
  aedes.on('client', (client) => {
    const identity = (client as KwClient)[IDENTITY];
    persistence.connected(client.id);
    owners.set(client.id, ownerOf(identity));
    if (identity?.kind !== 'meter') return;
    const c = connectionOf(identity.deviceKey);
    c.clients++;
    c.connected = true;
    c.lastConnectedAt = now();
  });
  aedes.on('clientDisconnect', (client) => {
    publishing.delete(client);
    persistence.disconnected(client.id, now());
    // A clean session leaves nothing behind: its id is free again.
    if (client.clean && !clientsOf(aedes)[client.id]) owners.delete(client.id);
    const identity = (client as KwClient)[IDENTITY];
    if (identity?.kind !== 'meter') return;
    const c = connectionOf(identity.deviceKey);
    c.clients = Math.max(0, c.clients - 1);
    c.connected = c.clients > 0;
  });

  // Sessions left behind by clients that never came back are forgotten after the expiry.
  const sweep = setInterval(() => {
    for (const id of persistence.expired(now(), limits.sessionExpiryMs)) {
      if (clientsOf(aedes)[id]) continue;
      owners.delete(id);
      void persistence.forget(id);
    }
  }, opts.sweepIntervalMs ?? 60_000);
  sweep.unref();

  // Plain and TLS connections go to the same aedes instance: one set of hooks, accounts and limits.
  const handle = (conn: Socket) => {
    const client = (aedes.handle as (c: Socket, r?: unknown) => unknown)(conn) as KwClient;
    limitPacketSize(client, limits.maxPacketBytes, () => refuse('packet-too-large'));
  };
  const listen = async (server: Server, port: number) => {
    server.listen(port, host);
    // Rejects on 'error' (the port taken).
    await once(server, 'listening');
    const address = server.address();
    return typeof address === 'object' && address ? address.port : port;
  };
  const server = createServer(handle);
  const port = await listen(server, opts.port ?? 0);
  // A failed handshake (plain MQTT on this port, a client that does not trust the certificate) closes the
  // socket before aedes sees it.
  const tlsServer = tlsOptions ? createTlsServer(tlsOptions, handle) : undefined;
  let tlsPort: number | undefined;
  if (tlsServer) {
    try {
      tlsPort = await listen(tlsServer, opts.tls?.port ?? 0);
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      clearInterval(sweep);
      throw err;
    }
  }

  return {
    url: `mqtt://${host}:${port}`,
    port,
    ...(tlsPort !== undefined ? { tlsUrl: `mqtts://${host}:${tlsPort}`, tlsPort } : {}),
    async attach(sink) {
      if (attached) throw new Error('the embedded broker already has a sink attached');
      attached = sink;
      for (const filter of sink.watch) {
        await new Promise<void>((resolve) =>
          aedes.subscribe(
            filter,
            (packet: AedesPublishPacket, cb: () => void) => {
              sink.message({ topic: packet.topic, payload: packet.payload, qos: packet.qos });
              cb();
            },
            resolve,
          ),
        );
      }
    },
    disconnectDevice(deviceKey) {
      for (const client of Object.values(clientsOf(aedes))) {
        const identity = client[IDENTITY];
        if (identity?.kind !== 'meter' || identity.deviceKey !== deviceKey) continue;
        (client as unknown as { will: unknown }).will = null;
        client.close();
      }
      retained.delete(deviceKey);
    },
    connection(deviceKey) {
      const c = connections.get(deviceKey);
      if (!c) return undefined;
      const { clients: _, ...rest } = c;
      return { ...rest, ...(c.lastRejection ? { lastRejection: { ...c.lastRejection } } : {}) };
    },
    refusals: () => Object.fromEntries(refused),
    publishers: () => publishing.size,
    metricsText() {
      const lines = [
        '# HELP kilowatch_mqtt_refused_total Connections, publishes and subscriptions the embedded broker refused, by reason',
        '# TYPE kilowatch_mqtt_refused_total counter',
        ...[...refused].map(([reason, n]) => `kilowatch_mqtt_refused_total{reason="${reason}"} ${n}`),
        '# HELP kilowatch_mqtt_clients Clients connected to the embedded broker',
        '# TYPE kilowatch_mqtt_clients gauge',
        `kilowatch_mqtt_clients ${aedes.connectedClients}`,
      ];
      return lines.join('\n');
    },
    sessions: () => persistence.stats(),
    async close() {
      clearInterval(sweep);
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (tlsServer) await new Promise<void>((resolve) => tlsServer.close(() => resolve()));
    },
  };
}

/** aedes's connected clients by id (kept on the broker, not in its typings). */
const clientsOf = (aedes: Aedes) => (aedes as unknown as { clients: Record<string, KwClient> }).clients;

/**
 * Closes a connection as soon as a packet's header announces more than `max` bytes: the packet is never
 * buffered (mqtt-packet would otherwise gather all of it before anyone could look).
 */
function limitPacketSize(client: KwClient, max: number, onRefuse: () => void): void {
  const parser = client._parser as {
    _parseLength(): boolean;
    _emitError(e: Error): void;
    packet: { length: number };
  };
  const parseLength = Object.getPrototypeOf(parser)._parseLength as () => boolean;
  parser._parseLength = function (this: typeof parser) {
    const ok = parseLength.call(this);
    if (ok && this.packet.length > max) {
      onRefuse();
      this._emitError(new Error(`packet of ${this.packet.length} bytes exceeds ${max}`));
      client.conn.destroy();
      return false;
    }
    return ok;
  };
}
