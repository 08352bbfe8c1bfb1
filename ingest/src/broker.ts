import { once } from 'node:events';
import { createServer } from 'node:net';
import { Aedes, type AedesOptions, type AedesPublishPacket } from 'aedes';
import { createBrokerPersistence } from './brokerPersistence.ts';

/** A message handed to an attached sink: what the meter published. */
export interface SinkPacket {
  topic: string;
  payload: Buffer | string;
  qos: 0 | 1 | 2;
}

/**
 * In-process consumer of the embedded broker (the embedded deployment's ingest). Publishes on the
 * topics it `takes` are handed to `publish` before the broker acknowledges them: the broker sends the
 * meter's PUBACK only when `done` is called (after the store commits), and reads nothing more from that
 * meter's connection until then. Messages on `watch` filters (statuses, wills) arrive after the broker
 * took them, with no acknowledgement to hold.
 */
export interface BrokerSink {
  takes(topic: string): boolean;
  publish(packet: SinkPacket, done: () => void): void;
  watch: readonly string[];
  message(packet: SinkPacket): void;
}

export interface EmbeddedBroker {
  url: string;
  port: number;
  /** Attaches the in-process sink (at most one). */
  attach(sink: BrokerSink): Promise<void>;
  close(): Promise<void>;
}

/** The in-process MQTT broker of the embedded deployment (aedes over node:net, loopback only by default). */
export async function startEmbeddedBroker(
  opts: { port?: number; host?: string } = {},
): Promise<EmbeddedBroker> {
  const host = opts.host ?? '127.0.0.1';
  const aedes = await Aedes.createBroker({
    persistence: createBrokerPersistence() as AedesOptions['persistence'],
  });
  const server = createServer(aedes.handle);
  server.listen(opts.port ?? 0, host);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? 0);
  let attached: BrokerSink | null = null;
  const authorize = aedes.authorizePublish.bind(aedes);
  aedes.authorizePublish = (client, packet, callback) => {
    authorize(client, packet, (error) => {
      const sink = attached;
      if (error || !client || !sink || !sink.takes(packet.topic)) {
        callback(error);
        return;
      }
      sink.publish({ topic: packet.topic, payload: packet.payload, qos: packet.qos }, () => callback(null));
    });
  };
  return {
    url: `mqtt://${host}:${port}`,
    port,
    async attach(sink) {
      if (attached) throw new Error('the embedded broker already has a sink attached');
      attached = sink;
      for (const filter of sink.watch) {
        await new Promise<void>((resolve) =>
          aedes.subscribe(
            filter,
            (packet: AedesPublishPacket, cb: () => void) => {
              sink.message({ topic: packet.topic, payload: packet.payload, qos: packet.qos });
              cb();
            },
            resolve,
          ),
        );
      }
    },
    async close() {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
