/**
 * Rollup maintenance. Every write batch carries, in the same request, one `rollup_dirty` point per
 * device (time = the writer's clock, fields `from`/`to` = the batch's reading range). A refresh reads the
 * markers since its persisted cursor, recomputes each device's range from raw (the hour holding `from`
 * to the hour holding the next reading after `to`, so the step into it is counted), writes the 15m, 30m
 * and 1h points back, then advances the cursor in `rollup_state`. Markers newer than the cursor minus a
 * margin are read again (a writer in another process may still be sending); a marker handled is written
 * back with `done = 1`, so that neither this process nor another one (ingest processes take turns under
 * a lock, see the rollup scheduler) handles it twice. Rewrites are idempotent, so repeating work (a
 * process dying between its rollups and its `done`) never changes an answer.
 */
import {
  COUNTER_NAMES,
  type CounterPoint,
  calendarBuckets,
  counterBucketStart,
  fixedBucketStart,
  HOUR_MS,
} from '@kilowatch/core';
import { type RollupRunResult, StoreError } from '@kilowatch/tsdb';
import type { InfluxClient } from './client.ts';
import { encodeLine, ident } from './lineProtocol.ts';
import {
  bucketLine,
  coarsen,
  DayEnergy,
  keysOf,
  QUARTER_MS,
  quarterBuckets,
  type RollupBucket,
} from './rollup.ts';
import {
  DAY_STATE,
  DIRTY,
  deviceWhere,
  lastBefore,
  READINGS,
  ROLLUP_DAY,
  ROLLUP_MEASUREMENT,
  ROLLUP_VERSION,
  ROLLUP_VERSION_MEASUREMENT,
  readRawRange,
  rowsOf,
  STATE,
} from './schema.ts';

/** How far behind its cursor a refresh looks again for markers of writes still in flight elsewhere. */
export const MARKER_MARGIN_MS = 2 * 60_000;
/** Raw data is recomputed in windows of this length (bounded memory). */
const WINDOW_MS = 7 * 24 * HOUR_MS;
/** Days built per request when day rollups of a zone are built from stored 15-minute rollups. */
const BUILD_DAYS = 28;
/** How long "this zone's day rollups are not built yet" is believed before asking the server again. */
const NOT_BUILT_TTL_MS = 5_000;
/** The 15-minute fields a day rollup is summed from: every counter's energy and events. */
const DAY_SOURCE_FIELDS = COUNTER_NAMES.flatMap((c) => {
  const k = keysOf(c);
  return [ident(k.e), ident(k.ev)];
}).join(', ');

export interface DirtyRange {
  from: number;
  to: number;
}

export class RollupMaintainer {
  private readonly done = new Map<string, number>();
  private running: Promise<unknown> = Promise.resolve();
  private lastMarker = 0;
  private lastPrune = 0;
  /** Marker times of this instance's writes still in flight. */
  private readonly inflight = new Set<number>();
  /** Zones whose day rollups are known to be complete. */
  private readonly daysBuilt = new Set<string>();
  private daysCheckedAt = Number.NEGATIVE_INFINITY;
  /** Settles once the stored rollups are known to follow the current rule (rebuilt if they did not). */
  private current: Promise<void> | null = null;

  constructor(
    private readonly client: InfluxClient,
    private readonly writerId: string,
    private readonly batchLines: number,
    /** Zones to keep day rollups (`rollup_1d`) for. */
    private readonly dayZones: readonly string[] = [],
  ) {}

  /**
   * Whether daily energy in `tz` can be read from `rollup_1d`: the zone is kept and its day rollups have
   * been built (by this or another process; a database from before day rollups gets them at the next
   * refresh, and answers come from hourly rollups until then).
   */
  async dayRollupsReady(tz: string): Promise<boolean> {
    if (!this.dayZones.includes(tz)) return false;
    if (this.daysBuilt.has(tz)) return true;
    if (Date.now() - this.daysCheckedAt < NOT_BUILT_TTL_MS) return false;
    await this.loadBuiltZones();
    return this.daysBuilt.has(tz);
  }

  private async loadBuiltZones(): Promise<void> {
    this.daysCheckedAt = Date.now();
    const [res] = await this.client.query(`SELECT last("built") FROM ${DAY_STATE} GROUP BY "tz"`);
    for (const row of rowsOf(res?.series))
      if (typeof row.tz === 'string' && row.tz) this.daysBuilt.add(row.tz);
  }

  /** Adds the stored 15-minute energies of the device in [from, to) to a day accumulator. */
  private async addStoredQuarters(device: string, from: number, to: number, days: DayEnergy): Promise<void> {
    if (from >= to) return;
    const [res] = await this.client.query(
      `SELECT ${DAY_SOURCE_FIELDS} FROM ${ROLLUP_MEASUREMENT['15m']} WHERE ${deviceWhere(device, from, to)}`,
    );
    for (const row of rowsOf(res?.series)) {
      for (const c of COUNTER_NAMES) {
        const k = keysOf(c);
        const e = row[k.e];
        if (typeof e !== 'number') continue;
        const ev = row[k.ev];
        days.add(row.time as number, c, e, typeof ev === 'string' ? ev : '');
      }
    }
  }

  /**
   * Builds the day rollups of kept zones that have none yet from the stored 15-minute rollups (a database
   * from before day rollups, or a zone newly kept), then records the zone as built.
   */
  private async buildDayRollups(): Promise<void> {
    if (this.dayZones.every((z) => this.daysBuilt.has(z))) return;
    await this.loadBuiltZones();
    const zones = this.dayZones.filter((z) => !this.daysBuilt.has(z));
    if (zones.length === 0) return;
    const [devs] = await this.client.query(
      `SHOW TAG VALUES FROM ${ROLLUP_MEASUREMENT['15m']} WITH KEY = ${ident('device')}`,
    );
    for (const d of rowsOf(devs?.series)) {
      const device = String(d.value);
      const where = deviceWhere(device);
      const [first, last] = await this.client.query(
        `SELECT ${DAY_SOURCE_FIELDS} FROM ${ROLLUP_MEASUREMENT['15m']} WHERE ${where} ORDER BY time ASC LIMIT 1; ` +
          `SELECT ${DAY_SOURCE_FIELDS} FROM ${ROLLUP_MEASUREMENT['15m']} WHERE ${where} ORDER BY time DESC LIMIT 1`,
      );
      const t0 = rowsOf(first?.series)[0]?.time;
      const t1 = rowsOf(last?.series)[0]?.time;
      if (typeof t0 !== 'number' || typeof t1 !== 'number') continue;
      for (const tz of zones) {
        const { starts, end: lastEnd } = calendarBuckets(t0, t1 + QUARTER_MS, 'day', tz);
        for (let i = 0; i < starts.length; i += BUILD_DAYS) {
          const chunk = starts.slice(i, i + BUILD_DAYS);
          const end = starts[i + BUILD_DAYS] ?? lastEnd;
          const days = new DayEnergy(chunk, end);
          await this.addStoredQuarters(device, chunk[0]!, end, days);
          await this.writeLines(days.lines(ROLLUP_DAY, device, tz));
        }
      }
    }
    const now = Date.now();
    await this.client.write(zones.map((tz) => encodeLine(DAY_STATE, { tz }, { built: 1 }, now)).join('\n'));
    for (const z of zones) this.daysBuilt.add(z);
  }

  /**
   * Makes sure the stored rollups follow this build's counter rule (`ROLLUP_VERSION`, kept in
   * `rollup_version`): a database whose rollups are older — or carry no version — has them dropped and
   * recomputed from its readings, device by device, before any answer reads them. Asked once per process;
   * a failure is asked again at the next call.
   */
  ensureCurrent(): Promise<void> {
    if (!this.current) {
      this.current = this.upgrade().catch((err) => {
        this.current = null;
        throw err;
      });
    }
    return this.current;
  }

  private async upgrade(): Promise<void> {
    const [res] = await this.client.query(`SELECT last("version") FROM ${ROLLUP_VERSION_MEASUREMENT}`);
    const stored = rowsOf(res?.series)[0]?.last;
    if (typeof stored === 'number' && stored >= ROLLUP_VERSION) return;
    // Emptied, not only rewritten: a rewrite replaces the fields it writes, and under the new rule a quarter
    // may no longer hold a counter's energy at all. (`DELETE FROM`, as 2.x's v1 endpoint serves it too.)
    // InfluxDB 3's read-only v1 `/query` refuses DELETE: there the rollups are only rewritten (a quarter
    // that held a counter's energy under the old rule and holds none now keeps its old field).
    const dropped = [...Object.values(ROLLUP_MEASUREMENT), ROLLUP_DAY, DAY_STATE];
    try {
      await this.client.query(dropped.map((m) => `DELETE FROM ${ident(m)}`).join('; '));
    } catch (err) {
      if (!(err instanceof StoreError) || err.retryable || err.kind === 'configuration') throw err;
    }
    this.daysBuilt.clear();
    this.daysCheckedAt = Number.NEGATIVE_INFINITY;
    const [devs] = await this.client.query(`SHOW TAG VALUES FROM ${READINGS} WITH KEY = ${ident('device')}`);
    for (const d of rowsOf(devs?.series)) {
      const device = String(d.value);
      const where = deviceWhere(device);
      const [first, last] = await this.client.query(
        `SELECT * FROM ${READINGS} WHERE ${where} ORDER BY time ASC LIMIT 1; ` +
          `SELECT * FROM ${READINGS} WHERE ${where} ORDER BY time DESC LIMIT 1`,
      );
      const from = rowsOf(first?.series)[0]?.time;
      const to = rowsOf(last?.series)[0]?.time;
      if (typeof from === 'number' && typeof to === 'number') await this.recompute(device, { from, to });
    }
    const now = Date.now();
    const lines = this.dayZones.map((tz) => encodeLine(DAY_STATE, { tz }, { built: 1 }, now));
    lines.push(encodeLine(ROLLUP_VERSION_MEASUREMENT, {}, { version: ROLLUP_VERSION }, now));
    await this.client.write(lines.join('\n'));
    for (const z of this.dayZones) this.daysBuilt.add(z);
  }

  /** A strictly increasing marker time for this writer. */
  nextMarkerTs(): number {
    this.lastMarker = Math.max(Date.now(), this.lastMarker + 1);
    return this.lastMarker;
  }

  beginWrite(ts: number): void {
    this.inflight.add(ts);
  }

  endWrite(ts: number): void {
    this.inflight.delete(ts);
  }

  markerLine(deviceKey: string, range: DirtyRange, ts: number): string {
    return encodeLine(
      DIRTY,
      { device: deviceKey, writer: this.writerId },
      { from: range.from, to: range.to },
      ts,
    );
  }

  refresh(now: number): Promise<RollupRunResult> {
    const run = this.running.then(() => this.run(now));
    this.running = run.catch(() => undefined);
    return run;
  }

  /**
   * Drops markers and state points a day behind the cursor, at most hourly. Best effort: InfluxDB 3's
   * read-only v1 `/query` refuses DELETE, and old markers only cost disk there.
   */
  private async prune(cursor: number): Promise<void> {
    if (cursor - this.lastPrune < HOUR_MS) return;
    this.lastPrune = cursor;
    const before = cursor - 24 * HOUR_MS;
    try {
      await this.client.query(
        `DELETE FROM ${DIRTY} WHERE time < ${before}ms; DELETE FROM ${STATE} WHERE time < ${before}ms`,
      );
    } catch {
      // not supported by this server: markers stay
    }
  }

  private async run(now: number): Promise<RollupRunResult> {
    const started = Date.now();
    await this.ensureCurrent();
    await this.buildDayRollups();
    const [state] = await this.client.query(`SELECT last("cursor") FROM ${STATE}`);
    const cursor = rowsOf(state?.series)[0]?.last;
    const readFrom = typeof cursor === 'number' ? Math.max(0, cursor - MARKER_MARGIN_MS) : 0;
    const [markers] = await this.client.query(
      `SELECT "from", "to", "done", "device", "writer" FROM ${DIRTY} WHERE time >= ${readFrom}ms`,
    );
    const ranges = new Map<string, DirtyRange>();
    const keys: [string, number][] = [];
    /** The markers handled now, marked done in the database so that another process skips them too. */
    const handled: string[] = [];
    for (const m of rowsOf(markers?.series)) {
      const key = `${m.device}|${m.writer}|${m.time}`;
      if (this.done.has(key) || typeof m.from !== 'number' || typeof m.to !== 'number') continue;
      // Done by another process (the refreshes of several ingest processes take turns).
      if (m.done === 1 || m.done === true) {
        this.done.set(key, m.time as number);
        continue;
      }
      keys.push([key, m.time as number]);
      handled.push(
        encodeLine(
          DIRTY,
          { device: String(m.device), writer: String(m.writer) },
          { from: m.from, to: m.to, done: 1 },
          m.time as number,
        ),
      );
      const device = String(m.device);
      const r = ranges.get(device);
      if (!r) ranges.set(device, { from: m.from, to: m.to });
      else {
        r.from = Math.min(r.from, m.from);
        r.to = Math.max(r.to, m.to);
      }
    }
    let buckets = 0;
    for (const [device, range] of ranges) buckets += await this.recompute(device, range);
    // Rewritten in place (same series and time): the point keeps its range and gains `done`.
    await this.writeLines(handled);
    for (const [key, t] of keys) this.done.set(key, t);

    let newCursor = started;
    for (const t of this.inflight) newCursor = Math.min(newCursor, t - 1);
    for (const [key, t] of this.done) if (t < newCursor - MARKER_MARGIN_MS) this.done.delete(key);
    const watermark = fixedBucketStart(now, QUARTER_MS);
    await this.client.write(encodeLine(STATE, {}, { cursor: newCursor, watermark }, started));
    await this.prune(newCursor);
    return { buckets, watermark };
  }

  private async writeLines(lines: readonly string[]): Promise<void> {
    for (let i = 0; i < lines.length; i += this.batchLines) {
      const res = await this.client.write(lines.slice(i, i + this.batchLines).join('\n'));
      if (res.dropped > 0 || res.reason)
        throw new StoreError(`rollup write dropped ${res.dropped} points: ${res.reason}`, 'internal');
    }
  }

  /**
   * Each counter's baseline before `start`: the one kept with the last 15-minute rollup before it (exact,
   * jitter included), else the last raw reading (first refresh of that history).
   */
  private async seeds(device: string, start: number): Promise<Map<string, CounterPoint | null>> {
    const fields = COUNTER_NAMES.flatMap((c) => {
      const k = keysOf(c);
      return [`last(${ident(k.bv)}) AS ${ident(k.bv)}`, `last(${ident(k.bt)}) AS ${ident(k.bt)}`];
    });
    const [res] = await this.client.query(
      `SELECT ${fields.join(', ')} FROM ${ROLLUP_MEASUREMENT['15m']} WHERE ${deviceWhere(device, undefined, start)}`,
    );
    const row = rowsOf(res?.series)[0] ?? {};
    const out = new Map<string, CounterPoint | null>();
    const missing: string[] = [];
    for (const c of COUNTER_NAMES) {
      const k = keysOf(c);
      const value = row[k.bv];
      const ts = row[k.bt];
      if (typeof value === 'number' && typeof ts === 'number') out.set(c, { ts, value });
      else missing.push(c);
    }
    // At or before `start`: a reading on it closes the quarter before (`(start, end]`).
    for (const [c, p] of await lastBefore(this.client, device, missing, start + 1)) out.set(c, p);
    return out;
  }

  /**
   * Recomputes the device's 15m, 30m and 1h buckets covering the range — from the hour whose `(start, end]`
   * holds its first reading — and returns the 15-minute buckets written.
   */
  async recompute(device: string, range: DirtyRange): Promise<number> {
    const start = counterBucketStart(range.from, HOUR_MS);
    const [next] = await this.client.query(
      `SELECT * FROM ${READINGS} WHERE ${deviceWhere(device)} AND time > ${range.to}ms ORDER BY time ASC LIMIT 1`,
    );
    const nextTs = rowsOf(next?.series)[0]?.time;
    const last = Math.max(range.to, typeof nextTs === 'number' ? nextTs : range.to);
    const end = fixedBucketStart(last, HOUR_MS) + HOUR_MS;
    const baselines = await this.seeds(device, start);
    // Local days of each kept zone that the range touches: summed from the recomputed quarters, plus the
    // stored quarters of the edge days outside the range.
    const days = this.dayZones.map((tz) => {
      const c = calendarBuckets(start, end, 'day', tz);
      return { tz, days: new DayEnergy(c.starts, c.end) };
    });
    let written = 0;
    // The next window is read and computed while the previous one's points are being written.
    let writing: Promise<void> = Promise.resolve();
    try {
      for (let a = start; a < end; a += WINDOW_MS) {
        const b = Math.min(end, a + WINDOW_MS);
        // The reading on `b` too: it closes the window's last quarter.
        const rows = await readRawRange(this.client, device, a, b + 1, []);
        const quarters = quarterBuckets(rows, a, b, baselines);
        for (const q of quarters.values()) for (const d of days) d.days.addQuarter(q);
        const lines: string[] = [];
        const push = (measurement: string, bs: Iterable<RollupBucket>, withEvents: boolean) => {
          for (const bucket of bs) {
            const line = bucketLine(measurement, device, bucket, withEvents);
            if (line) lines.push(line);
          }
        };
        push(ROLLUP_MEASUREMENT['15m'], quarters.values(), true);
        push(ROLLUP_MEASUREMENT['30m'], coarsen(quarters.values(), 30 * 60_000).values(), false);
        push(ROLLUP_MEASUREMENT['1h'], coarsen(quarters.values(), HOUR_MS).values(), false);
        await writing;
        writing = this.writeLines(lines);
        written += quarters.size;
      }
    } finally {
      // Never leave a write running unobserved, even when a read failed.
      await writing;
    }
    for (const { tz, days: acc } of days) {
      await this.addStoredQuarters(device, acc.starts[0]!, start, acc);
      await this.addStoredQuarters(device, end, acc.end, acc);
      await this.writeLines(acc.lines(ROLLUP_DAY, device, tz));
    }
    return written;
  }
}
