/**
 * What a user pastes into a meter to connect it (docs/api.md §MQTT): the broker account and the three topic
 * formats, native JSON, Tasmota and Shelly Gen2/Gen3, built from the claim's answer. Pure, so the texts
 * are tested without a browser.
 */

export interface BrokerSettings {
  host: string;
  port: number;
  tls: boolean;
  /** Null when the broker takes meters without an account. */
  username: string | null;
  password: string | null;
  deviceKey: string;
  topics: { native: string; tasmota: string; shelly: string };
}

export function defaultTopics(deviceKey: string): BrokerSettings['topics'] {
  return {
    native: `kilowatch/meters/${deviceKey}/readings`,
    tasmota: `tele/${deviceKey}/SENSOR`,
    shelly: `${deviceKey}/events/rpc`,
  };
}

/** Quotes a value for a POSIX shell (single quotes, inner ones escaped). */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** An example reading in the native format, for the given parameters. */
export function nativeExample(values: Record<string, number>, ts: number): string {
  return JSON.stringify({ ts: new Date(ts).toISOString(), values });
}

/** A `mosquitto_pub` command that publishes one native reading with the meter's account. */
export function nativeCommand(s: BrokerSettings, payload: string): string {
  return [
    'mosquitto_pub',
    `-h ${s.host}`,
    `-p ${s.port}`,
    s.tls ? '--capath /etc/ssl/certs' : null,
    s.username ? `-u ${shellQuote(s.username)}` : null,
    s.password ? `-P ${shellQuote(s.password)}` : null,
    `-t ${shellQuote(s.topics.native)}`,
    `-q 1 -m ${shellQuote(payload)}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * One Tasmota console command: broker, account and a topic whose telemetry lands on `tele/<key>/SENSOR`
 * (Tasmota's default full topic `%prefix%/%topic%/` with the `tele` prefix), every 10 s.
 */
export function tasmotaCommand(s: BrokerSettings): string {
  const topic = s.topics.tasmota.replace(/^tele\//, '').replace(/\/SENSOR$/, '');
  const parts = [
    `MqttHost ${s.host}`,
    `MqttPort ${s.port}`,
    s.username ? `MqttUser ${s.username}` : null,
    s.password ? `MqttPassword ${s.password}` : null,
    `Topic ${topic}`,
    'FullTopic %prefix%/%topic%/',
    'TelePeriod 10',
  ].filter(Boolean);
  return `Backlog ${parts.join('; ')}`;
}

/** The MQTT configuration of a Shelly Gen2/Gen3 meter, as its `MQTT.SetConfig` RPC takes it. */
export function shellyConfig(s: BrokerSettings): Record<string, unknown> {
  const prefix = s.topics.shelly.replace(/\/events\/rpc$/, '');
  return {
    enable: true,
    server: `${s.host}:${s.port}`,
    client_id: prefix,
    user: s.username ?? '',
    pass: s.password ?? '',
    ssl_ca: s.tls ? 'ca.pem' : null,
    topic_prefix: prefix,
    rpc_ntf: true,
    status_ntf: false,
    enable_control: false,
  };
}

/** A `curl` call that sets the Shelly's MQTT configuration over its local RPC (then reboot it). */
export function shellyCommand(s: BrokerSettings, shellyAddress = '<shelly-ip>'): string {
  const body = JSON.stringify({ config: shellyConfig(s) });
  return `curl -X POST -d ${shellQuote(body)} http://${shellyAddress}/rpc/MQTT.SetConfig`;
}
