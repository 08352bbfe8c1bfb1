/**
 * What ingest knows of each device: its status (online, offline, signal) from status messages and
 * committed readings, and its last refused message. Status changes go out on the live bus.
 */
import type { Reading } from '@kilowatch/core';
import type { StatusUpdate } from '../decoders/index.ts';
import type { DeviceState } from '../liveBus.ts';

export interface Rejection {
  topic: string;
  reason: string;
  detail: string;
  at: number;
}

/** Devices whose last refusal is kept, at most (the oldest device is forgotten first). */
const MAX_REJECTIONS = 10_000;

export class DeviceStates {
  private readonly states = new Map<string, DeviceState>();
  private readonly rejections = new Map<string, Rejection>();

  constructor(
    private readonly emitStatus: (s: DeviceState) => void,
    private readonly now: () => number,
  ) {}

  get(deviceKey: string): DeviceState | undefined {
    const s = this.states.get(deviceKey);
    return s ? { ...s } : undefined;
  }

  all(): DeviceState[] {
    return [...this.states.values()].map((s) => ({ ...s }));
  }

  /** A status message (or a will) of a device. */
  applyStatus(deviceKey: string, update: StatusUpdate): void {
    const prev = this.states.get(deviceKey);
    const next: DeviceState = {
      deviceKey,
      status: update.status,
      lastSeen: update.online ? this.now() : (prev?.lastSeen ?? null),
    };
    const rssi = update.rssi ?? (update.online ? prev?.rssi : undefined);
    if (rssi !== undefined) next.rssi = rssi;
    this.set(deviceKey, next);
  }

  /** A committed reading: its device is online and seen at the reading's time. */
  touch(r: Pick<Reading, 'deviceKey' | 'ts'>): void {
    const prev = this.states.get(r.deviceKey);
    if (prev && prev.status !== 'offline') {
      if ((prev.lastSeen ?? 0) < r.ts) prev.lastSeen = r.ts;
      return;
    }
    const next: DeviceState = {
      deviceKey: r.deviceKey,
      status: 'online',
      lastSeen: Math.max(r.ts, prev?.lastSeen ?? 0),
    };
    if (prev?.rssi !== undefined) next.rssi = prev.rssi;
    this.set(r.deviceKey, next);
  }

  /** A state taken as it is (another process judged it), announced whether or not it changed. */
  replace(next: DeviceState): void {
    this.states.set(next.deviceKey, next);
    this.emitStatus({ ...next });
  }

  reject(deviceKey: string, rejection: Rejection): void {
    this.rejections.delete(deviceKey);
    this.rejections.set(deviceKey, rejection);
    if (this.rejections.size > MAX_REJECTIONS)
      this.rejections.delete(this.rejections.keys().next().value as string);
  }

  lastRejection(deviceKey: string): Rejection | undefined {
    const r = this.rejections.get(deviceKey);
    return r ? { ...r } : undefined;
  }

  private set(deviceKey: string, next: DeviceState): void {
    const prev = this.states.get(deviceKey);
    this.states.set(deviceKey, next);
    if (!prev || prev.status !== next.status || prev.rssi !== next.rssi) this.emitStatus({ ...next });
  }
}
