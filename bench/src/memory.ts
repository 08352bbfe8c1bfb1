import { DEPLOYMENT_BULK_MEMORY_LIMIT, DEPLOYMENT_MEMORY_LIMIT } from '@kilowatch/tsdb';

/**
 * DuckDB's memory limit for a bench's store: `--memory-limit SIZE`, by default what deployments give it
 * (`DEPLOYMENT_MEMORY_LIMIT`), so the numbers are those of `pnpm start`; `--memory-limit duckdb` leaves
 * DuckDB's own default (80 % of the machine's memory).
 */
export function memoryLimitArg(args: readonly string[]): string | undefined {
  const i = args.indexOf('--memory-limit');
  const v = i >= 0 ? args[i + 1] : DEPLOYMENT_MEMORY_LIMIT;
  if (v === undefined) throw new Error('--memory-limit needs a size (512MB, 2GB) or "duckdb"');
  return v === 'duckdb' ? undefined : v;
}

/**
 * DuckDB's limit while bulk work runs (tsdb limits.ts): `--bulk-memory-limit SIZE`, by default what
 * deployments give it (`DEPLOYMENT_BULK_MEMORY_LIMIT`); `--bulk-memory-limit off` keeps the memory limit
 * throughout.
 */
export function bulkMemoryLimitArg(args: readonly string[]): string | undefined {
  const i = args.indexOf('--bulk-memory-limit');
  const v = i >= 0 ? args[i + 1] : DEPLOYMENT_BULK_MEMORY_LIMIT;
  if (v === undefined) throw new Error('--bulk-memory-limit needs a size (192MB) or "off"');
  return v === 'off' ? undefined : v;
}
