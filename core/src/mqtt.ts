/**
 * Which MQTT topics a meter may use (docs/api.md §MQTT). A meter authenticates with its device's credentials
 * and may publish only on topics that name it — its device key, its stock Shelly prefix (`<model id>-<mac>`)
 * and, when its device holds them, its stock Tasmota topic (`tasmota_<last 6 hex of the MAC>`) — and
 * subscribe only to its own command topics. The Tasmota suffix is shared by every MAC that ends alike, so
 * it belongs to at most one claimed device (the claim refuses a second: `stockSuffixOf`); a device claimed
 * without it uses its device key as its Topic. Both brokers apply these rules: the embedded one in code,
 * Mosquitto through the per-device roles the API keeps in its dynamic security plugin (`meterAcl`).
 *
 * It also holds the contracts between Kilowatch's own processes over the broker, each a schema with its
 * codec so that both ends read the same rule: the meters' credentials (`newMeterPassword`, `BrokerAuth`),
 * committed readings on `kilowatch/live/<key>` and refused messages on `kilowatch/live/<key>/rejected`
 * (ingest → API), and the hub's events on `kilowatch/hub/events` (API → API). A message that does not
 * match its schema decodes to null: the receiver counts it and drops it.
 */
import * as v from 'valibot';
import { DEVICE_KEY_PATTERN } from './devices.ts';
import { DeviceKeySchema, type Reading } from './readings.ts';

/** Stock Shelly Gen2/Gen3 model ids that meter energy; their MQTT prefix defaults to `<id>-<mac>`. */
export const SHELLY_MODEL_IDS = [
  'shellypro3em',
  'shellyproem50',
  'shellyemg3',
  'shellyem',
  'shellypro1pm',
  'shellypro2pm',
  'shellypro4pm',
  'shellyplus1pm',
  'shellyplus2pm',
  'shellyplusplugs',
  'shellypmmini',
  'shellypmminig3',
  'shelly1pmg3',
  'shellyplugsg3',
] as const;

/**
 * The part of a MAC its stock Tasmota names carry (`tasmota_<suffix>`, client id `DVES_<suffix>`): the last
 * three bytes in upper-case hex. Unique among claimed devices that hold their stock topics.
 */
export function stockSuffixOf(deviceKey: string): string {
  return deviceKey.slice(6).toUpperCase();
}

/** Tasmota's default topic for a MAC: `tasmota_` and the last three bytes in upper-case hex. */
export function tasmotaTopicOf(deviceKey: string): string {
  return `tasmota_${stockSuffixOf(deviceKey)}`;
}

/** Shelly's default MQTT prefix: the model id (Pro 3EM unless another is named) and the MAC. */
export function shellyPrefixOf(deviceKey: string, model?: string): string {
  const id = model?.toLowerCase().replace(/[^a-z0-9]/g, '');
  return `${id && (SHELLY_MODEL_IDS as readonly string[]).includes(id) ? id : 'shellypro3em'}-${deviceKey}`;
}

/** The topics a claimed meter publishes its readings on, per firmware (the claim answer's `topics`). */
export function meterTopics(
  deviceKey: string,
  model?: string,
  stockTopics = true,
): { native: string; tasmota: string; shelly: string } {
  return {
    native: `kilowatch/meters/${deviceKey}/readings`,
    tasmota: `tele/${stockTopics ? tasmotaTopicOf(deviceKey) : deviceKey}/SENSOR`,
    shelly: `${shellyPrefixOf(deviceKey, model)}/events/rpc`,
  };
}

/** Who a topic names: a device key, a Tasmota MAC suffix (6 upper-case hex digits), or nobody. */
export type TopicOwner = { deviceKey: string } | { tasmotaSuffix: string } | null;

const TASMOTA_TOPIC = /^tasmota_([0-9A-Fa-f]{6})(?:_fb)?$/;
const SHELLY_PREFIX = /^(?:[a-z0-9]+-)?([0-9a-f]{12})$/;
const TASMOTA_PREFIXES = new Set(['tele', 'stat', 'cmnd']);

/** The device a Tasmota topic level names: its key, or its stock `tasmota_XXXXXX`. */
function tasmotaOwner(level: string): TopicOwner {
  const lower = level.replace(/_fb$/, '').toLowerCase();
  if (DEVICE_KEY_PATTERN.test(lower)) return { deviceKey: lower };
  const m = TASMOTA_TOPIC.exec(level);
  return m ? { tasmotaSuffix: m[1]!.toUpperCase() } : null;
}

/**
 * The device a topic (or a subscription filter) names, read from the level that carries it in each
 * firmware's layout: `kilowatch/meters/<key>/…`, `tele|stat|cmnd/<Topic>/…`, `<Shelly prefix>/…`.
 */
export function topicOwner(topic: string): TopicOwner {
  const parts = topic.split('/');
  if (parts.length < 2) return null;
  const [first, second] = parts as [string, string];
  if (first === 'kilowatch') {
    if (parts.length === 4 && second === 'meters' && DEVICE_KEY_PATTERN.test(parts[2]!))
      return { deviceKey: parts[2]! };
    return null;
  }
  if (TASMOTA_PREFIXES.has(first)) return parts.length >= 3 ? tasmotaOwner(second) : null;
  const m = SHELLY_PREFIX.exec(first);
  return m ? { deviceKey: m[1]! } : null;
}

/**
 * A meter as the brokers know it: its device key, and whether its device holds its stock Tasmota names
 * (`tasmota_<suffix>`, `DVES_<suffix>`). A bare key is a device that holds them.
 */
export type MeterIdentity = string | { deviceKey: string; stockTopics: boolean };

const keyOf = (m: MeterIdentity) => (typeof m === 'string' ? m : m.deviceKey);
const holdsStock = (m: MeterIdentity) => typeof m === 'string' || m.stockTopics;

/** Whether an owner is the meter `m`. */
function owns(owner: TopicOwner, m: MeterIdentity): boolean {
  if (!owner) return false;
  if ('deviceKey' in owner) return owner.deviceKey === keyOf(m);
  return holdsStock(m) && owner.tasmotaSuffix === stockSuffixOf(keyOf(m));
}

const STOCK_SHELLY_CLIENT = /^[a-z0-9]+-([0-9a-f]{12})$/;
const STOCK_TASMOTA_CLIENT = /^DVES_([0-9A-Fa-f]{6})$/;

/**
 * A meter connecting with a stock client id: null when the id is its own (or not a stock id), else
 * 'other-device'. A stock id names one device — Tasmota's `DVES_<suffix>` the device that holds the suffix,
 * Shelly's `<model id>-<mac>` the device of that MAC — and no other account may use it. Any other id
 * belongs to the first account connected with it while it is connected or has a session (the brokers keep
 * that binding: `docs/api.md` §MQTT).
 */
export function meterClientIdRefusal(m: MeterIdentity, clientId: string): TopicRefusal | null {
  const key = keyOf(m);
  const tasmota = STOCK_TASMOTA_CLIENT.exec(clientId);
  if (tasmota)
    return holdsStock(m) && tasmota[1]!.toUpperCase() === stockSuffixOf(key) ? null : 'other-device';
  const shelly = STOCK_SHELLY_CLIENT.exec(clientId);
  if (shelly) return shelly[1] === key ? null : 'other-device';
  return null;
}

/** Why a meter's publish or subscription was refused: it names another device, or no device at all. */
export type TopicRefusal = 'other-device' | 'not-allowed';

const NATIVE_LEAVES = new Set(['readings', 'status']);

/** A meter publishing on `topic`: null when allowed, else why not. */
export function meterPublishRefusal(meter: MeterIdentity, topic: string): TopicRefusal | null {
  if (topic.startsWith('$')) return 'not-allowed';
  const owner = topicOwner(topic);
  if (!owner) return 'not-allowed';
  if (!owns(owner, meter)) return 'other-device';
  const parts = topic.split('/');
  if (parts[0] === 'kilowatch') return NATIVE_LEAVES.has(parts[3]!) ? null : 'not-allowed';
  // A meter publishes its own state and telemetry, never commands to itself or others.
  if (parts[0] === 'cmnd') return 'not-allowed';
  return null;
}

/**
 * A meter subscribing to `filter`: null when allowed (its own command topics and prefix), else why not.
 * Wildcards may only follow the level that names the device.
 */
export function meterSubscribeRefusal(meter: MeterIdentity, filter: string): TopicRefusal | null {
  if (filter.startsWith('$')) return 'not-allowed';
  const parts = filter.split('/');
  const ownerLevels = parts[0] === 'kilowatch' ? 3 : TASMOTA_PREFIXES.has(parts[0]!) ? 2 : 1;
  if (parts.slice(0, ownerLevels).some((p) => p === '+' || p === '#')) return 'not-allowed';
  const owner =
    parts[0] === 'kilowatch'
      ? parts[1] === 'meters' && DEVICE_KEY_PATTERN.test(parts[2] ?? '')
        ? { deviceKey: parts[2]! }
        : null
      : TASMOTA_PREFIXES.has(parts[0]!)
        ? parts.length >= 2
          ? tasmotaOwner(parts[1]!)
          : null
        : topicOwner(`${parts[0]}/x`);
  if (!owner) return 'not-allowed';
  return owns(owner, meter) ? null : 'other-device';
}

/**
 * The topic the bridge decodes a meter's message under: the same firmware layout with the device's key
 * in place of whatever name the meter uses (`tele/tasmota_A1B2C3/SENSOR` → `tele/<key>/SENSOR`). The
 * meter's identity comes from its credentials; the topic only picks the decoder.
 */
export function canonicalMeterTopic(deviceKey: string, topic: string): string {
  const parts = topic.split('/');
  if (parts[0] === 'kilowatch') return topic;
  if (TASMOTA_PREFIXES.has(parts[0]!)) {
    parts[1] = deviceKey;
    return parts.join('/');
  }
  parts[0] = deviceKey;
  return parts.join('/');
}

/**
 * The Mosquitto dynamic-security ACL of one meter: publish on its native topics, its Tasmota topics (its
 * key, and its stock `tasmota_<suffix>` when its device holds it) and its Shelly prefixes (stock model ids
 * and the bare key), subscribe to its own command topics.
 */
export function meterAcl(
  meter: MeterIdentity,
): { acltype: string; topic: string; allow: boolean; priority: number }[] {
  const deviceKey = keyOf(meter);
  const tasmota = holdsStock(meter) ? [deviceKey, tasmotaTopicOf(deviceKey)] : [deviceKey];
  const shelly = [deviceKey, ...SHELLY_MODEL_IDS.map((id) => `${id}-${deviceKey}`)];
  const acl: { acltype: string; topic: string; allow: boolean; priority: number }[] = [];
  const add = (acltype: string, topic: string) => acl.push({ acltype, topic, allow: true, priority: 0 });
  add('publishClientSend', `kilowatch/meters/${deviceKey}/readings`);
  add('publishClientSend', `kilowatch/meters/${deviceKey}/status`);
  for (const t of tasmota) {
    add('publishClientSend', `tele/${t}/#`);
    add('publishClientSend', `stat/${t}/#`);
    add('subscribePattern', `cmnd/${t}/#`);
    add('publishClientReceive', `cmnd/${t}/#`);
  }
  for (const p of shelly) {
    add('publishClientSend', `${p}/#`);
    add('subscribePattern', `${p}/#`);
    add('publishClientReceive', `${p}/#`);
  }
  add('subscribePattern', `kilowatch/meters/${deviceKey}/#`);
  add('publishClientReceive', `kilowatch/meters/${deviceKey}/#`);
  return acl;
}

// ---------------------------------------------------------------------------------------------------------
// Meter credentials: what the API issues and what a broker asks it at each connection.

/** A meter's MQTT password: 24 random bytes in base64url (32 characters, 192 bits, nothing to guess). */
export const METER_PASSWORD_PATTERN = /^[A-Za-z0-9_-]{32}$/;

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** A new meter password (`METER_PASSWORD_PATTERN`), from the platform's cryptographic random source. */
export function newMeterPassword(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(24));
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += BASE64URL[n >> 18]! + BASE64URL[(n >> 12) & 63]! + BASE64URL[(n >> 6) & 63]! + BASE64URL[n & 63]!;
  }
  return out;
}

/**
 * What a broker asks the metadata store, once per connection: the device whose MQTT account the
 * username is and whether the password is its current one, or null for an unknown username.
 * `stockTopics` (default true): whether the device holds its stock Tasmota names (`tasmota_<suffix>`,
 * `DVES_<suffix>`), which belong to one device at most.
 */
export type MeterVerdict = { deviceKey: string; ok: boolean; stockTopics?: boolean } | null;

/** Who checks a meter's credentials for the embedded broker (the API, against its metadata database). */
export interface BrokerAuth {
  verifyMeter(username: string, password: string): Promise<MeterVerdict>;
}

// ---------------------------------------------------------------------------------------------------------
// Ingest → API: committed readings and refused messages.

/** A committed reading as ingest publishes it on `kilowatch/live/<deviceKey>`. */
export const LiveReadingSchema = v.object({
  deviceKey: DeviceKeySchema,
  ts: v.pipe(v.number(), v.finite()),
  seq: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  values: v.record(v.string(), v.pipe(v.number(), v.finite())),
});

const utf8 = new TextDecoder();
const text = (payload: Uint8Array | string) => (typeof payload === 'string' ? payload : utf8.decode(payload));

/** A JSON payload read by `schema`: its output, or null when the payload is not JSON or does not match. */
function decodeJson<S extends v.GenericSchema>(
  schema: S,
  payload: Uint8Array | string,
): v.InferOutput<S> | null {
  let json: unknown;
  try {
    json = JSON.parse(text(payload));
  } catch {
    return null;
  }
  const parsed = v.safeParse(schema, json);
  return parsed.success ? parsed.output : null;
}

/** The payload of `kilowatch/live/<deviceKey>` for a committed reading. */
export function encodeLiveReading(r: Reading): string {
  return JSON.stringify(
    r.seq === undefined
      ? { deviceKey: r.deviceKey, ts: r.ts, values: r.values }
      : { deviceKey: r.deviceKey, ts: r.ts, seq: r.seq, values: r.values },
  );
}

/**
 * The reading of a `kilowatch/live/<deviceKey>` message, or null when the payload is not one (or, given
 * the topic, names another device than the topic does).
 */
export function decodeLiveReading(payload: Uint8Array | string, topic?: string): Reading | null {
  const r = decodeJson(LiveReadingSchema, payload);
  return r && (topic === undefined || topic === `kilowatch/live/${r.deviceKey}`) ? r : null;
}

/** A meter's message that ingest refused, on `kilowatch/live/<deviceKey>/rejected`. */
export const LiveRejectionSchema = v.object({
  topic: v.string(),
  reason: v.string(),
  detail: v.optional(v.string(), ''),
  at: v.optional(v.pipe(v.number(), v.finite())),
});
export type LiveRejection = v.InferOutput<typeof LiveRejectionSchema>;

export function encodeLiveRejection(r: LiveRejection): string {
  return JSON.stringify(r);
}

/** The refusal of a `kilowatch/live/<deviceKey>/rejected` message, or null when the payload is not one. */
export function decodeLiveRejection(payload: Uint8Array | string): LiveRejection | null {
  return decodeJson(LiveRejectionSchema, payload);
}

// ---------------------------------------------------------------------------------------------------------
// API → API: the hub's events (`kilowatch/hub/events`).

const UserId = v.pipe(v.number(), v.safeInteger());

/**
 * One API process's hub event for the others: a message for a user's sockets (its `message` is one of the
 * socket messages of docs/api.md §Real-time hub, checked here only for its `type`), a user's sessions to
 * check again (a logout), or a device's alert settings to read again.
 */
export const HubEnvelopeSchema = v.object({
  origin: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  event: v.variant('kind', [
    v.object({
      kind: v.literal('user'),
      userId: UserId,
      key: v.string(),
      message: v.looseObject({ type: v.string() }),
    }),
    v.object({ kind: v.literal('sessions'), userId: UserId }),
    v.object({ kind: v.literal('alert-settings'), deviceKey: v.string() }),
  ]),
});
export type HubEnvelope = v.InferOutput<typeof HubEnvelopeSchema>;

export function encodeHubEnvelope(e: HubEnvelope): string {
  return JSON.stringify(e);
}

/** The envelope of a `kilowatch/hub/events` message, or null when the payload is not one. */
export function decodeHubEnvelope(payload: Uint8Array | string): HubEnvelope | null {
  return decodeJson(HubEnvelopeSchema, payload);
}
