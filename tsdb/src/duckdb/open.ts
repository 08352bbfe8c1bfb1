/**
 * Opening a DuckDB database for the store: the instance and its connections, the schema and its
 * migrations (catalogue columns, rollup version), and the newest-values table built once for a file
 * that predates it.
 */
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { isMemorySize } from '@kilowatch/core';
import { StoreError } from '../port.ts';
import {
  catalogueMigration,
  q,
  READING_COLUMNS,
  ROLLUP_VERSION,
  SCHEMA,
  SCHEMA_VERSION,
  STORED,
} from './schema.ts';

export interface OpenedDatabase {
  instance: DuckDBInstance;
  w: DuckDBConnection;
  r: DuckDBConnection;
  ck: DuckDBConnection | null;
  /** Whether the rollups were dropped (computed by an older rule) and must be rebuilt before answering. */
  rebuild: boolean;
}

/** Opens (or creates) the database at `path` (in memory when omitted) under `memoryLimit`. */
export async function openDatabase(opts: { path?: string; memoryLimit?: string }): Promise<OpenedDatabase> {
  const limit = opts.memoryLimit?.trim();
  if (limit !== undefined && !isMemorySize(limit)) {
    throw new StoreError(
      `the DuckDB memory limit must be a size such as 512MB or 2GB, got "${opts.memoryLimit}"`,
      'configuration',
    );
  }
  let instance: DuckDBInstance;
  try {
    instance = await DuckDBInstance.create(
      opts.path ?? ':memory:',
      limit === undefined ? undefined : { memory_limit: limit },
    );
  } catch (e) {
    throw new StoreError(
      `cannot open DuckDB at ${opts.path ?? ':memory:'}: ${(e as Error).message}`,
      'configuration',
      {
        cause: e,
      },
    );
  }
  const w = await instance.connect();
  const r = await instance.connect();
  const ck = opts.path ? await instance.connect() : null;
  // Checkpoints are started by the store on `ck` (see `written`); DuckDB's automatic one, run inside
  // a commit, stays only as a safety net for a WAL that grew anyway.
  if (ck) await w.run(`SET checkpoint_threshold = '256MB'`);
  for (const sql of SCHEMA) await w.run(sql);
  const columns = (
    await w.runAndReadAll(
      `SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = 'readings'`,
    )
  ).getRows();
  for (const sql of catalogueMigration(new Set(columns.map(([c]) => c as string)))) await w.run(sql);
  const version = (await w.runAndReadAll(`SELECT v FROM meta WHERE k = 'schema_version'`)).getRows()[0]?.[0];
  if (version === undefined) {
    await w.run(`INSERT INTO meta VALUES ('schema_version', '${SCHEMA_VERSION}'), ('watermark', NULL)`);
  } else if (version !== String(SCHEMA_VERSION)) {
    w.closeSync();
    r.closeSync();
    ck?.closeSync();
    instance.closeSync();
    throw new StoreError(
      `${opts.path} holds schema version ${version}; this build reads version ${SCHEMA_VERSION}`,
      'configuration',
    );
  }
  const rollupVersion = (
    await w.runAndReadAll(`SELECT v FROM meta WHERE k = 'rollup_version'`)
  ).getRows()[0]?.[0];
  let rebuild = false;
  if (rollupVersion === undefined && version === undefined) {
    await w.run(`INSERT INTO meta VALUES ('rollup_version', '${ROLLUP_VERSION}')`);
  } else if (Number(rollupVersion ?? 1) < ROLLUP_VERSION) {
    // Rollups computed by an older rule: dropped, and every device marked dirty from its first
    // reading, so they are recomputed before the store answers (below).
    await w.run('BEGIN TRANSACTION');
    for (const t of ['rollup_15m', 'rollup_30m', 'rollup_1h', 'counter_events'])
      await w.run(`DELETE FROM ${t}`);
    await w.run(`UPDATE rollup_state SET dirty_from = f.first FROM
        (SELECT device, min(ts) AS first FROM readings GROUP BY device) f WHERE rollup_state.device = f.device`);
    await w.run(`DELETE FROM meta WHERE k = 'rollup_version'`);
    await w.run(`INSERT INTO meta VALUES ('rollup_version', '${ROLLUP_VERSION}')`);
    await w.run('COMMIT');
    rebuild = true;
  }
  const built = (
    await w.runAndReadAll(`SELECT count(*) FROM meta WHERE k = 'latest_values'`)
  ).getRows()[0]?.[0];
  if (Number(built) === 0) {
    await w.run('BEGIN TRANSACTION');
    await w.run(`INSERT INTO latest_values SELECT device, param, max(ts), arg_max(v, ts)
        FROM (UNPIVOT (SELECT ${READING_COLUMNS} FROM readings) ON ${STORED.map(q).join(', ')} INTO NAME param VALUE v) GROUP BY ALL`);
    await w.run(`INSERT INTO meta VALUES ('latest_values', 'built')`);
    await w.run('COMMIT');
  }
  return { instance, w, r, ck, rebuild };
}
