/**
 * Shelly Gen2/Gen3 energy meters over MQTT RPC notifications: `<deviceKey>/events/rpc` carrying
 * `NotifyStatus` (changed fields only) or `NotifyFullStatus`. `em:0` is a three-phase meter (Pro 3EM,
 * phases a/b/c), `em1:N` a single channel (EM, Pro EM) mapped to phase N+1; energies are in Wh.
 */
import type { Reading } from '@kilowatch/core';
import * as v from 'valibot';
import { schemaRejection } from './native.ts';
import { type Decoded, Rejection } from './types.ts';
import { assertValidReading } from './validate.ts';

export const ShellyRpcSchema = v.looseObject({
  src: v.optional(v.string()),
  dst: v.optional(v.string()),
  method: v.string(),
  params: v.optional(v.looseObject({ ts: v.optional(v.pipe(v.number(), v.minValue(0))) })),
});

const STATUS_METHODS = new Set(['NotifyStatus', 'NotifyFullStatus']);
const PHASES = ['a', 'b', 'c'] as const;
const WH_PER_KWH = 1000;

type Component = Record<string, unknown>;

/** A mapped field must be a number (null means "not measured" and is skipped). */
function num(component: Component, field: string, where: string): number | undefined {
  const x = component[field];
  if (x === undefined || x === null) return undefined;
  if (typeof x !== 'number') throw new Rejection('invalid-payload', `${where}.${field} must be a number`);
  return x;
}

function put(values: Record<string, number>, name: string, x: number | undefined, scale = 1): void {
  if (x !== undefined) values[name] = x / scale;
}

function fromEm(c: Component, values: Record<string, number>, where: string): void {
  PHASES.forEach((p, i) => {
    const n = i + 1;
    put(values, `vave${n}`, num(c, `${p}_voltage`, where));
    put(values, `iave${n}`, num(c, `${p}_current`, where));
    put(values, `pave${n}`, num(c, `${p}_act_power`, where));
    put(values, `pfave${n}`, num(c, `${p}_pf`, where));
  });
  put(values, 'frq1', num(c, 'a_freq', where));
  put(values, 'power3phases', num(c, 'total_act_power', where));
}

function fromEmData(c: Component, values: Record<string, number>, where: string): void {
  PHASES.forEach((p, i) => {
    const n = i + 1;
    put(values, `eai${n}`, num(c, `${p}_total_act_energy`, where), WH_PER_KWH);
    put(values, `eae${n}`, num(c, `${p}_total_act_ret_energy`, where), WH_PER_KWH);
  });
  put(values, 'energy3phases_import', num(c, 'total_act', where), WH_PER_KWH);
  put(values, 'energy3phases_export', num(c, 'total_act_ret', where), WH_PER_KWH);
}

function fromEm1(c: Component, n: number, values: Record<string, number>, where: string): void {
  put(values, `vave${n}`, num(c, 'voltage', where));
  put(values, `iave${n}`, num(c, 'current', where));
  put(values, `pave${n}`, num(c, 'act_power', where));
  put(values, `pfave${n}`, num(c, 'pf', where));
  if (n === 1) put(values, 'frq1', num(c, 'freq', where));
}

function fromEm1Data(c: Component, n: number, values: Record<string, number>, where: string): void {
  put(values, `eai${n}`, num(c, 'total_act_energy', where), WH_PER_KWH);
  put(values, `eae${n}`, num(c, 'total_act_ret_energy', where), WH_PER_KWH);
}

const COMPONENT = /^(em|emdata|em1|em1data):(\d+)$/;

export function decodeShellyRpc(deviceKey: string, json: unknown, now: number): Decoded {
  const parsed = v.safeParse(ShellyRpcSchema, json);
  if (!parsed.success) throw schemaRejection(parsed.issues);
  const { method, params } = parsed.output;
  if (!STATUS_METHODS.has(method)) return { kind: 'ignored', deviceKey, why: `RPC ${method}` };
  if (!params) throw new Rejection('invalid-payload', `${method} without params`);

  const values: Record<string, number> = {};
  for (const [key, component] of Object.entries(params)) {
    const m = COMPONENT.exec(key);
    if (!m) continue;
    if (typeof component !== 'object' || component === null || Array.isArray(component)) {
      throw new Rejection('invalid-payload', `params.${key} must be an object`);
    }
    const [, type, idText] = m;
    const id = Number(idText);
    const c = component as Component;
    const where = `params.${key}`;
    if (type === 'em' || type === 'emdata') {
      if (id !== 0) throw new Rejection('invalid-payload', `${key}: only em:0/emdata:0 are supported`);
      (type === 'em' ? fromEm : fromEmData)(c, values, where);
    } else {
      if (id > 2) throw new Rejection('invalid-payload', `${key}: channel ${id} has no phase`);
      (type === 'em1' ? fromEm1 : fromEm1Data)(c, id + 1, values, where);
    }
  }
  if (Object.keys(values).length === 0)
    return { kind: 'ignored', deviceKey, why: `${method} without metering` };
  if (params.ts === undefined) throw new Rejection('invalid-payload', 'params.ts is missing');

  const reading: Reading = { deviceKey, ts: Math.round(params.ts * 1000), values };
  assertValidReading(reading, now);
  return { kind: 'readings', format: 'shelly', deviceKey, readings: [reading] };
}
