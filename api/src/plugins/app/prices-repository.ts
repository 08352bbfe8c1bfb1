/** A location's price series (docs/api.md §Price series); the caller has checked the location is the user's. */
import type { PriceRow } from '@kilowatch/core';
import type { Sql } from '../../db/sql.ts';

/** Rows written in one statement. */
const BATCH = 1_000;

export function createPricesRepository(sql: Sql) {
  return {
    /** Stores the rows, replacing prices of the same starts; returns how many the location holds after. */
    async put(locationId: number, rows: readonly PriceRow[]): Promise<number> {
      return sql.transaction(async (tx) => {
        for (let i = 0; i < rows.length; i += BATCH) {
          const batch = rows.slice(i, i + BATCH);
          const values = batch.map((_, k) => `($1, $${2 * k + 2}, $${2 * k + 3})`).join(', ');
          await tx.query(
            `insert into location_prices (location_id, start, price) values ${values}
             on conflict (location_id, start) do update set price = excluded.price`,
            [locationId, ...batch.flatMap((r) => [r.start, r.price])],
          );
        }
        const { rows: count } = await tx.query<{ n: number }>(
          'select count(*) as n from location_prices where location_id = $1',
          [locationId],
        );
        return Number(count[0]!.n);
      });
    },

    /** How many prices the location holds. */
    async count(locationId: number): Promise<number> {
      const { rows } = await sql.query<{ n: number }>(
        'select count(*) as n from location_prices where location_id = $1',
        [locationId],
      );
      return Number(rows[0]!.n);
    },

    /** Prices with starts in [from, to), by start. */
    async list(locationId: number, from: number, to: number): Promise<PriceRow[]> {
      const { rows } = await sql.query<{ start: number; price: number }>(
        'select start, price from location_prices where location_id = $1 and start >= $2 and start < $3 order by start',
        [locationId, from, to],
      );
      return rows.map((r) => ({ start: Number(r.start), price: Number(r.price) }));
    },

    /** Deletes prices with starts in [from, to); returns how many. */
    async remove(locationId: number, from: number, to: number): Promise<number> {
      const r = await sql.query(
        'delete from location_prices where location_id = $1 and start >= $2 and start < $3',
        [locationId, from, to],
      );
      return r.rowCount;
    },
  };
}
