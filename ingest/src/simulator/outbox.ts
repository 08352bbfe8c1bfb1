/**
 * A meter's outbox: what it measures while the broker is away waits here and goes out as one burst once
 * it is back, instead of through mqtt.js's own offline store.
 *
 * mqtt.js keeps a QoS 1 message published while disconnected in its outgoing store and, after the
 * reconnect, replays that store one message per PUBACK. Kilowatch's brokers acknowledge a reading only
 * after the store has committed it (the embedded broker holds the meter's PUBACK until then), so such a
 * replay costs one commit per message: a meter that was cut off for an hour took minutes to catch up.
 * Published once connected, the backlog's messages are all on the wire at once; the broker reads them
 * together and ingest commits them in batches, like new readings.
 */
import type { MqttClient } from 'mqtt';

export interface MeterOutbox {
  /** Publishes at QoS 1 now, or keeps the message for the reconnect when the broker is away. */
  publish(topic: string, payload: string): void;
  /** Messages kept for the reconnect. */
  readonly waiting: number;
  /** Messages dropped because the outbox was full (the oldest go first). */
  readonly dropped: number;
}

export function meterOutbox(client: MqttClient, max = 100_000): MeterOutbox {
  const kept: { topic: string; payload: string }[] = [];
  let dropped = 0;
  const send = (topic: string, payload: string) => client.publish(topic, payload, { qos: 1 }, () => {});
  // 'connect' comes after mqtt.js has replayed what it already had in flight.
  client.on('connect', () => {
    const burst = kept.splice(0);
    for (const m of burst) send(m.topic, m.payload);
  });
  return {
    publish(topic, payload) {
      if (client.connected && kept.length === 0) {
        send(topic, payload);
        return;
      }
      kept.push({ topic, payload });
      if (kept.length > max) {
        kept.shift();
        dropped++;
      }
    },
    get waiting() {
      return kept.length;
    },
    get dropped() {
      return dropped;
    },
  };
}
