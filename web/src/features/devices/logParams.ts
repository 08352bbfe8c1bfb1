/** The data log's parameter choices: the device's own parameters first, a default set it reports. */
import { PARAM_NAMES } from '@kilowatch/core';

/** Voltages and powers per phase: what a three-phase meter's log shows first. */
export const DEFAULT_LOG_PARAMS = ['vave1', 'vave2', 'vave3', 'pave1', 'pave2', 'pave3'];

const order = new Map<string, number>(PARAM_NAMES.map((p, i) => [p, i]));

/** The catalogue parameters among a device's newest values, in catalogue order. */
export function ownParams(values: Record<string, unknown> | undefined): string[] {
  return Object.keys(values ?? {})
    .filter((p) => order.has(p))
    .sort((a, b) => order.get(a)! - order.get(b)!);
}

/** The parameters chosen when a device is picked: the default set it reports, else its first six. */
export function defaultParamsFor(own: readonly string[]): string[] {
  if (own.length === 0) return DEFAULT_LOG_PARAMS;
  const usual = DEFAULT_LOG_PARAMS.filter((p) => own.includes(p));
  return usual.length > 0 ? usual : own.slice(0, 6);
}

/** Select options: the device's parameters, then the rest of the catalogue. */
export function paramOptions(own: readonly string[], labels: { own: string; other: string }) {
  if (own.length === 0) return [...PARAM_NAMES];
  const rest = PARAM_NAMES.filter((p) => !own.includes(p));
  return [
    { group: labels.own, items: [...own] },
    { group: labels.other, items: rest },
  ];
}
