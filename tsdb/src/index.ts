export {
  type ColumnBatch,
  checkBatch,
  columnize,
  concatBatches,
  readingsOf,
} from './columns.ts';
export type { DuckDbStore, DuckDbStoreOptions } from './duckdb/store.ts';
export * from './port.ts';

import type { DuckDbStoreOptions } from './duckdb/store.ts';
import { DuckDbStore } from './duckdb/store.ts';

/** The embedded engine: in memory when no path is given, else a DuckDB database file. */
export async function createDuckDbStore(opts: DuckDbStoreOptions = {}): Promise<DuckDbStore> {
  return DuckDbStore.open(opts);
}
