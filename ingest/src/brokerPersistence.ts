/**
 * aedes's in-memory persistence keeps each client's unacknowledged outgoing messages in an array and
 * scans it on every send and every PUBACK. Ingest acknowledges after commit, so thousands are in flight
 * at once and the scans grow quadratic. This subclass keeps the same queue indexed by broker counter
 * and by packet id; everything else is aedes-persistence's own.
 */
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';

const require = createRequire(import.meta.url);
const memoryPersistence = require('aedes-persistence') as ((opts?: object) => object) & {
  Packet: new (p: object) => OutgoingPacket;
};
const { CallBackPersistence } = require('aedes-persistence/callBackPersistence.js') as {
  CallBackPersistence: new (factory: (opts: object) => object, opts?: object) => object;
};
const MemoryPersistence = require('aedes-persistence/asyncPersistence.js') as new (opts?: object) => object;

interface OutgoingPacket {
  brokerId: string;
  brokerCounter: number;
  messageId?: number;
}

interface Queue {
  /** In enqueue order, by `brokerId:brokerCounter`. */
  order: Map<string, OutgoingPacket>;
  byMessageId: Map<number, string>;
}

const keyOf = (p: OutgoingPacket) => `${p.brokerId}:${p.brokerCounter}`;

class IndexedOutgoingPersistence extends MemoryPersistence {
  private readonly queues = new Map<string, Queue>();

  private queue(clientId: string): Queue {
    let q = this.queues.get(clientId);
    if (!q) {
      q = { order: new Map(), byMessageId: new Map() };
      this.queues.set(clientId, q);
    }
    return q;
  }

  /** Messages queued per client at most; past it the oldest are dropped (counted in `dropped`). */
  maxQueued = Number.POSITIVE_INFINITY;
  dropped = 0;

  private enqueue(clientId: string, packet: object): void {
    const p = new memoryPersistence.Packet(packet);
    const q = this.queue(clientId);
    q.order.set(keyOf(p), p);
    while (q.order.size > this.maxQueued) {
      const [key, oldest] = q.order.entries().next().value as [string, OutgoingPacket];
      q.order.delete(key);
      if (oldest.messageId !== undefined && q.byMessageId.get(oldest.messageId) === key)
        q.byMessageId.delete(oldest.messageId);
      this.dropped++;
    }
  }

  /** Drops a client's queue (its session expired). */
  forgetQueue(clientId: string): void {
    this.queues.delete(clientId);
  }

  /** Clients with a queue, and the messages in them. */
  queueStats(): { clients: number; queued: number } {
    let queued = 0;
    for (const q of this.queues.values()) queued += q.order.size;
    return { clients: this.queues.size, queued };
  }

  async outgoingEnqueue(sub: { clientId: string }, packet: object): Promise<void> {
    this.enqueue(sub.clientId, packet);
  }

  async outgoingEnqueueCombi(subs: { clientId: string }[], packet: object): Promise<void> {
    for (const sub of subs) this.enqueue(sub.clientId, packet);
  }

  async outgoingUpdate(client: { id: string }, packet: OutgoingPacket): Promise<void> {
    const q = this.queue(client.id);
    const key = keyOf(packet);
    const same = q.order.get(key);
    if (same) {
      if (same.messageId !== undefined && q.byMessageId.get(same.messageId) === key)
        q.byMessageId.delete(same.messageId);
      same.messageId = packet.messageId;
      if (packet.messageId !== undefined) q.byMessageId.set(packet.messageId, key);
      return;
    }
    // A packet from another broker reusing a packet id replaces the one that had it.
    const other = packet.messageId === undefined ? undefined : q.byMessageId.get(packet.messageId);
    if (other !== undefined) {
      q.order.set(other, packet);
      return;
    }
    throw new Error('no such packet');
  }

  async outgoingClearMessageId(
    client: { id: string },
    packet: { messageId?: number },
  ): Promise<OutgoingPacket | undefined> {
    const q = this.queues.get(client.id);
    if (!q || packet.messageId === undefined) return undefined;
    const key = q.byMessageId.get(packet.messageId);
    if (key === undefined) return undefined;
    const found = q.order.get(key);
    q.order.delete(key);
    q.byMessageId.delete(packet.messageId);
    return found;
  }

  outgoingStream(client: { id: string }): Readable {
    return Readable.from([...(this.queues.get(client.id)?.order.values() ?? [])]);
  }
}

/** aedes persistence with what the embedded broker adds: bounded queues and expiring sessions. */
export interface BrokerPersistence {
  /** A client connected: its session is live. */
  connected(clientId: string): void;
  /** A client went away at `at`: its session expires unless it comes back. */
  disconnected(clientId: string, at: number): void;
  /** Sessions whose client has been away `expiryMs` or longer. */
  expired(now: number, expiryMs: number): string[];
  /** Forgets a session: its subscriptions and queued messages. */
  forget(clientId: string): Promise<void>;
  stats(): { clients: number; queued: number; dropped: number };
}

/** aedes persistence: in memory, with an indexed outgoing queue bounded per client. */
export function createBrokerPersistence(opts: { maxQueuedPerClient?: number } = {}): BrokerPersistence {
  let inner: IndexedOutgoingPersistence | undefined;
  const away = new Map<string, number>();
  const persistence = new CallBackPersistence((o) => {
    inner = new IndexedOutgoingPersistence(o);
    if (opts.maxQueuedPerClient !== undefined) inner.maxQueued = opts.maxQueuedPerClient;
    return inner;
  }) as object & BrokerPersistence & { cleanSubscriptions(c: { id: string }): Promise<unknown> };
  persistence.connected = (id) => void away.delete(id);
  persistence.disconnected = (id, at) => void away.set(id, at);
  persistence.expired = (now, expiryMs) =>
    [...away].filter(([, at]) => now - at >= expiryMs).map(([id]) => id);
  persistence.forget = async (id) => {
    away.delete(id);
    inner?.forgetQueue(id);
    await persistence.cleanSubscriptions({ id });
  };
  persistence.stats = () => ({
    ...(inner?.queueStats() ?? { clients: 0, queued: 0 }),
    dropped: inner?.dropped ?? 0,
  });
  return persistence;
}
