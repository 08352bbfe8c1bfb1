/**
 * Device key → (device id, owner) of every device row reading that meter, with a short cache: live messages
 * arrive many times a second per device. A meter has one owner, except a demo simulated meter, which every
 * demo workspace shares (docs/architecture.md §The demo).
 */
import type { Sql } from '../db/sql.ts';

export interface Owner {
  deviceId: number;
  userId: number;
}

export function createOwnerLookup(sql: Sql, now: () => number, ttlMs = 30_000) {
  const cache = new Map<string, { owners: Map<number, number>; at: number }>();
  return {
    /** user id → that user's device id for the meter (empty when nobody has claimed it). */
    async byKey(deviceKey: string): Promise<ReadonlyMap<number, number>> {
      const hit = cache.get(deviceKey);
      if (hit && now() - hit.at < ttlMs) return hit.owners;
      const { rows } = await sql.query<{ id: number; user_id: number }>(
        'select id, user_id from devices where device_key = $1',
        [deviceKey],
      );
      const owners = new Map(rows.map((r) => [Number(r.user_id), Number(r.id)]));
      if (cache.size > 100_000) cache.clear();
      cache.set(deviceKey, { owners, at: now() });
      return owners;
    },
    forget(deviceKey?: string) {
      if (deviceKey) cache.delete(deviceKey);
      else cache.clear();
    },
  };
}
