export {
  type ColumnBatch,
  checkBatch,
  columnize,
  concatBatches,
  readingsOf,
} from './columns.ts';
export { type DuckDbStore, type DuckDbStoreOptions, isMemorySize } from './duckdb/store.ts';
export * from './port.ts';
export * from './readingCheck.ts';

import type { DuckDbStoreOptions } from './duckdb/store.ts';
import { DuckDbStore } from './duckdb/store.ts';

/**
 * DuckDB's memory limit in Kilowatch's deployments unless `KW_DUCKDB_MEMORY_LIMIT` says otherwise. DuckDB
 * alone would take up to 80 % of the machine's memory and does fill 4 GB while a year of history is
 * written; at 1 GB the same write and the year-long queries are no slower (bench/README.md).
 */
export const DEPLOYMENT_MEMORY_LIMIT = '1GB';

/** The embedded engine: in memory when no path is given, else a DuckDB database file. */
export async function createDuckDbStore(opts: DuckDbStoreOptions = {}): Promise<DuckDbStore> {
  return DuckDbStore.open(opts);
}
