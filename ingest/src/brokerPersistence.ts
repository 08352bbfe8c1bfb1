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

  private enqueue(clientId: string, packet: object): void {
    const p = new memoryPersistence.Packet(packet);
    this.queue(clientId).order.set(keyOf(p), p);
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

/** aedes persistence: in memory, with an indexed outgoing queue. */
export function createBrokerPersistence(): object {
  return new CallBackPersistence((opts) => new IndexedOutgoingPersistence(opts));
}
