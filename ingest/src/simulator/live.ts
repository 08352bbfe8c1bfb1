import { TOPICS } from '@kilowatch/core';
import mqtt, { type MqttClient } from 'mqtt';
import type { SimulatedDevice } from './devices.ts';
import { meterOutbox } from './outbox.ts';
import { type SimulationOptions, simulatedReading } from './readings.ts';

export interface Simulator {
  stop(): Promise<void>;
}

export interface SimulatorOptions extends SimulationOptions {
  mqttUrl: string;
  devices: readonly SimulatedDevice[];
  /** Time between two readings of a device (default 10 s). */
  intervalMs?: number;
  /** RSSI each device reports in its status message (default −60 dBm; below −80 reads as weak signal). */
  rssiOf?: (device: SimulatedDevice) => number;
  /**
   * Each meter's MQTT account (the broker refuses anonymous connections), asked again at every reconnect:
   * a meter whose password was rotated reconnects with the new one; one without an account any more (its
   * device deleted) stops.
   */
  credentialsOf?: (device: SimulatedDevice) => { username: string; password: string } | undefined;
}

/**
 * Simulated meters on the wire: one MQTT client per device, with its status as the last will, publishing
 * native readings (QoS 1) every `intervalMs`, aligned to the interval.
 */
export async function startSimulator(opts: SimulatorOptions): Promise<Simulator> {
  const intervalMs = opts.intervalMs ?? 10_000;
  const clients: MqttClient[] = [];
  const timers: NodeJS.Timeout[] = [];
  for (const device of opts.devices) {
    const client = await mqtt.connectAsync(opts.mqttUrl, {
      clientId: `kilowatch-sim-${device.deviceKey}`,
      ...opts.credentialsOf?.(device),
      clean: true,
      reconnectPeriod: 1000,
      will: {
        topic: TOPICS.status(device.deviceKey),
        payload: Buffer.from(JSON.stringify({ online: false })),
        qos: 1,
        retain: true,
      },
    });
    clients.push(client);
    if (opts.credentialsOf) {
      const credentialsOf = opts.credentialsOf;
      client.on('reconnect', () => {
        const now = credentialsOf(device);
        if (!now) {
          client.end(true);
          return;
        }
        client.options.username = now.username;
        client.options.password = now.password;
      });
    }
    await client.publishAsync(
      TOPICS.status(device.deviceKey),
      JSON.stringify({ online: true, rssi: opts.rssiOf?.(device) ?? -60 }),
      { qos: 1, retain: true },
    );
    let seq = 0;
    // Readings measured while the broker is away go out together once it is back (see `meterOutbox`).
    const outbox = meterOutbox(client);
    const tick = () => {
      const ts = Math.floor(Date.now() / 1000) * 1000;
      const r = simulatedReading(device, ts, opts);
      const payload = JSON.stringify({ ts, seq: seq++, values: r.values });
      outbox.publish(TOPICS.readings(device.deviceKey), payload);
    };
    const first = intervalMs - (Date.now() % intervalMs);
    const start = setTimeout(() => {
      tick();
      timers.push(setInterval(tick, intervalMs));
    }, first);
    timers.push(start);
  }
  return {
    async stop() {
      for (const t of timers) clearInterval(t);
      await Promise.all(
        clients.map(async (c, i) => {
          const d = opts.devices[i] as SimulatedDevice;
          // A clean stop says goodbye explicitly; the last will covers a crash.
          if (c.connected)
            await c.publishAsync(TOPICS.status(d.deviceKey), JSON.stringify({ online: false }), {
              qos: 1,
              retain: true,
            });
          await c.endAsync();
        }),
      );
    },
  };
}
