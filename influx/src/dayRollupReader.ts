/** Reads of the day rollups (`rollup_1d`), merged across devices that ask in the same turn. */
import type { InfluxClient } from './client.ts';
import { literal } from './lineProtocol.ts';
import { ROLLUP_DAY, type Row, rowsOf } from './schema.ts';

/** Which zones have day rollups (`rollup_1d`) ready to answer from, and the reads of them. */
export interface DayRollups {
  dayRollupsReady(tz: string): Promise<boolean>;
  readonly reader: DayRollupReader;
}

/** Devices per InfluxQL statement when concurrent day-rollup reads are merged. */
const DEVICES_PER_STATEMENT = 100;

interface PendingDayRead {
  fields: string;
  from: number;
  to: number;
  tz: string;
  waiters: Map<string, { resolve(rows: Row[]): void; reject(err: unknown): void }[]>;
}

/**
 * Reads of `rollup_1d`. Reads of the same fields, range and zone issued in the same turn of the event
 * loop (a comparison of several devices asks for them together) are merged into one request with one
 * `GROUP BY "device"` statement per hundred devices, instead of a round trip per device.
 */
export class DayRollupReader {
  private readonly pending = new Map<string, PendingDayRead>();

  constructor(private readonly client: InfluxClient) {}

  read(deviceKey: string, fields: readonly string[], from: number, to: number, tz: string): Promise<Row[]> {
    const f = fields.join(', ');
    const key = `${f}|${from}|${to}|${tz}`;
    let batch = this.pending.get(key);
    if (!batch) {
      batch = { fields: f, from, to, tz, waiters: new Map() };
      this.pending.set(key, batch);
      setImmediate(() => {
        this.pending.delete(key);
        void this.flush(batch!);
      });
    }
    const b = batch;
    return new Promise<Row[]>((resolve, reject) => {
      const list = b.waiters.get(deviceKey);
      if (list) list.push({ resolve, reject });
      else b.waiters.set(deviceKey, [{ resolve, reject }]);
    });
  }

  private async flush(b: PendingDayRead): Promise<void> {
    const devices = [...b.waiters.keys()];
    const statements: string[] = [];
    for (let i = 0; i < devices.length; i += DEVICES_PER_STATEMENT) {
      const which = devices
        .slice(i, i + DEVICES_PER_STATEMENT)
        .map((d) => `"device" = ${literal(d)}`)
        .join(' OR ');
      statements.push(
        `SELECT ${b.fields} FROM ${ROLLUP_DAY} WHERE (${which}) AND "tz" = ${literal(b.tz)} AND time >= ${b.from}ms AND time < ${b.to}ms GROUP BY "device"`,
      );
    }
    try {
      const results = await this.client.query(statements.join('; '));
      const byDevice = new Map<string, Row[]>();
      for (const r of results) {
        for (const row of rowsOf(r.series)) {
          const d = String(row.device);
          const rows = byDevice.get(d);
          if (rows) rows.push(row);
          else byDevice.set(d, [row]);
        }
      }
      for (const [d, ws] of b.waiters) for (const w of ws) w.resolve(byDevice.get(d) ?? []);
    } catch (err) {
      for (const ws of b.waiters.values()) for (const w of ws) w.reject(err);
    }
  }
}
