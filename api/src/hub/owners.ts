/** Device key → (device id, owner) with a short cache: live messages arrive many times a second per device. */
import type { Sql } from '../db/sql.ts';

export interface Owner {
  deviceId: number;
  userId: number;
}

export function createOwnerLookup(sql: Sql, now: () => number, ttlMs = 30_000) {
  const cache = new Map<string, { owner: Owner | null; at: number }>();
  return {
    async byKey(deviceKey: string): Promise<Owner | null> {
      const hit = cache.get(deviceKey);
      if (hit && now() - hit.at < ttlMs) return hit.owner;
      const { rows } = await sql.query<{ id: number; user_id: number }>(
        'select id, user_id from devices where device_key = $1',
        [deviceKey],
      );
      const r = rows[0];
      const owner = r ? { deviceId: Number(r.id), userId: Number(r.user_id) } : null;
      if (cache.size > 100_000) cache.clear();
      cache.set(deviceKey, { owner, at: now() });
      return owner;
    },
    forget(deviceKey?: string) {
      if (deviceKey) cache.delete(deviceKey);
      else cache.clear();
    },
  };
}
