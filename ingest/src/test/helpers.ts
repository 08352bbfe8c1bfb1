import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import type { TelemetryStore, WriteResult } from '@kilowatch/tsdb';

/** The suites' one wait for a condition (`until` of the test kit), under the name ingest's tests use. */
export { until as waitFor } from '@kilowatch/testkit';

/** Reads a counter or gauge (summed over labels, or one label set) from Prometheus text. */
export function metricValue(text: string, name: string, labels?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const [key, value] = line.split(' ');
    if (!key || value === undefined) continue;
    const base = key.split('{')[0];
    if (base !== name) continue;
    if (labels && !key.includes(labels)) continue;
    sum += Number(value);
  }
  return sum;
}

/**
 * The real store with `before` run ahead of each write, on both write paths (`write`, and `writeColumns`
 * where the store has it: the bridge writes columns to such a store). `before` may wait or throw.
 */
function beforeWrites(inner: TelemetryStore, before: () => Promise<void> | void): TelemetryStore {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'write' || (prop === 'writeColumns' && target.writeColumns)) {
        const write = Reflect.get(target, prop, receiver) as (batch: unknown) => Promise<WriteResult>;
        return async (batch: unknown) => {
          await before();
          return write.call(target, batch);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** The real store, with writes held until the gate opens (a store that is slow to commit). */
export function gatedStore(inner: TelemetryStore): {
  store: TelemetryStore;
  open(): void;
  writes: () => number;
} {
  let open!: () => void;
  const gate = new Promise<void>((r) => {
    open = r;
  });
  let writes = 0;
  const store = beforeWrites(inner, async () => {
    writes++;
    await gate;
  });
  return { store, open, writes: () => writes };
}

/** The real store, failing its first `n` writes as an unavailable server would. */
export function flakyStore(inner: TelemetryStore, n: number, makeError: () => Error): TelemetryStore {
  let failures = 0;
  return beforeWrites(inner, () => {
    if (failures < n) {
      failures++;
      throw makeError();
    }
  });
}

/** The real store behind a switch: while it is off, writes fail as an unreachable server's would. */
export function switchableStore(inner: TelemetryStore, makeError: () => Error) {
  let down = false;
  const store = beforeWrites(inner, async () => {
    if (down) {
      await new Promise((r) => setTimeout(r, 20));
      throw makeError();
    }
  });
  return {
    store,
    outage: {
      begin: () => {
        down = true;
      },
      end: () => {
        down = false;
      },
    },
  };
}

/** The real store, counting the writes it is given (both write paths): one per commit. */
export function countedStore(inner: TelemetryStore): { store: TelemetryStore; writes: () => number } {
  let writes = 0;
  const store = beforeWrites(inner, () => {
    writes++;
  });
  return { store, writes: () => writes };
}

/**
 * A loopback TCP relay to an MQTT broker that holds the broker's SUBACKs back by `ms`, as a slow link
 * or a busy broker may: whatever the broker sends right after CONNACK (a persistent session's queue)
 * reaches the client before its subscription is confirmed. Other packets pass in order.
 */
export async function slowSubackRelay(
  brokerPort: number,
  ms: number,
): Promise<{ url: string; close(): void; brokerClosed(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const upstreamClosed: Promise<void>[] = [];
  const server = createServer((client) => {
    const upstream = connect(brokerPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    upstreamClosed.push(new Promise<void>((resolve) => upstream.once('close', () => resolve())));
    client.pipe(upstream);
    let pending = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      // Whole MQTT packets: a fixed-header byte, the remaining length (variable-length integer), the rest.
      for (;;) {
        let len = 0;
        let mul = 1;
        let i = 1;
        for (; i < pending.length && i <= 4; i++) {
          const b = pending[i]!;
          len += (b & 0x7f) * mul;
          mul *= 128;
          if ((b & 0x80) === 0) break;
        }
        if (i >= pending.length || pending.length < i + 1 + len) return;
        const packet = pending.subarray(0, i + 1 + len);
        pending = pending.subarray(i + 1 + len);
        if (packet[0]! >> 4 === 9) setTimeout(() => client.write(packet), ms);
        else client.write(packet);
      }
    });
    // A side that closes is ended on the other, never destroyed: a destroy with bytes still unread
    // resets the connection, and the broker would drop PUBACKs and the DISCONNECT it had not read yet.
    client.on('close', () => upstream.end());
    upstream.on('close', () => client.end());
    const fail = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', fail);
    upstream.on('error', fail);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    /**
     * Resolves once the broker has closed every relayed connection: it has read each one to its end (the
     * PUBACKs and the DISCONNECT the client wrote last). Until then a new connection under the same client
     * id would take the session over first, and the broker would hand it what those PUBACKs acknowledge.
     */
    brokerClosed: () => Promise.all(upstreamClosed).then(() => undefined),
    close() {
      // Ended, so what the client wrote last still reaches the broker; destroyed later if a peer lingers.
      for (const s of sockets) {
        s.end();
        setTimeout(() => s.destroy(), 2000).unref();
      }
      server.close();
    },
  };
}
