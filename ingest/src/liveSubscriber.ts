/**
 * The live bus of an api replica in a server deployment: committed readings arrive from the ingest
 * replicas on `kilowatch/live/<deviceKey>` and device status straight from the meters' status topic.
 */
import { decodeLiveReading, TOPICS } from '@kilowatch/core';
import mqtt from 'mqtt';
import { DeviceStates } from './bridge/deviceStates.ts';
import { decodeMessage } from './decoders/index.ts';
import { type DeviceState, type LiveBus, LocalLiveBus } from './liveBus.ts';

export interface LiveSubscriber extends LiveBus {
  deviceState(deviceKey: string): DeviceState | undefined;
  /** Whether the broker connection is up now (readiness reports it). */
  connected(): boolean;
  /** Live readings received (metrics). */
  received(): number;
  /** Messages on `kilowatch/live/<key>` that were not a reading (`decodeLiveReading`), dropped (metrics). */
  dropped(): number;
  stop(): Promise<void>;
}

export async function startLiveSubscriber(opts: {
  mqttUrl: string;
  clientId?: string;
  /** The services' MQTT account (`KW_MQTT_USERNAME`, `KW_MQTT_PASSWORD`). */
  username?: string;
  password?: string;
}): Promise<LiveSubscriber> {
  const bus = new LocalLiveBus();
  const states = new DeviceStates((s) => bus.emitStatus(s), Date.now);
  const client = await mqtt.connectAsync(opts.mqttUrl, {
    ...(opts.username ? { username: opts.username, password: opts.password ?? '' } : {}),
    clientId: opts.clientId ?? `kilowatch-live-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
    clean: true,
    reconnectPeriod: 1000,
  });
  let received = 0;
  let dropped = 0;
  client.on('message', (topic, payload) => {
    if (topic.startsWith('kilowatch/live/')) {
      const r = decodeLiveReading(payload, topic);
      if (!r) {
        dropped++;
        return;
      }
      received++;
      // As the bridge does: a reading keeps a device's state fresh, and brings a device without one (a
      // meter that never sends a status) or an offline one online.
      states.touch(r);
      bus.emitReading(r);
      return;
    }
    const decoded = decodeMessage(topic, payload, { now: Date.now() });
    if (decoded.kind !== 'status') return;
    const prev = states.get(decoded.deviceKey);
    const next: DeviceState = {
      deviceKey: decoded.deviceKey,
      status: decoded.update.status,
      lastSeen: prev?.lastSeen ?? null,
    };
    if (decoded.update.rssi !== undefined) next.rssi = decoded.update.rssi;
    states.replace(next);
  });
  await client.subscribeAsync([TOPICS.live('+'), TOPICS.status('+')], { qos: 0 });
  return {
    onReading: (fn) => bus.onReading(fn),
    onStatus: (fn) => bus.onStatus(fn),
    deviceState: (key) => states.get(key),
    connected: () => client.connected,
    received: () => received,
    dropped: () => dropped,
    async stop() {
      await client.endAsync();
    },
  };
}
