/**
 * Alert input on an external broker: committed readings from `kilowatch/live/+` through the MQTT 5 shared
 * subscription `$share/kilowatch-alerts/...`, so the broker hands each reading to exactly one API process
 * and no alert is raised twice. (The hub, in contrast, needs every reading in every process: it uses the
 * plain subscription of `startLiveSubscriber` from @kilowatch/ingest.)
 */
import type { Reading } from '@kilowatch/core';
import { liveReadingFromPayload } from '@kilowatch/ingest';
import mqtt from 'mqtt';
import type { LiveSource } from '../hub/live-source.ts';
import { ALERTS_SHARED_TOPIC } from './evaluator.ts';

export interface SharedAlertSource extends LiveSource {
  /** Whether the broker connection is up now (readiness reports it). */
  connected(): boolean;
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
  client.on('message', (_topic, payload) => {
    const r = liveReadingFromPayload(payload);
    if (!r) return;
    for (const fn of listeners) fn(r);
  });
  await client.subscribeAsync(ALERTS_SHARED_TOPIC, { qos: 1 });
  return {
    onReading(fn) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    connected: () => client.connected,
    async stop() {
      await client.endAsync();
    },
  };
}
