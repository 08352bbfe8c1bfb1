/**
 * Alert input on an external broker: committed readings from `kilowatch/live/+` through the MQTT 5 shared
 * subscription `$share/kilowatch-alerts/...`, so the broker hands each reading to exactly one API process
 * and no alert is raised twice. (The hub, in contrast, needs every reading in every process: it uses the
 * plain subscription of ingest's `startLiveSubscriber`.) Both read the payload with core's `decodeLiveReading`.
 */
import { decodeLiveReading, type Reading } from '@kilowatch/core';
import mqtt from 'mqtt';
import type { LiveSource } from '../hub/live-source.ts';
import { ALERTS_SHARED_TOPIC } from './evaluator.ts';

export interface SharedAlertSource extends LiveSource {
  /** Whether the broker connection is up now (readiness reports it). */
  connected(): boolean;
  /** Messages that were not a reading (`decodeLiveReading`), dropped (metrics). */
  dropped(): number;
  stop(): Promise<void>;
}

export async function startSharedAlertSource(opts: {
  mqttUrl: string;
  clientId?: string;
  /** The services' MQTT account (`KW_MQTT_USERNAME`, `KW_MQTT_PASSWORD`). */
  username?: string;
  password?: string;
}): Promise<SharedAlertSource> {
  const listeners = new Set<(r: Reading) => void>();
  const client = await mqtt.connectAsync(opts.mqttUrl, {
    ...(opts.username ? { username: opts.username, password: opts.password ?? '' } : {}),
    protocolVersion: 5,
    clientId: opts.clientId ?? `kilowatch-alerts-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
    clean: true,
    reconnectPeriod: 1000,
  });
  let dropped = 0;
  client.on('message', (topic, payload) => {
    const r = decodeLiveReading(payload, topic);
    if (!r) {
      dropped++;
      return;
    }
    for (const fn of listeners) fn(r);
  });
  await client.subscribeAsync(ALERTS_SHARED_TOPIC, { qos: 1 });
  return {
    onReading(fn) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    connected: () => client.connected,
    dropped: () => dropped,
    async stop() {
      await client.endAsync();
    },
  };
}
