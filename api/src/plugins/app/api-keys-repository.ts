/** Personal API keys (docs/api.md §Account). Keys arrive here already hashed; the plain key is never stored. */
import type { Sql } from '../../db/sql.ts';

export interface ApiKeyRecord {
  id: number;
  userId: number;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

interface ApiKeyRow {
  id: number;
  user_id: number;
  name: string;
  created_at: string | number;
  last_used_at: string | number | null;
}

function toRecord(r: ApiKeyRow): ApiKeyRecord {
  return {
    id: Number(r.id),
    userId: Number(r.user_id),
    name: r.name,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  };
}

/** `last_used_at` is written at most this often per key, so a busy Grafana does not write on every call. */
const LAST_USED_RESOLUTION_MS = 60_000;

export function createApiKeysRepository(sql: Sql, now: () => number) {
  return {
    async list(userId: number): Promise<ApiKeyRecord[]> {
      const { rows } = await sql.query<ApiKeyRow>(
        'select id, user_id, name, created_at, last_used_at from api_keys where user_id = $1 order by id',
        [userId],
      );
      return rows.map(toRecord);
    },

    /** A new key, or null when the account already holds `max` keys. */
    async create(userId: number, name: string, keyHash: string, max: number): Promise<ApiKeyRecord | null> {
      return sql.transaction(async (tx) => {
        // One account's creations queue on its user row, so two at once cannot both pass the count.
        await tx.query('select id from users where id = $1 for update', [userId]);
        const { rows: count } = await tx.query<{ n: string | number }>(
          'select count(*) as n from api_keys where user_id = $1',
          [userId],
        );
        if (Number(count[0]?.n ?? 0) >= max) return null;
        const { rows } = await tx.query<ApiKeyRow>(
          `insert into api_keys (user_id, name, key_hash, created_at) values ($1, $2, $3, $4)
           returning id, user_id, name, created_at, last_used_at`,
          [userId, name, keyHash, now()],
        );
        return toRecord(rows[0]!);
      });
    },

    /** Deletes the user's key; false when there is no such key of theirs. */
    async revoke(userId: number, id: number): Promise<boolean> {
      const { rows } = await sql.query<{ id: number }>(
        'delete from api_keys where id = $1 and user_id = $2 returning id',
        [id, userId],
      );
      return rows.length > 0;
    },

    /** The key's owner, noting the use; null for an unknown (or revoked) key. */
    async authenticate(keyHash: string): Promise<{ keyId: number; userId: number } | null> {
      const { rows } = await sql.query<ApiKeyRow>(
        'select id, user_id, name, created_at, last_used_at from api_keys where key_hash = $1',
        [keyHash],
      );
      const row = rows[0];
      if (!row) return null;
      const key = toRecord(row);
      const t = now();
      if (key.lastUsedAt === null || t - key.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
        await sql.query('update api_keys set last_used_at = $2 where id = $1', [key.id, t]);
      }
      return { keyId: key.id, userId: key.userId };
    },
  };
}
