/**
 * The hub across API processes. A user's sockets may be held by any API replica, while the alert that
 * concerns them is evaluated by one replica (the shared subscription), their export runs on whichever
 * replica took the job, and their logout reaches one replica. Each of those events is delivered to the
 * sockets of the process where it happens and published on the broker (`kilowatch/hub/events`), from
 * where every other API process delivers it to its own sockets (notifications, export progress) or checks
 * the user's sessions again (a logout: the sockets close with 1008 at once, not at the next periodic check).
 *
 * Only API processes publish here; on a broker shared with meters, restrict `kilowatch/hub/#` to the API's
 * credentials (as `kilowatch/live/#` to ingest's).
 */
import { decodeHubEnvelope, encodeHubEnvelope } from '@kilowatch/core';
import mqtt from 'mqtt';
import type { HubEvent, HubMessage, HubRelay } from './hub.ts';

export type { HubEvent, HubRelay };

export const HUB_EVENTS_TOPIC = 'kilowatch/hub/events';

/**
 * The event of another process's envelope (core's `decodeHubEnvelope`), or null when it is this process's
 * own or not an envelope. A user's message is checked only for its `type`: it was made by an API process
 * of this release and goes to the user's sockets as it came.
 */
function eventOf(payload: Buffer, origin: string): HubEvent | null {
  const e = decodeHubEnvelope(payload);
  if (!e || e.origin === origin) return null;
  const ev = e.event;
  return ev.kind === 'user' ? { ...ev, message: ev.message as HubMessage } : ev;
}

export async function startHubRelay(opts: {
  mqttUrl: string;
  clientId?: string;
  /** The services' MQTT account (`KW_MQTT_USERNAME`, `KW_MQTT_PASSWORD`). */
  username?: string;
  password?: string;
  onError?: (err: unknown) => void;
}): Promise<HubRelay> {
  const origin = `${process.pid}-${Math.random().toString(16).slice(2, 10)}`;
  const listeners = new Set<(event: HubEvent) => void>();
  const client = await mqtt.connectAsync(opts.mqttUrl, {
    ...(opts.username ? { username: opts.username, password: opts.password ?? '' } : {}),
    clientId: opts.clientId ?? `kilowatch-hub-${origin}`,
    clean: true,
    reconnectPeriod: 1000,
  });
  client.on('message', (_topic, payload) => {
    const event = eventOf(payload, origin);
    if (!event) return;
    for (const fn of listeners) fn(event);
  });
  await client.subscribeAsync(HUB_EVENTS_TOPIC, { qos: 1 });
  return {
    publish(event) {
      client.publish(HUB_EVENTS_TOPIC, encodeHubEnvelope({ origin, event }), { qos: 1 }, (err) => {
        if (err) opts.onError?.(err);
      });
    },
    onEvent(fn) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    async stop() {
      await client.endAsync();
    },
  };
}
