/**
 * The broker side of meters' MQTT accounts, as the API sees it. The API issues, rotates and revokes
 * credentials (stored hashed in the metadata database); a `MeterAccess` tells the broker: the embedded
 * broker reads the database itself and only needs meters using old credentials disconnected; Mosquitto
 * gets each account through its dynamic security plugin. It also reports what the broker and ingest
 * saw of a meter's connection (GET /api/devices/:id/connection).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface MeterConnectionState {
  /** Unknown to a broker that does not report connections (then a recent reading stands for one). */
  connected?: boolean;
  lastConnectedAt?: number | null;
  /** Whether the broker has the meter's account (a broker the API keeps in step, such as Mosquitto). */
  account?: { state: 'ok' | 'pending' | 'rotate' | 'unknown'; detail?: string };
  lastRejection?: {
    reason: 'bad-password' | 'topic-not-allowed' | 'payload-rejected';
    topic?: string;
    at: number;
    detail?: string;
  };
}

export interface MeterAccess {
  /**
   * A device has new credentials (claimed, or rotated): the broker accepts them from now on and
   * disconnects a meter still connected with older ones. `stockTopics`: whether the device holds its stock
   * Tasmota names (`tasmota_<suffix>`, `DVES_<suffix>`); without it, only topics named by its key.
   */
  issued(
    deviceKey: string,
    credentials: { username: string; password: string; stockTopics?: boolean },
  ): Promise<void>;
  /** A device is deleted: its account stops working and its meter is disconnected. */
  revoked(deviceKey: string, username: string | null): Promise<void>;
  /** What the broker and ingest know of the device's connection, if anything. */
  connection(deviceKey: string): Promise<MeterConnectionState | undefined>;
}

/** No broker to tell (an API process beside an external broker the API does not manage). */
export const NO_METER_ACCESS: MeterAccess = {
  async issued() {},
  async revoked() {},
  async connection() {
    return undefined;
  },
};

/** The later of two rejections. */
export function latestRejection(
  a: MeterConnectionState['lastRejection'],
  b: MeterConnectionState['lastRejection'],
): MeterConnectionState['lastRejection'] {
  if (!a) return b;
  if (!b) return a;
  return b.at > a.at ? b : a;
}

declare module 'fastify' {
  interface FastifyInstance {
    meterAccess: MeterAccess;
  }
}

export default fp(
  async (app: FastifyInstance, opts: { meterAccess?: MeterAccess }) => {
    app.decorate('meterAccess', opts.meterAccess ?? NO_METER_ACCESS);
  },
  { name: 'meter-access' },
);

/** What the embedded deployment's broker and ingest offer the API (`@kilowatch/ingest`'s runtime types). */
export interface EmbeddedMeterParts {
  broker?: {
    disconnectDevice(deviceKey: string): void;
    connection(deviceKey: string):
      | (Omit<MeterConnectionState, 'lastRejection'> & {
          lastRejection?: { reason: 'bad-password' | 'topic-not-allowed'; topic?: string; at: number };
        })
      | undefined;
  };
  runtime?: {
    lastRejection(
      deviceKey: string,
    ): { topic: string; reason: string; detail: string; at: number } | undefined;
  };
}

/**
 * The embedded broker's `MeterAccess`: it reads accounts from the database on each connection, so a new
 * password needs no sync, only the meters still connected with the old one disconnected. `parts` is
 * filled in once the broker and ingest are up.
 */
export function embeddedMeterAccess(parts: EmbeddedMeterParts): MeterAccess {
  return {
    async issued(deviceKey) {
      parts.broker?.disconnectDevice(deviceKey);
    },
    async revoked(deviceKey) {
      parts.broker?.disconnectDevice(deviceKey);
    },
    async connection(deviceKey) {
      const seen = parts.broker?.connection(deviceKey);
      const refused = parts.runtime?.lastRejection(deviceKey);
      const payload = refused
        ? {
            reason: 'payload-rejected' as const,
            topic: refused.topic,
            at: refused.at,
            detail: `${refused.reason}: ${refused.detail}`.slice(0, 300),
          }
        : undefined;
      if (!seen)
        return payload ? { connected: false, lastConnectedAt: null, lastRejection: payload } : undefined;
      const lastRejection = latestRejection(seen.lastRejection, payload);
      return {
        connected: seen.connected,
        lastConnectedAt: seen.lastConnectedAt,
        ...(lastRejection ? { lastRejection } : {}),
      };
    },
  };
}
