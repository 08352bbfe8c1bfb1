/**
 * The telemetry side as the API sees it: the TelemetryStore handed to `buildApp`, and — when ingest runs
 * in this process — its live device states. Without ingest, status comes from the newest stored reading.
 */
import type { DeviceStatus } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** What the API needs of an ingest runtime (the embedded deployment passes the real one). */
export interface DeviceStateSource {
  deviceState(
    deviceKey: string,
  ): { deviceKey: string; status: DeviceStatus; lastSeen: number | null; rssi?: number } | undefined;
}

export interface LiveStatus {
  status: DeviceStatus;
  lastSeen: number | null;
  rssi: number | null;
}

/** A device whose newest stored reading is older than this is offline. */
export const OFFLINE_AFTER_MS = 10 * 60_000;

declare module 'fastify' {
  interface FastifyInstance {
    store: TelemetryStore;
    deviceStatus(deviceKey: string): Promise<LiveStatus>;
  }
}

export default fp(
  async (app: FastifyInstance, opts: { store: TelemetryStore; states?: DeviceStateSource }) => {
    app.decorate('store', opts.store);
    app.decorate('deviceStatus', async (deviceKey: string): Promise<LiveStatus> => {
      const live = opts.states?.deviceState(deviceKey);
      if (live) return { status: live.status, lastSeen: live.lastSeen, rssi: live.rssi ?? null };
      const latest = await opts.store.latest(deviceKey);
      if (!latest) return { status: 'offline', lastSeen: null, rssi: null };
      const online = app.clock.now() - latest.ts <= OFFLINE_AFTER_MS;
      return { status: online ? 'online' : 'offline', lastSeen: latest.ts, rssi: null };
    });
  },
  { name: 'telemetry', dependencies: ['config'] },
);
