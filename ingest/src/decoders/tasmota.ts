/**
 * Tasmota energy monitors: `tele/<deviceKey>/SENSOR` with an `ENERGY` object. Single-phase devices
 * report numbers, multi-phase ones (PZEM-004T ×3, SDM630, ...) arrays with one entry per phase; `Total`
 * is the sum unless `SetOption129 1` makes it per phase. `Time` is the device's local wall time.
 */
import { DEFAULT_TIMEZONE, type Reading, zonedTimeToUtc } from '@kilowatch/core';
import * as v from 'valibot';
import { schemaRejection } from './native.ts';
import { type Decoded, Rejection } from './types.ts';
import { assertValidReading } from './validate.ts';

const PerPhase = v.union([v.number(), v.pipe(v.array(v.number()), v.minLength(1), v.maxLength(3))]);

/** Known ENERGY fields are type-checked; the many others Tasmota adds are ignored. */
export const TasmotaEnergySchema = v.looseObject({
  Total: v.optional(PerPhase),
  ExportActive: v.optional(PerPhase),
  Today: v.optional(PerPhase),
  Yesterday: v.optional(PerPhase),
  Power: v.optional(PerPhase),
  Voltage: v.optional(PerPhase),
  Current: v.optional(PerPhase),
  Factor: v.optional(PerPhase),
  Frequency: v.optional(PerPhase),
});

export const TasmotaSensorSchema = v.looseObject({
  Time: v.pipe(
    v.string(),
    v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/, 'Time must be YYYY-MM-DDTHH:mm:ss'),
  ),
  ENERGY: v.optional(TasmotaEnergySchema),
});
export type TasmotaSensor = v.InferOutput<typeof TasmotaSensorSchema>;

const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** Tasmota's default `TimeStyle` is local time without an offset; an explicit offset is honoured. */
export function tasmotaTime(time: string, tz: string): number {
  const m = LOCAL_TIME.exec(time);
  if (!m) {
    const ts = Date.parse(time);
    if (Number.isNaN(ts)) throw new Rejection('invalid-payload', `Time "${time}" is not a valid time`);
    return ts;
  }
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  return zonedTimeToUtc(y, mo, d, h, mi, s, tz);
}

const asList = (x: number | number[]): number[] => (Array.isArray(x) ? x : [x]);

export function decodeTasmotaSensor(deviceKey: string, json: unknown, now: number, tz?: string): Decoded {
  const parsed = v.safeParse(TasmotaSensorSchema, json);
  if (!parsed.success) throw schemaRejection(parsed.issues);
  const energy = parsed.output.ENERGY;
  if (!energy) return { kind: 'ignored', deviceKey, why: 'SENSOR frame without ENERGY' };

  const ts = tasmotaTime(parsed.output.Time, tz ?? DEFAULT_TIMEZONE);
  const threePhase = [energy.Voltage, energy.Current, energy.Power].some(
    (x) => Array.isArray(x) && x.length > 1,
  );
  const values: Record<string, number> = {};
  const perPhase = (field: number | number[] | undefined, stem: string) => {
    if (field === undefined) return;
    asList(field).forEach((value, i) => {
      values[`${stem}${i + 1}`] = value;
    });
  };
  perPhase(energy.Voltage, 'vave');
  perPhase(energy.Current, 'iave');
  perPhase(energy.Power, 'pave');
  perPhase(energy.Factor, 'pfave');
  if (energy.Frequency !== undefined) values.frq1 = asList(energy.Frequency)[0] as number;
  const counter = (field: number | number[] | undefined, stem: string, total: string) => {
    if (field === undefined) return;
    if (Array.isArray(field) && field.length > 1) perPhase(field, stem);
    else if (threePhase) values[total] = asList(field)[0] as number;
    else values[`${stem}1`] = asList(field)[0] as number;
  };
  counter(energy.Total, 'eai', 'energy3phases_import');
  counter(energy.ExportActive, 'eae', 'energy3phases_export');
  if (Object.keys(values).length === 0)
    return { kind: 'ignored', deviceKey, why: 'ENERGY without known fields' };

  const reading: Reading = { deviceKey, ts, values };
  assertValidReading(reading, now);
  return { kind: 'readings', format: 'tasmota', deviceKey, readings: [reading] };
}
