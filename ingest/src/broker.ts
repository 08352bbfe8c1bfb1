import { once } from 'node:events';
import { createServer } from 'node:net';
import { Aedes, type AedesOptions } from 'aedes';
import { createBrokerPersistence } from './brokerPersistence.ts';

export interface EmbeddedBroker {
  url: string;
  port: number;
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
  return {
    url: `mqtt://${host}:${port}`,
    port,
    async close() {
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
