/**
 * What an external Mosquitto and the ingest processes behind it saw of each meter's connection, for
 * `GET /api/devices/:id/connection` in the server deployment. Every API process subscribes with the
 * services' account to:
 *
 * - `$SYS/broker/log/N`: Mosquitto's notice-level log lines (`log_dest topic` in deploy/mosquitto.conf).
 *   They carry each connection (`New client connected from <addr> as <client id> (…, u'<username>')`),
 *   each disconnection, and each refused login (`Client <client id> disconnected, not authorised.`).
 *   A refused login names no username, so it is put on a meter only when the line names its client: a
 *   client id seen connected with the meter's account before (the meter whose password was rotated or
 *   mistyped after it first worked), or one that names the meter (Tasmota's `DVES_XXXXXX`, Shelly's
 *   `shellypro3em-<mac>`, the device key itself). Mosquitto 2.0.11 (Debian 12) writes `<unknown>` in
 *   place of the client id there; such refusals are only counted.
 * - `kilowatch/live/<deviceKey>/rejected`: the messages ingest refused (bad payload).
 *
 * A publish the meter's ACL denies ("topic not allowed") is not reported: Mosquitto logs it only at debug
 * level, which it never publishes on `$SYS/broker/log` (docs/api.md, "Connection state").
 */
import { randomBytes } from 'node:crypto';
import { DEVICE_KEY_PATTERN, decodeLiveRejection, TOPICS } from '@kilowatch/core';
import mqtt, { type MqttClient } from 'mqtt';
import type { MeterAccess, MeterConnectionState } from './plugins/app/meter-access.ts';
import { latestRejection } from './plugins/app/meter-access.ts';

/** The notice-level log topic Mosquitto publishes connections and refused logins on. */
export const BROKER_NOTICE_TOPIC = '$SYS/broker/log/N';
const REJECTED_TOPIC = TOPICS.rejected('+');

/** One Mosquitto log line, as far as meters' connections go. */
export type BrokerLogEvent =
  | { kind: 'connected'; clientId: string; username: string | null; address: string }
  | { kind: 'disconnected'; clientId: string }
  | { kind: 'refused'; clientId: string | null };

/**
 * Reads one log line (with or without its timestamp prefix), in the formats of Mosquitto 2.0 and 2.1:
 * `Client X disconnected, not authorised.` and `Client X [addr:port] disconnected: not authorised.`.
 */
export function parseBrokerLogLine(line: string): BrokerLogEvent | null {
  const text = line.replace(/^[^:]*?\d+(?:-\d\d-\d\d[ T][\d:.]+)?: /, '').trim();
  let m = /^New client connected from (\S+) as (.+) \(p\d+, c\d+, k\d+(?:, u'(.*)')?\)\.$/.exec(text);
  if (m) return { kind: 'connected', address: m[1]!, clientId: m[2]!, username: m[3] ?? null };
  m = /^Client (.+?)(?: \[[^\]]*\])? disconnected[,:] not authori[sz]ed\.?$/.exec(text);
  if (m) return { kind: 'refused', clientId: m[1] === '<unknown>' ? null : m[1]! };
  m =
    /^Client (.+?)(?: \[[^\]]*\])? (?:disconnected(?:[.:]| due to)|closed its connection|has exceeded timeout|been disconnected)/.exec(
      text,
    ) ?? /^Socket error on client (.+), disconnecting\.$/.exec(text);
  if (m && m[1] !== '<unknown>') return { kind: 'disconnected', clientId: m[1]! };
  return null;
}

export interface BrokerLogWatch {
  /** What was seen of a device since this process started watching (undefined: nothing). */
  connection(deviceKey: string): MeterConnectionState | undefined;
  /** Refused logins the broker's log did not let us put on a meter. */
  unattributedRefusals(): number;
  /** Whether the subscription is up. */
  connected(): boolean;
  /** Resolves once the subscriptions are granted (tests). */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

/** The device key in a client id (`shellypro3em-<mac>`, the key itself), or null. */
export function deviceKeyInClientId(clientId: string): string | null {
  const m = /(?:^|[^0-9a-f])([0-9a-f]{12})(?:$|[^0-9a-f])/i.exec(clientId);
  return m ? m[1]!.toLowerCase() : null;
}

/** What the log lines and ingest's refusals said of each meter (the part of the watch without a broker). */
export interface BrokerLogState {
  /** One `$SYS/broker/log/N` payload. */
  line(text: string): Promise<void>;
  /** One `kilowatch/live/<deviceKey>/rejected` message. */
  rejected(topic: string, payload: Buffer): void;
  connection(deviceKey: string): MeterConnectionState | undefined;
  unattributedRefusals(): number;
}

export function brokerLogState(opts: {
  /** The claimed device a Tasmota `DVES_XXXXXX` client id's six hex digits end, when exactly one does. */
  tasmotaDevice?: (suffix: string) => Promise<string | null>;
  now?: () => number;
}): BrokerLogState {
  const now = opts.now ?? Date.now;
  type Seen = MeterConnectionState & { clients: Set<string> };
  const seen = new Map<string, Seen>();
  /** Client id → the meter account it last connected with (bounded: the oldest is forgotten first). */
  const clients = new Map<string, string>();
  let unattributed = 0;

  const seenOf = (key: string): Seen => {
    let s = seen.get(key);
    if (!s) {
      s = { connected: false, lastConnectedAt: null, clients: new Set() };
      seen.set(key, s);
      if (seen.size > 100_000) seen.delete(seen.keys().next().value as string);
    }
    return s;
  };

  const deviceOfClient = async (clientId: string): Promise<string | null> => {
    const known = clients.get(clientId);
    if (known) return known;
    const key = deviceKeyInClientId(clientId);
    if (key) return key;
    const tasmota = /^DVES_([0-9A-F]{6})$/i.exec(clientId);
    if (tasmota && opts.tasmotaDevice) return opts.tasmotaDevice(tasmota[1]!);
    return null;
  };

  return {
    async line(text) {
      const e = parseBrokerLogLine(text);
      if (!e) return;
      if (e.kind === 'connected') {
        // A connect with a client id in use closes the connection that held it (Mosquitto does not bind
        // ids to accounts): that meter is no longer connected with it, whoever connects now.
        const before = clients.get(e.clientId);
        const previous = before ? seen.get(before) : undefined;
        if (previous && before !== e.username) {
          previous.clients.delete(e.clientId);
          previous.connected = previous.clients.size > 0;
        }
        clients.delete(e.clientId);
        if (!e.username || !DEVICE_KEY_PATTERN.test(e.username)) return;
        clients.set(e.clientId, e.username);
        if (clients.size > 100_000) clients.delete(clients.keys().next().value as string);
        const s = seenOf(e.username);
        s.clients.add(e.clientId);
        s.connected = true;
        s.lastConnectedAt = now();
        return;
      }
      if (e.kind === 'disconnected') {
        const key = clients.get(e.clientId);
        const s = key ? seen.get(key) : undefined;
        if (!s) return;
        s.clients.delete(e.clientId);
        s.connected = s.clients.size > 0;
        return;
      }
      const key = e.clientId ? await deviceOfClient(e.clientId) : null;
      if (!key || !DEVICE_KEY_PATTERN.test(key)) {
        unattributed++;
        return;
      }
      seenOf(key).lastRejection = {
        reason: 'bad-password',
        at: now(),
        detail: `the broker refused the login of client ${e.clientId!.slice(0, 128)}: wrong username or password`,
      };
    },
    rejected(topic, payload) {
      const key = topic.split('/')[2] ?? '';
      if (!DEVICE_KEY_PATTERN.test(key)) return;
      const r = decodeLiveRejection(payload);
      if (!r) return;
      const s = seenOf(key);
      s.lastRejection = latestRejection(s.lastRejection, {
        reason: 'payload-rejected',
        topic: r.topic.slice(0, 256),
        at: now(),
        detail: `${r.reason}: ${r.detail}`.slice(0, 300),
      });
    },
    connection(key) {
      const s = seen.get(key);
      if (!s) return undefined;
      const { clients: _, ...state } = s;
      return { ...state, ...(s.lastRejection ? { lastRejection: { ...s.lastRejection } } : {}) };
    },
    unattributedRefusals: () => unattributed,
  };
}

/** Subscribes with the services' account and keeps a `brokerLogState` of what arrives. */
export function watchBrokerLog(opts: {
  mqttUrl: string;
  /** The services' account (it may subscribe to `$SYS/broker/log/N` and `kilowatch/live/#`). */
  username: string;
  password: string;
  tasmotaDevice?: (suffix: string) => Promise<string | null>;
  now?: () => number;
}): BrokerLogWatch {
  const state = brokerLogState(opts);
  let granted: () => void = () => {};
  const up = new Promise<void>((r) => {
    granted = r;
  });
  const client: MqttClient = mqtt.connect(opts.mqttUrl, {
    username: opts.username,
    password: opts.password,
    clientId: `kilowatch-brokerlog-${randomBytes(6).toString('hex')}`,
    clean: true,
    reconnectPeriod: 2000,
    connectTimeout: 5000,
  });
  client.on('connect', () => {
    client.subscribe([BROKER_NOTICE_TOPIC, REJECTED_TOPIC], { qos: 0 }, (err, grants) => {
      if (!err && grants?.every((g) => g.qos !== 128)) granted();
    });
  });
  // Reconnects are the answer to errors; the route reports the account state meanwhile.
  client.on('error', () => {});
  client.on('message', (topic, payload) => {
    if (topic === BROKER_NOTICE_TOPIC) void state.line(payload.toString('utf8')).catch(() => {});
    else if (topic.endsWith('/rejected')) state.rejected(topic, payload);
  });

  return {
    connection: (key) => state.connection(key),
    unattributedRefusals: () => state.unattributedRefusals(),
    connected: () => client.connected,
    ready: () => up,
    async stop() {
      await client.endAsync(true);
    },
  };
}

/**
 * A broker-managing `MeterAccess` whose connection answer also carries what the broker's log and ingest
 * reported (and, in a process that also ingests, ingest's own last refusal).
 */
export function withBrokerLog<A extends MeterAccess>(
  access: A,
  watch: BrokerLogWatch,
  local?: () =>
    | {
        lastRejection(key: string): { topic: string; reason: string; detail: string; at: number } | undefined;
      }
    | undefined,
): A {
  return {
    ...access,
    async connection(deviceKey) {
      const state = await access.connection(deviceKey);
      const logged = watch.connection(deviceKey);
      const own = local?.()?.lastRejection(deviceKey);
      const lastRejection = latestRejection(
        logged?.lastRejection,
        own
          ? {
              reason: 'payload-rejected',
              topic: own.topic.slice(0, 256),
              at: own.at,
              detail: `${own.reason}: ${own.detail}`.slice(0, 300),
            }
          : undefined,
      );
      if (!logged && !lastRejection) return state;
      return {
        ...state,
        ...(logged ? { connected: logged.connected, lastConnectedAt: logged.lastConnectedAt ?? null } : {}),
        ...(lastRejection ? { lastRejection } : {}),
      };
    },
  };
}
