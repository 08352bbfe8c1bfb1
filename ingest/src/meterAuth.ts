/**
 * Meter accounts kept in memory: the standalone ingest's simulated meters and the tests. The API keeps
 * real devices' accounts in the metadata database (hashed) and answers the broker from there.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { BrokerAuth, MeterVerdict } from './broker.ts';

export interface MemoryMeterAuth extends BrokerAuth {
  /** A new random password for a device (its username is its key); an older one stops working. */
  issue(deviceKey: string): { username: string; password: string };
  revoke(deviceKey: string): void;
}

/** 24 random bytes, base64url: 192 bits, nothing to guess. */
export function newMeterPassword(): string {
  return randomBytes(24).toString('base64url');
}

export function createMemoryMeterAuth(): MemoryMeterAuth {
  const accounts = new Map<string, string>();
  return {
    issue(deviceKey) {
      const password = newMeterPassword();
      accounts.set(deviceKey, password);
      return { username: deviceKey, password };
    },
    revoke(deviceKey) {
      accounts.delete(deviceKey);
    },
    async verifyMeter(username, password): Promise<MeterVerdict> {
      const stored = accounts.get(username);
      if (stored === undefined) return null;
      const a = Buffer.from(stored);
      const b = Buffer.from(password);
      return { deviceKey: username, ok: a.length === b.length && timingSafeEqual(a, b) };
    },
  };
}
