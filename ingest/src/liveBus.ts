import type { DeviceStatus, Reading } from '@kilowatch/core';

export interface DeviceState {
  deviceKey: string;
  status: DeviceStatus;
  lastSeen: number | null;
  rssi?: number;
}

/** In-process fan-out of committed readings and device status changes. */
export interface LiveBus {
  onReading(fn: (r: Reading) => void): () => void;
  onStatus(fn: (s: DeviceState) => void): () => void;
}

export class LocalLiveBus implements LiveBus {
  private readonly readingFns = new Set<(r: Reading) => void>();
  private readonly statusFns = new Set<(s: DeviceState) => void>();

  constructor(private readonly onListenerError: (e: unknown) => void = () => {}) {}

  onReading(fn: (r: Reading) => void): () => void {
    this.readingFns.add(fn);
    return () => this.readingFns.delete(fn);
  }
  onStatus(fn: (s: DeviceState) => void): () => void {
    this.statusFns.add(fn);
    return () => this.statusFns.delete(fn);
  }
  get hasReadingListeners(): boolean {
    return this.readingFns.size > 0;
  }
  emitReading(r: Reading): void {
    for (const fn of this.readingFns) {
      try {
        fn(r);
      } catch (e) {
        this.onListenerError(e);
      }
    }
  }
  emitStatus(s: DeviceState): void {
    for (const fn of this.statusFns) {
      try {
        fn(s);
      } catch (e) {
        this.onListenerError(e);
      }
    }
  }
}
