/**
 * Where committed live readings come from. Embedded: the in-process ingest bus (`bus.onReading`). Server
 * deployments: a subscriber to `kilowatch/live/+` on the external broker (see `mqtt-live-source.ts`).
 */
import type { DeviceStatus, Reading } from '@kilowatch/core';

export interface LiveStatus {
  deviceKey: string;
  status: DeviceStatus;
  lastSeen: number | null;
  rssi?: number;
}

export interface LiveSource {
  onReading(fn: (reading: Reading) => void): () => void;
  onStatus?(fn: (status: LiveStatus) => void): () => void;
}

/** A source fed by hand: tests and benchmarks publish through it. */
export function createLocalLiveSource() {
  const readings = new Set<(r: Reading) => void>();
  const statuses = new Set<(s: LiveStatus) => void>();
  return {
    onReading(fn: (r: Reading) => void) {
      readings.add(fn);
      return () => void readings.delete(fn);
    },
    onStatus(fn: (s: LiveStatus) => void) {
      statuses.add(fn);
      return () => void statuses.delete(fn);
    },
    publish(r: Reading) {
      for (const fn of readings) fn(r);
    },
    publishStatus(s: LiveStatus) {
      for (const fn of statuses) fn(s);
    },
  };
}
export type LocalLiveSource = ReturnType<typeof createLocalLiveSource>;
