/** Saved comparisons of a user: a name and the (device, parameter) members to chart together. */
import type { Comparison, ComparisonRequest } from '@kilowatch/core';
import type { Sql } from '../db/sql.ts';

interface Row {
  id: number;
  name: string;
  grouped: boolean;
}

export function createComparisonsRepository(sql: Sql, now: () => number) {
  async function members(ids: number[]): Promise<Map<number, Comparison['members']>> {
    const out = new Map<number, Comparison['members']>();
    if (ids.length === 0) return out;
    const { rows } = await sql.query<{ comparison_id: number; device_id: number; param: string }>(
      'select comparison_id, device_id, param from comparison_members where comparison_id = any($1::integer[]) order by comparison_id, position',
      [ids],
    );
    for (const r of rows) {
      const list = out.get(Number(r.comparison_id)) ?? [];
      list.push({ deviceId: Number(r.device_id), param: r.param });
      out.set(Number(r.comparison_id), list);
    }
    return out;
  }

  async function writeMembers(tx: Pick<Sql, 'query'>, id: number, list: ComparisonRequest['members']) {
    await tx.query('delete from comparison_members where comparison_id = $1', [id]);
    for (const [position, m] of list.entries()) {
      await tx.query(
        'insert into comparison_members (comparison_id, position, device_id, param) values ($1, $2, $3, $4)',
        [id, position, m.deviceId, m.param],
      );
    }
  }

  return {
    async list(userId: number): Promise<Comparison[]> {
      const { rows } = await sql.query<Row>(
        'select id, name, grouped from comparisons where user_id = $1 order by id',
        [userId],
      );
      const m = await members(rows.map((r) => Number(r.id)));
      return rows.map((r) => ({
        id: Number(r.id),
        name: r.name,
        grouped: r.grouped,
        members: m.get(Number(r.id)) ?? [],
      }));
    },

    async get(userId: number, id: number): Promise<Comparison | null> {
      const { rows } = await sql.query<Row>(
        'select id, name, grouped from comparisons where user_id = $1 and id = $2',
        [userId, id],
      );
      const r = rows[0];
      if (!r) return null;
      const m = await members([Number(r.id)]);
      return { id: Number(r.id), name: r.name, grouped: r.grouped, members: m.get(Number(r.id)) ?? [] };
    },

    async create(userId: number, c: ComparisonRequest): Promise<number> {
      return sql.transaction(async (tx) => {
        const t = now();
        const { rows } = await tx.query<{ id: number }>(
          'insert into comparisons (user_id, name, grouped, created_at, updated_at) values ($1, $2, $3, $4, $4) returning id',
          [userId, c.name, c.grouped, t],
        );
        const id = Number(rows[0]!.id);
        await writeMembers(tx, id, c.members);
        return id;
      });
    },

    async update(userId: number, id: number, c: ComparisonRequest): Promise<boolean> {
      return sql.transaction(async (tx) => {
        const r = await tx.query(
          'update comparisons set name = $3, grouped = $4, updated_at = $5 where user_id = $1 and id = $2',
          [userId, id, c.name, c.grouped, now()],
        );
        if (r.rowCount === 0) return false;
        await writeMembers(tx, id, c.members);
        return true;
      });
    },

    async remove(userId: number, id: number): Promise<boolean> {
      const r = await sql.query('delete from comparisons where user_id = $1 and id = $2', [userId, id]);
      return r.rowCount > 0;
    },
  };
}

export type ComparisonsRepository = ReturnType<typeof createComparisonsRepository>;
