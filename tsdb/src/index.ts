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
 * DuckDB's memory limit in Kilowatch's deployments unless `KW_DUCKDB_MEMORY_LIMIT` says otherwise (core's
 * configuration carries the same default). DuckDB alone would take up to 80 % of the machine's memory and
 * does fill 4 GB while a year of history is written. At 384 MB the demo year is written as fast as at
 * 1 GB, every year-long answer of `pnpm bench query` keeps its p95 under 50 ms, and the process peaks
 * ~500 MB lower (bench/results/footprint.md).
 */
export const DEPLOYMENT_MEMORY_LIMIT = '384MB';

/**
 * DuckDB's limit while bulk work runs (a bulk load, a large refresh, an export's raw stream) in
 * Kilowatch's deployments unless `KW_DUCKDB_BULK_MEMORY_LIMIT` says otherwise (core's configuration
 * carries the same default; limits.ts).
 */
export const DEPLOYMENT_BULK_MEMORY_LIMIT = '192MB';

/** The embedded engine: in memory when no path is given, else a DuckDB database file. */
export async function createDuckDbStore(opts: DuckDbStoreOptions = {}): Promise<DuckDbStore> {
  return DuckDbStore.open(opts);
}
