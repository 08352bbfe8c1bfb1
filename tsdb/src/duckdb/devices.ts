/**
 * The device registry: the small integer each device key is stored under (`device_keys`). Ids are
 * assigned in one place (`assign`) for the write path and the bulk loader alike, and become known only
 * once the statement that records them (`insertSql`) has committed (`adopt`).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { type Db, readRows } from './db.ts';

/** A key and the id it is given, not yet committed. */
export type NewDevice = readonly [key: string, id: number];

export class DeviceRegistry {
  private readonly ids = new Map<string, number>();
  /** The largest id given out (ids are never reused while the store is open). */
  private maxId = 0;

  /** The ids the file holds. */
  async load(conn: DuckDBConnection): Promise<void> {
    for (const [id, key] of await readRows(conn, 'SELECT id, key FROM device_keys')) {
      this.ids.set(key as string, id as number);
      if ((id as number) > this.maxId) this.maxId = id as number;
    }
  }

  /** The id of a known device key. */
  idOf(key: string): number | undefined {
    return this.ids.get(key);
  }

  /** Ids for `keys`: known ones, and new ones (listed in `fresh`) after the largest known. */
  assign(keys: readonly string[]): { ids: number[]; fresh: NewDevice[] } {
    const fresh: NewDevice[] = [];
    let nextId = this.maxId + 1;
    const ids = keys.map((key) => {
      let id = this.ids.get(key);
      if (id === undefined) {
        id = nextId++;
        fresh.push([key, id]);
      }
      return id;
    });
    return { ids, fresh };
  }

  /** The statement recording new devices (empty when there are none). */
  static insertSql(fresh: readonly NewDevice[]): string {
    if (fresh.length === 0) return '';
    return `INSERT INTO device_keys VALUES ${fresh.map(([key, id]) => `(${id}, '${key.replaceAll("'", "''")}')`).join(', ')}`;
  }

  /** New devices whose `insertSql` has committed. */
  adopt(fresh: readonly NewDevice[]): void {
    for (const [key, id] of fresh) {
      this.ids.set(key, id);
      if (id > this.maxId) this.maxId = id;
    }
  }

  /** Ids for `keys`, new ones committed to `device_keys` at once (called with the write lock held). */
  async register(db: Db, keys: readonly string[]): Promise<number[]> {
    const { ids, fresh } = this.assign(keys);
    if (fresh.length > 0) {
      await db.exec(DeviceRegistry.insertSql(fresh));
      this.adopt(fresh);
    }
    return ids;
  }
}
