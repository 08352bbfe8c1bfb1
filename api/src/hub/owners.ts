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
  /** One query per meter at a time: a meter's readings arriving while its entry is refreshed share it. */
  const inflight = new Map<string, Promise<Map<number, number>>>();
  const load = (deviceKey: string) =>
    sql
      .query<{ id: number; user_id: number }>('select id, user_id from devices where device_key = $1', [
        deviceKey,
      ])
      .then(({ rows }) => {
        const owners = new Map(rows.map((r) => [Number(r.user_id), Number(r.id)]));
        if (cache.size > 100_000) cache.clear();
        cache.set(deviceKey, { owners, at: now() });
        return owners;
      })
      .finally(() => inflight.delete(deviceKey));
  return {
    /**
     * user id → that user's device id for the meter (empty when nobody has claimed it). While the
     * metadata database is away (a restart), a meter already known keeps its last answer, so live
     * readings still reach its dashboards.
     */
    async byKey(deviceKey: string): Promise<ReadonlyMap<number, number>> {
      const hit = cache.get(deviceKey);
      if (hit && now() - hit.at < ttlMs) return hit.owners;
      let pending = inflight.get(deviceKey);
      if (!pending) {
        pending = load(deviceKey);
        inflight.set(deviceKey, pending);
      }
      try {
        return await pending;
      } catch (e) {
        if (hit) return hit.owners;
        throw e;
      }
    },
    forget(deviceKey?: string) {
      if (deviceKey) cache.delete(deviceKey);
      else cache.clear();
    },
  };
}
