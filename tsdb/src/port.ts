/**
 * The TelemetryStore port (docs/architecture.md §The TelemetryStore port). One interface, two engines
 * (DuckDB embedded, InfluxDB over its v1 API); everything above it is engine-blind. Times are UTC
 * epoch milliseconds; intervals are half-open [from, to).
 */
import type { EnergyInterval, Reading, RollupInterval, SeriesInterval } from '@kilowatch/core';

/** The intervals and their steps are core's catalogue (`@kilowatch/core` buckets). */
export { ROLLUP_STEP_MS } from '@kilowatch/core';
export type { EnergyInterval, Reading, RollupInterval, SeriesInterval };
export type Stat = 'avg' | 'min' | 'max';

/**
 * Where a bucketed answer comes from. `auto` (default) uses the rollups; `raw` computes the same
 * aggregation straight from raw readings — for the conformance suite (rollups must equal raw) and the
 * benchmarks (rollups against the raw path in the same run). Both give the same numbers.
 */
export type QuerySource = 'auto' | 'raw';

export interface WriteResult {
  /** Readings committed (a re-write of the same device + timestamp counts again but stores once). */
  written: number;
}

export interface RawQuery {
  deviceKey: string;
  from: number;
  to: number;
  /** Stored parameter names; omitted → every parameter the device has. */
  params?: readonly string[];
  /** Opaque cursor from a previous page. */
  cursor?: string | null;
  /** Page size, 1..10,000. */
  limit: number;
}

/** The readings `deleteReadings` removes: one device's, in [from, to). */
export interface DeleteReadingsQuery {
  deviceKey: string;
  from: number;
  to: number;
}

export interface RawRow {
  ts: number;
  values: Record<string, number>;
}

export interface RawPage {
  items: RawRow[];
  nextCursor: string | null;
}

export interface SeriesQuery {
  deviceKey: string;
  /** Stored names (`vave1`) or all-phase names (`vave`, combined per the catalogue). */
  params: readonly string[];
  from: number;
  to: number;
  interval: SeriesInterval;
  /** Statistics per bucket; an empty list means all three. */
  stats: readonly Stat[];
  /** Zone for `1d` buckets (device location); default Europe/Warsaw. */
  tz?: string;
  source?: QuerySource;
}

/**
 * Columnar series, the shape a chart takes without reshaping. For bucketed intervals `t` lists every
 * bucket start in range (gaps are `null`); for `raw` it lists the readings' timestamps.
 */
export interface SeriesResult {
  interval: SeriesInterval;
  from: number;
  to: number;
  tz: string;
  t: number[];
  series: Record<string, Partial<Record<Stat, (number | null)[]>>>;
}

export interface EnergyQuery {
  deviceKey: string;
  /** Counter names, stored (`eai1`) or all-phase (`eai` = Σ of the phases' energies). */
  counters: readonly string[];
  from: number;
  to: number;
  interval: EnergyInterval;
  /** Zone for `1d` and `1mo` buckets. */
  tz?: string;
  source?: QuerySource;
  /**
   * `false` leaves `resets` and `implausible` empty (the energy is the same): for answers that show only
   * energy, so the store need not read its counter events. Default `true`.
   */
  events?: boolean;
}

/**
 * Energy per bucket from cumulative counters (docs/domain.md §Energy from counters; core `energyPerBucket`):
 * last − last-before, resets contribute nothing, jitter ignored, implausible jumps left out and flagged.
 * A bucket holding no reading is `null` (a gap); the energy across a gap lands in the bucket of the
 * reading that ends it.
 */
export interface EnergyResult {
  interval: EnergyInterval;
  tz: string;
  t: number[];
  energy: Record<string, (number | null)[]>;
  /** Intervals left out of energy because they implied more than the plausible power. */
  implausible: { counter: string; from: number; to: number; delta: number }[];
  /** Counter resets seen (the interval holding a reset contributes nothing). */
  resets: { counter: string; at: number }[];
}

export interface LatestValues {
  /** Timestamp of the newest reading of the device. */
  ts: number;
  /** Newest value of every parameter the device has reported (each may come from an older reading). */
  values: Record<string, number>;
}

export interface RollupRunResult {
  /** Buckets recomputed in this run (re-opened late buckets included). */
  buckets: number;
  /** Everything before this instant is final unless late data re-opens it. */
  watermark: number;
}

export interface StoreHealth {
  ok: boolean;
  engine: 'duckdb' | 'influxdb';
  detail?: string;
}

/**
 * What went wrong, which decides the answer: `unavailable` — the store cannot be reached or is closed
 * (503; trying again later can succeed); `configuration` — the deployment is wrong (missing database,
 * refused credentials, a bad option; 503 until an operator fixes it); `rejected` — the call itself is
 * invalid (400); `internal` — a fault in the store (500).
 */
export type StoreErrorKind = 'unavailable' | 'configuration' | 'rejected' | 'internal';

/** A store error. Its kind alone says whether retrying can help: only while the store is unavailable. */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  /** `kind === 'unavailable'`; kept as a field so it shows in logged errors. */
  readonly retryable: boolean;
  constructor(
    message: string,
    readonly kind: StoreErrorKind,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.retryable = kind === 'unavailable';
  }
}

/** A query the store refuses as asked (400 at the API): the same for every engine. */
export function rejectedQuery(message: string): StoreError {
  return new StoreError(message, 'rejected');
}

/**
 * The time range check every engine makes before any work: whole epoch milliseconds and `to` not
 * before `from`. `from == to` is an empty range, answered with no buckets and no rows.
 */
export function checkTimeRange(from: number, to: number): void {
  for (const [what, n] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (!Number.isSafeInteger(n))
      throw rejectedQuery(`${what} must be an integer epoch-millisecond value, got ${n}`);
  }
  if (to < from) throw rejectedQuery('`to` must not be before `from`');
}

const ALL_STATS: readonly Stat[] = ['avg', 'min', 'max'];

/** The statistics a series query asks for, each once; none listed means all three. */
export function seriesStats(stats: readonly Stat[]): Stat[] {
  for (const s of stats) if (!ALL_STATS.includes(s)) throw rejectedQuery(`unknown stat "${s}"`);
  return stats.length === 0 ? [...ALL_STATS] : [...new Set(stats)];
}

/** What `memoryLimits` answers: DuckDB's memory limit in force and whether the bulk limit was given up. */
export interface StoreMemoryLimits {
  /** Bytes DuckDB may use now: the whole limit, or the lower one while bulk work runs. */
  inForceBytes: number;
  /** The store ran out of memory under its bulk memory limit and keeps its whole limit from then on. */
  bulkLimitGivenUp: boolean;
}

/** What `memoryByTag` answers for one tag (DuckDB's `duckdb_memory()`: BASE_TABLE, IN_MEMORY_TABLE, …). */
export interface StoreMemory {
  tag: string;
  /** Bytes resident in memory. */
  memoryBytes: number;
  /** Bytes spilled to temporary files. */
  temporaryBytes: number;
}

export interface TelemetryStore {
  readonly engine: StoreHealth['engine'];

  /**
   * Writes a batch. Resolves only once the batch is durably committed: that is the point at which
   * ingest acknowledges the MQTT messages. Idempotent on (device, timestamp): a re-write replaces the
   * values it carries and keeps the others.
   */
  write(readings: readonly Reading[]): Promise<WriteResult>;

  /** What the engine offers beyond the required methods (none declared: none offered). */
  readonly capabilities?: StoreCapabilities;

  /**
   * The same write for readings already laid out in columns by `columnize` (which can run in another
   * thread: the MQTT bridge decodes and lays out its messages in a worker). Refuses a malformed batch
   * whole, as `write` refuses a bad reading. Offered when `capabilities.columnWrites` says so; callers go
   * through `columnWriter`.
   */
  writeColumns?(batch: ColumnBatch): Promise<WriteResult>;

  /**
   * Optional bulk load of history (demo data, imports): many batches in few, large transactions, beside
   * the ongoing `write`s rather than queued between them. A (device, timestamp) already stored is kept
   * as it is. Resolves once everything is committed; a failure may leave a prefix of the batches stored
   * (running the same load again completes it). Engines without it take the batches through `write`.
   * A batch may come laid out in columns already (`columnize`, e.g. in a generation thread). The
   * rollups of the devices being loaded are refreshed after the load, not while it runs. The store reads
   * a batch only until it asks for the next one: the caller may then reuse or release its buffers.
   */
  writeBulk?(batches: AsyncIterable<readonly Reading[] | ColumnBatch>): Promise<WriteResult>;

  /**
   * Optional: the store's own count of the memory it holds in this process, by what holds it (for
   * /metrics). Engines in another process (InfluxDB) have none.
   */
  memoryByTag?(): Promise<readonly StoreMemory[]>;

  /** Optional: the memory limit in force, for a store with one in this process (for /metrics). */
  memoryLimits?(): StoreMemoryLimits | null;

  /** Raw readings in time order, paged (data log). */
  readRaw(query: RawQuery): Promise<RawPage>;

  /** Raw readings in time order as a stream of pages with bounded memory (exports). */
  streamRaw(query: Omit<RawQuery, 'cursor' | 'limit'> & { pageSize?: number }): AsyncIterable<RawRow[]>;

  /** Bucketed or raw series; bucketed answers come from rollups, never a long raw scan. */
  series(query: SeriesQuery): Promise<SeriesResult>;

  /**
   * Optional: several series at once (a comparison's members), one answer per query in order, each
   * what `series` gives for it. Engines that read them in one pass implement it; callers go through
   * `seriesOfMany`, which falls back to one `series` per query.
   */
  seriesMany?(queries: readonly SeriesQuery[]): Promise<SeriesResult[]>;

  /** Energy per bucket from counters. */
  energy(query: EnergyQuery): Promise<EnergyResult>;

  /** Newest values of a device, or null when it never reported. */
  latest(deviceKey: string): Promise<LatestValues | null>;

  /** Brings the 15m/30m/1h rollups up to date, re-opening buckets that received late data. */
  refreshRollups(now?: number): Promise<RollupRunResult>;

  /** Deletes every reading and rollup of a device. */
  deleteDevice(deviceKey: string): Promise<void>;

  /**
   * Deletes a device's readings with `from <= ts < to` (an import undone). Resolves once the deletion is
   * committed; the newest values no longer show a deleted reading at once, and the rollups of the range
   * are recomputed by the next `refreshRollups`, as after a late write (until then they may still count
   * the deleted readings). An empty range deletes nothing.
   */
  deleteReadings(query: DeleteReadingsQuery): Promise<void>;

  /** Device keys that have data (used by the demo and health views). */
  devices(): Promise<string[]>;

  health(): Promise<StoreHealth>;

  close(): Promise<void>;
}

/** Optional abilities an engine declares (`TelemetryStore.capabilities`). */
export interface StoreCapabilities {
  /** Takes batches already laid out in columns (`writeColumns`). */
  readonly columnWrites?: boolean;
}

/** The store's columnar write when it declares one, else null (write through `write`). */
export function columnWriter(store: TelemetryStore): ((batch: ColumnBatch) => Promise<WriteResult>) | null {
  if (!store.capabilities?.columnWrites || !store.writeColumns) return null;
  return (batch) => (store.writeColumns as (b: ColumnBatch) => Promise<WriteResult>).call(store, batch);
}

/** Several series from one store: in one pass where the engine offers `seriesMany`, else one by one. */
export function seriesOfMany(
  store: TelemetryStore,
  queries: readonly SeriesQuery[],
): Promise<SeriesResult[]> {
  if (store.seriesMany && queries.length > 1) return store.seriesMany(queries);
  return Promise.all(queries.map((q) => store.series(q)));
}

/**
 * A write batch laid out in columns (`columnize` in `columns.ts`): what `writeColumns` takes. Parameters
 * are positions in the catalogue's `PARAM_NAMES`.
 */
export interface ColumnBatch {
  /** Rows stored (readings without values are left out). */
  rows: number;
  /** Device keys of the batch, in order of first appearance. */
  keys: string[];
  /** Index into `keys` per row. */
  dev: Int32Array<ArrayBuffer>;
  ts: Float64Array<ArrayBuffer>;
  /** Parameters present, as indices into `STORED`, ascending. */
  cols: number[];
  /** Values per present parameter (same order as `cols`); absent values are 0 with the bit cleared. */
  values: Float64Array<ArrayBuffer>[];
  /** Validity per present parameter: bit `r` (little-endian 64-bit words) set when row `r` has it. */
  valid: Uint32Array<ArrayBuffer>[];
  /** Whether a present parameter is set in every row (its bitmap need not be copied). */
  full: boolean[];
  minTs: number;
  maxTs: number;
  /** Earliest and newest timestamp per device of the batch (index into `keys`). */
  minByDev: number[];
  maxByDev: number[];
  /** Newest value per (device, parameter): `[device index, STORED index, ts, value]` flattened. */
  newest: number[];
}
