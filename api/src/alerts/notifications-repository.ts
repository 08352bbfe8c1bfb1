/** Alert history of a user (docs/api.md §Exports and notifications), newest first, paged by id. */
import type { Notification } from '@kilowatch/core';
import type { Queryable, Sql } from '../db/sql.ts';

interface Row {
  id: number;
  device_id: number;
  kind: string;
  message: string;
  at: number;
  read: boolean;
  phase: number | null;
  value: number | null;
  threshold: number | null;
}

/** What a notification measured: the phase (voltage kinds), the value and the limit it crossed. */
export interface NotificationDetail {
  phase?: number | undefined;
  value?: number | undefined;
  threshold?: number | undefined;
}

const num = (x: unknown): number | null => (x === null || x === undefined ? null : Number(x));

const toNotification = (r: Row): Notification => ({
  id: Number(r.id),
  deviceId: Number(r.device_id),
  kind: r.kind,
  message: r.message,
  at: Number(r.at),
  read: r.read,
  phase: num(r.phase),
  value: num(r.value),
  threshold: num(r.threshold),
});

export function createNotificationsRepository(sql: Sql) {
  return {
    /** Stores one notification; `tx` puts it in a transaction of the caller's. */
    async add(
      userId: number,
      deviceId: number,
      kind: string,
      message: string,
      at: number,
      tx: Queryable = sql,
      detail: NotificationDetail = {},
    ): Promise<number> {
      const { rows } = await tx.query<{ id: number }>(
        `insert into notifications (user_id, device_id, kind, message, at, phase, value, threshold)
         values ($1, $2, $3, $4, $5, $6, $7, $8) returning id`,
        [
          userId,
          deviceId,
          kind,
          message,
          at,
          detail.phase ?? null,
          detail.value ?? null,
          detail.threshold ?? null,
        ],
      );
      return Number(rows[0]!.id);
    },

    /** A page of the newest notifications below `cursor` (an id). */
    async page(userId: number, cursor: number | undefined, limit: number) {
      const { rows } = await sql.query<Row>(
        `select id, device_id, kind, message, at, read, phase, value, threshold from notifications
         where user_id = $1 and ($2::integer is null or id < $2) order by id desc limit $3`,
        [userId, cursor ?? null, limit + 1],
      );
      const items = rows.slice(0, limit).map(toNotification);
      const last = items[items.length - 1];
      return { items, nextCursor: rows.length > limit && last ? String(last.id) : null };
    },

    /** Marks every unread notification of the user read; returns how many were. */
    async markAllRead(userId: number): Promise<number> {
      const r = await sql.query('update notifications set read = true where user_id = $1 and not read', [
        userId,
      ]);
      return r.rowCount;
    },

    async markRead(userId: number, id: number): Promise<boolean> {
      const r = await sql.query('update notifications set read = true where user_id = $1 and id = $2', [
        userId,
        id,
      ]);
      return r.rowCount > 0;
    },
  };
}
