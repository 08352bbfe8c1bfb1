/**
 * The InfluxDB engine of the TelemetryStore port, over the v1 HTTP API only (`/write`, `/query`,
 * `/ping`), so one adapter serves InfluxDB 1.x, 2.x (v1 compatibility + DBRP) and 3.x.
 */
import { randomBytes } from 'node:crypto';
import {
  calendarBuckets,
  counterBucketStart,
  DEFAULT_TIMEZONE,
  fixedBucketStart,
  HOUR_MS,
  isStoredParam,
  isValidTimeZone,
  type Reading,
} from '@kilowatch/core';
import {
  type DeleteReadingsQuery,
  type LatestValues,
  MAX_DEVICE_KEY_LENGTH,
  MAX_STORED_TS,
  type RawPage,
  type RawQuery,
  type RawRow,
  type ReadingProblem,
  type RollupRunResult,
  readingProblem,
  StoreError,
  type StoreHealth,
  type TelemetryStore,
  type WriteResult,
} from '@kilowatch/tsdb';
import { checkRange, energy, series } from './answers.ts';
import { type ClientStats, InfluxClient, type InfluxClientOptions, type RetryOptions } from './client.ts';
import { DayRollupReader, type DayRollups } from './dayRollupReader.ts';
import { encodeLine, ident, literal } from './lineProtocol.ts';
import { type DirtyRange, RollupMaintainer } from './refresh.ts';
import {
  deviceWhere,
  fieldList,
  READINGS,
  ROLLUP_DAY,
  ROLLUP_MEASUREMENT,
  type Row,
  rowsOf,
  toRawRows,
} from './schema.ts';

export interface InfluxStoreOptions {
  /** Base URL of the server (`INFLUX_URL`), e.g. http://127.0.0.1:8086. */
  url: string;
  /** Database (`INFLUX_DB`); on 2.x the DBRP-mapped name, on 3.x the database. */
  database: string;
  token?: string;
  username?: string;
  password?: string;
  retentionPolicy?: string;
  /** Readings per `/write` request (default 5,000). */
  batchSize?: number;
  /**
   * Told about readings of a request the server partly refused (`partial write`: field type conflict,
   * outside the retention policy). InfluxDB does not say which lines it dropped, so the whole request's
   * readings are handed over; re-writing them is harmless (idempotent on device + timestamp).
   */
  onRejected?(points: readonly Reading[], reason: string): void;
  retry?: RetryOptions;
  /** One request's time limit (default 30 s). */
  timeoutMs?: number;
  /** Queries' attempts and time limit (InfluxClientOptions.reads: 2 of at most 15 s by default). */
  reads?: InfluxClientOptions['reads'];
  /**
   * Time zones of the devices' locations: daily energy (`rollup_1d`) is kept per local day of each, so
   * daily and monthly energy in them reads one point per day. Other zones are answered from hourly (or
   * 15-minute) rollups. Default: [Europe/Warsaw].
   */
  dayZones?: readonly string[];
}

export interface InfluxStoreStats extends ClientStats {
  /** Readings handed to `onRejected` (their requests were partly dropped). */
  rejectedReadings: number;
}

export interface InfluxTelemetryStore extends TelemetryStore {
  readonly engine: 'influxdb';
  /** Counters of requests, retries and dropped points since the store was opened. */
  stats(): InfluxStoreStats;
}

function reject(msg: string): StoreError {
  return new StoreError(msg, 'rejected');
}

/** Why a reading cannot be stored, in this engine's words (the check itself is the port's `readingProblem`). */
export function readingProblemText(p: ReadingProblem): string {
  switch (p.code) {
    case 'not-a-reading':
      return 'not a reading object';
    case 'device-key':
      return `deviceKey must be a non-empty single-line string of at most ${MAX_DEVICE_KEY_LENGTH} characters without backslashes`;
    case 'ts':
      return `ts must be integer epoch milliseconds between 1677 and 2262, got ${String(p.ts)}`;
    case 'values':
      return 'values must be an object';
    case 'unknown-parameter':
      return `unknown parameter: ${p.param}`;
    case 'not-finite':
      return `${p.param} must be a finite number, got ${String(p.value)}`;
  }
}

function parseCursor(cursor: string | null | undefined): number | undefined {
  if (cursor === null || cursor === undefined || cursor === '') return undefined;
  // InfluxDB's times end in 2262 (int64 nanoseconds): a later cursor names no reading, and InfluxDB
  // would fail the whole query on it.
  if (!/^\d{1,16}$/.test(cursor) || Number(cursor) > MAX_STORED_TS) throw reject(`invalid cursor: ${cursor}`);
  return Number(cursor);
}

function checkParams(params: readonly string[] | undefined): readonly string[] {
  if (params === undefined) return [];
  if (!Array.isArray(params) || params.length === 0) throw reject('params, when given, must name parameters');
  for (const p of params) if (!isStoredParam(p)) throw reject(`unknown stored parameter: ${p}`);
  return params;
}

/** How far back `latest` looks first (a live meter reports within it). */
const LATEST_WINDOW_MS = 86_400_000;

/** Values of a `last(…)` row, whose columns are named `last_<field>`. */
function lastValues(row: Row): Record<string, number> {
  const values: Record<string, number> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith('last_') && typeof v === 'number') values[k.slice(5)] = v;
  }
  return values;
}

/** The values in field order, as one `last(*)` over the whole history gives them. */
function sortedValues(values: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export async function createInfluxStore(options: InfluxStoreOptions): Promise<InfluxTelemetryStore> {
  const client = new InfluxClient({
    url: options.url,
    database: options.database,
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.username !== undefined ? { username: options.username } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
    ...(options.retentionPolicy !== undefined ? { retentionPolicy: options.retentionPolicy } : {}),
    ...(options.retry !== undefined ? { retry: options.retry } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.reads !== undefined ? { reads: options.reads } : {}),
  });
  const batchSize = options.batchSize ?? 5000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new StoreError(`batchSize must be a positive integer, got ${batchSize}`, 'configuration');
  const dayZones = [...new Set(options.dayZones ?? [DEFAULT_TIMEZONE])];
  for (const z of dayZones)
    if (typeof z !== 'string' || !isValidTimeZone(z))
      throw new StoreError(`dayZones: unknown time zone ${String(z)}`, 'configuration');
  const rollups = new RollupMaintainer(client, randomBytes(4).toString('hex'), batchSize, dayZones);
  const days: DayRollups = {
    dayRollupsReady: (tz) => rollups.dayRollupsReady(tz),
    reader: new DayRollupReader(client),
  };
  let rejectedReadings = 0;
  let closed = false;
  const open = (): void => {
    if (closed) throw new StoreError('the InfluxDB store is closed', 'unavailable');
  };

  async function writeChunk(chunk: readonly Reading[]): Promise<number> {
    const lines = chunk.map((r) => encodeLine(READINGS, { device: r.deviceKey }, r.values, r.ts)).join('\n');
    const ranges = new Map<string, DirtyRange>();
    for (const r of chunk) {
      const cur = ranges.get(r.deviceKey);
      if (!cur) ranges.set(r.deviceKey, { from: r.ts, to: r.ts });
      else {
        if (r.ts < cur.from) cur.from = r.ts;
        if (r.ts > cur.to) cur.to = r.ts;
      }
    }
    const markerTimes: number[] = [];
    // The markers ride in the same request as the readings: each attempt gets fresh marker times.
    const body = (): string => {
      const ts = rollups.nextMarkerTs();
      markerTimes.push(ts);
      rollups.beginWrite(ts);
      let out = lines;
      for (const [device, range] of ranges) out += `\n${rollups.markerLine(device, range, ts)}`;
      return out;
    };
    try {
      const res = await client.write(body);
      if (res.dropped > 0 || res.reason) {
        rejectedReadings += chunk.length;
        options.onRejected?.(chunk, res.reason ?? 'partial write');
        return Math.max(0, chunk.length - res.dropped);
      }
      return chunk.length;
    } finally {
      for (const t of markerTimes) rollups.endWrite(t);
    }
  }

  /** `latest` over the device's whole history. */
  async function latestOver(where: string): Promise<LatestValues | null> {
    const [lastRes, newest] = await client.query(
      `SELECT last(*) FROM ${READINGS} WHERE ${where}; SELECT * FROM ${READINGS} WHERE ${where} ORDER BY time DESC LIMIT 1`,
    );
    const top = rowsOf(newest?.series)[0];
    const row = rowsOf(lastRes?.series)[0];
    if (!top || !row) return null;
    return { ts: top.time as number, values: lastValues(row) };
  }

  async function readRaw(query: RawQuery): Promise<RawPage> {
    open();
    checkRange(query.deviceKey, query.from, query.to);
    if (!Number.isInteger(query.limit) || query.limit < 1 || query.limit > 10_000)
      throw reject(`limit must be 1..10000, got ${query.limit}`);
    const params = checkParams(query.params);
    const after = parseCursor(query.cursor);
    const from = after === undefined ? query.from : Math.max(query.from, after + 1);
    const [res] = await client.query(
      `SELECT ${fieldList(params)} FROM ${READINGS} WHERE ${deviceWhere(query.deviceKey, from, query.to)} ORDER BY time ASC LIMIT ${query.limit + 1}`,
    );
    const rows = toRawRows(rowsOf(res?.series));
    const more = rows.length > query.limit;
    const items = more ? rows.slice(0, query.limit) : rows;
    return { items, nextCursor: more ? String(items[items.length - 1]!.ts) : null };
  }

  const store: InfluxTelemetryStore = {
    engine: 'influxdb',

    async write(readings: readonly Reading[]): Promise<WriteResult> {
      open();
      if (!Array.isArray(readings)) throw reject('write takes an array of readings');
      for (let i = 0; i < readings.length; i++) {
        const problem = readingProblem(readings[i]);
        if (problem) throw reject(`reading ${i} rejected, nothing written: ${readingProblemText(problem)}`);
      }
      // A reading without values stores nothing (line protocol needs a field); it still counts as done.
      const storable = readings.filter((r) => Object.keys(r.values).length > 0);
      let written = readings.length - storable.length;
      for (let i = 0; i < storable.length; i += batchSize) {
        written += await writeChunk(storable.slice(i, i + batchSize));
      }
      return { written };
    },

    readRaw,

    async *streamRaw(query): AsyncIterable<RawRow[]> {
      const limit = Math.min(10_000, Math.max(1, Math.floor(query.pageSize ?? 5000)));
      let cursor: string | null = null;
      do {
        const page: RawPage = await readRaw({ ...query, limit, cursor });
        if (page.items.length > 0) yield page.items;
        cursor = page.nextCursor;
      } while (cursor !== null);
    },

    async series(query) {
      open();
      if (query.source !== 'raw') await rollups.ensureCurrent();
      return series(client, query);
    },

    async energy(query) {
      open();
      if (query.source !== 'raw') await rollups.ensureCurrent();
      return energy(client, query, days);
    },

    async latest(deviceKey: string): Promise<LatestValues | null> {
      open();
      if (typeof deviceKey !== 'string' || deviceKey.length === 0) throw reject('deviceKey is required');
      const where = deviceWhere(deviceKey);
      // `last(*)` reads every field of the device over the range asked, and over a year of readings that
      // took tens of milliseconds (growing with the history). A live meter's newest values lie in the last
      // day, so that day is asked first; what the device reported only before it is then asked field by
      // field, and a device silent for a day is asked over its whole history.
      const since = Date.now() - LATEST_WINDOW_MS;
      const recent = `${where} AND time >= ${since}ms`;
      const [lastRes, newest, keys] = await client.query(
        `SELECT last(*) FROM ${READINGS} WHERE ${recent}; SELECT * FROM ${READINGS} WHERE ${recent} ORDER BY time DESC LIMIT 1; SHOW FIELD KEYS FROM ${READINGS}`,
      );
      const top = rowsOf(newest?.series)[0];
      const row = rowsOf(lastRes?.series)[0];
      if (!top || !row) return latestOver(where);
      const values = lastValues(row);
      const older = [
        ...new Set(
          rowsOf(keys?.series)
            .map((k) => k.fieldKey)
            .filter((k): k is string => typeof k === 'string' && !(k in values)),
        ),
      ];
      if (older.length > 0) {
        const [res] = await client.query(
          `SELECT ${older.map((f) => `last(${ident(f)}) AS ${ident(`last_${f}`)}`).join(', ')} FROM ${READINGS} WHERE ${where} AND time < ${since}ms`,
        );
        const before = rowsOf(res?.series)[0];
        if (before) Object.assign(values, lastValues(before));
      }
      return { ts: top.time as number, values: sortedValues(values) };
    },

    async refreshRollups(now = Date.now()): Promise<RollupRunResult> {
      open();
      return rollups.refresh(now);
    },

    async deleteDevice(deviceKey: string): Promise<void> {
      open();
      if (typeof deviceKey !== 'string' || deviceKey.length === 0) throw reject('deviceKey is required');
      // Every measurement at once: readings, rollups and dirty markers. `DELETE WHERE <tag>` (not DROP
      // SERIES) because 2.x's v1 endpoint serves it too; 1.x also drops the emptied series from the index.
      await client.query(`DELETE WHERE ${ident('device')} = ${literal(deviceKey)}`);
    },

    async deleteReadings(query: DeleteReadingsQuery): Promise<void> {
      open();
      const { deviceKey, from, to } = query;
      checkRange(deviceKey, from, to);
      if (from === to) return;
      // The rollup points of every bucket the range touches are emptied, not only rewritten: a rewrite
      // replaces the fields it writes, and a quarter whose readings are all gone would keep its old point.
      // Each lies inside what the refresh of the marker below recomputes (refresh.ts `recompute`: from the
      // hour whose (start, end] holds `from`, to the hour after the next reading after the range).
      const rFrom = counterBucketStart(from, HOUR_MS);
      const rTo = fixedBucketStart(to - 1, HOUR_MS) + HOUR_MS;
      const statements = [
        `DELETE FROM ${READINGS} WHERE ${deviceWhere(deviceKey, from, to)}`,
        ...Object.values(ROLLUP_MEASUREMENT).map(
          (m) => `DELETE FROM ${ident(m)} WHERE ${deviceWhere(deviceKey, rFrom, rTo)}`,
        ),
        ...dayZones.map((tz) => {
          const days = calendarBuckets(rFrom, rTo, 'day', tz);
          const first = days.starts[0] ?? rFrom;
          return `DELETE FROM ${ident(ROLLUP_DAY)} WHERE ${deviceWhere(deviceKey, first, days.end)} AND ${ident('tz')} = ${literal(tz)}`;
        }),
      ];
      await client.query(statements.join('; '));
      // A dirty marker as a late write leaves one: the next refresh recomputes the range from what is left.
      const ts = rollups.nextMarkerTs();
      rollups.beginWrite(ts);
      try {
        await client.write(rollups.markerLine(deviceKey, { from, to: to - 1 }, ts));
      } finally {
        rollups.endWrite(ts);
      }
    },

    async devices(): Promise<string[]> {
      open();
      const [res] = await client.query(`SHOW TAG VALUES FROM ${READINGS} WITH KEY = ${ident('device')}`);
      return rowsOf(res?.series)
        .map((r) => String(r.value))
        .sort();
    },

    async health(): Promise<StoreHealth> {
      let version: string;
      try {
        version = await client.ping();
      } catch (err) {
        return { ok: false, engine: 'influxdb', detail: err instanceof Error ? err.message : String(err) };
      }
      // A server that answers is not yet a database that takes writes: a missing database (or DBRP
      // mapping) and refused credentials show only on a request against it.
      try {
        await client.query(`SHOW RETENTION POLICIES ON ${ident(options.database)}`);
      } catch (err) {
        if (err instanceof StoreError && err.kind === 'configuration')
          return { ok: false, engine: 'influxdb', detail: `InfluxDB ${version}: ${err.message}` };
      }
      return { ok: true, engine: 'influxdb', detail: `InfluxDB ${version}` };
    },

    async close(): Promise<void> {
      closed = true;
    },

    stats(): InfluxStoreStats {
      return { ...client.stats, rejectedReadings };
    },
  };
  return store;
}
