/**
 * The admin client of Mosquitto's dynamic security plugin (`$CONTROL/dynamic-security/v1`,
 * https://mosquitto.org/documentation/dynamic-security/): one command at a time, each matched to its
 * answer by correlation data.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';

const CONTROL_TOPIC = '$CONTROL/dynamic-security/v1';
const RESPONSE_TOPIC = `${CONTROL_TOPIC}/response`;

export interface DynsecResponse {
  command: string;
  error?: string;
  data?: Record<string, unknown>;
}

/** A command the plugin refused (`error`): `Client not found`, `Client already exists`, … */
export class DynsecError extends Error {
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(`dynamic security ${command}: ${reason}`);
  }
}

export interface DynsecControl {
  /** Runs one command; rejects with `DynsecError` on the plugin's refusal, `Error` when the broker is away. */
  run(command: string, params?: Record<string, unknown>): Promise<DynsecResponse>;
  connected(): boolean;
  stop(): Promise<void>;
}

/**
 * The admin connection to the plugin. It connects in the background and reconnects on its own: commands
 * fail fast while it is down (never queued for minutes), the caller retries.
 */
export function connectDynsec(opts: {
  mqttUrl: string;
  username: string;
  password: string;
  clientId?: string;
  /** How long one command waits for its answer (default 5 s). */
  timeoutMs?: number;
  onConnect?: () => void;
}): DynsecControl {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const waiting = new Map<string, { resolve(r: DynsecResponse): void; reject(e: Error): void }>();
  let ready = false;
  const client: MqttClient = mqtt.connect(opts.mqttUrl, {
    clientId: opts.clientId ?? `kilowatch-dynsec-${randomBytes(6).toString('hex')}`,
    username: opts.username,
    password: opts.password,
    clean: true,
    reconnectPeriod: 2000,
    connectTimeout: 5000,
  });
  client.on('connect', () => {
    client.subscribe(RESPONSE_TOPIC, { qos: 1 }, (err) => {
      if (err) return;
      ready = true;
      opts.onConnect?.();
    });
  });
  client.on('close', () => {
    ready = false;
  });
  // Reconnects are the answer to errors here; commands report the broker being away.
  client.on('error', () => {});
  client.on('message', (topic, payload) => {
    if (topic !== RESPONSE_TOPIC) return;
    let parsed: { responses?: (DynsecResponse & { correlationData?: string })[] };
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch {
      return;
    }
    for (const r of parsed.responses ?? []) {
      const w = r.correlationData ? waiting.get(r.correlationData) : undefined;
      if (!w) continue; // another API process's answer
      waiting.delete(r.correlationData!);
      if (r.error) w.reject(new DynsecError(r.command, r.error));
      else w.resolve(r);
    }
  });
  return {
    connected: () => ready && client.connected,
    run(command, params = {}) {
      if (!ready || !client.connected)
        return Promise.reject(
          new Error(`the MQTT broker's dynamic security does not answer (${opts.mqttUrl})`),
        );
      const correlationData = randomUUID();
      return new Promise<DynsecResponse>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(correlationData);
          reject(new Error(`the MQTT broker did not answer ${command} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting.set(correlationData, {
          resolve: (r) => {
            clearTimeout(timer);
            resolve(r);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        client.publish(
          CONTROL_TOPIC,
          JSON.stringify({ commands: [{ command, ...params, correlationData }] }),
          { qos: 1 },
          (err) => {
            if (!err) return;
            const w = waiting.get(correlationData);
            waiting.delete(correlationData);
            w?.reject(err);
          },
        );
      });
    },
    async stop() {
      for (const w of waiting.values()) w.reject(new Error('stopped'));
      waiting.clear();
      await client.endAsync(true);
    },
  };
}
