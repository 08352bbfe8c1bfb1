/**
 * Meter accounts kept in memory: the standalone ingest's simulated meters and the tests. The API keeps
 * real devices' accounts in the metadata database (hashed) and answers the broker from there.
 */
import { timingSafeEqual } from 'node:crypto';
import { type BrokerAuth, type MeterVerdict, newMeterPassword, stockSuffixOf } from '@kilowatch/core';

export interface MemoryMeterAuth extends BrokerAuth {
  /**
   * A new random password for a device (its username is its key); an older one stops working. With
   * `stockTopics` (the default) the device holds its stock Tasmota suffix; throws `StockSuffixTaken` when
   * another device holds it.
   */
  issue(deviceKey: string, opts?: { stockTopics?: boolean }): { username: string; password: string };
  revoke(deviceKey: string): void;
}

/** A device's stock Tasmota suffix is held by another device (the claim answers 409). */
export class StockSuffixTaken extends Error {
  constructor(
    readonly suffix: string,
    readonly holder: string,
  ) {
    super(
      `another device holds the stock Tasmota suffix ${suffix}: set this meter's Topic to its device key`,
    );
  }
}

export function createMemoryMeterAuth(): MemoryMeterAuth {
  const accounts = new Map<string, { password: string; stockTopics: boolean }>();
  /** Stock suffix → the device that holds it. */
  const suffixes = new Map<string, string>();
  return {
    issue(deviceKey, opts) {
      const held = accounts.get(deviceKey);
      const stockTopics = held?.stockTopics ?? opts?.stockTopics ?? true;
      const suffix = stockSuffixOf(deviceKey);
      if (stockTopics) {
        const holder = suffixes.get(suffix);
        if (holder !== undefined && holder !== deviceKey) throw new StockSuffixTaken(suffix, holder);
        suffixes.set(suffix, deviceKey);
      }
      const password = newMeterPassword();
      accounts.set(deviceKey, { password, stockTopics });
      return { username: deviceKey, password };
    },
    revoke(deviceKey) {
      accounts.delete(deviceKey);
      const suffix = stockSuffixOf(deviceKey);
      if (suffixes.get(suffix) === deviceKey) suffixes.delete(suffix);
    },
    async verifyMeter(username, password): Promise<MeterVerdict> {
      const stored = accounts.get(username);
      if (stored === undefined) return null;
      const a = Buffer.from(stored.password);
      const b = Buffer.from(password);
      return {
        deviceKey: username,
        ok: a.length === b.length && timingSafeEqual(a, b),
        stockTopics: stored.stockTopics,
      };
    },
  };
}
