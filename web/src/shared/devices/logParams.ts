/** The data log's parameter choices: the parameters the device reports, by human name, grouped. */
import { PARAM_NAMES } from '@kilowatch/core';
import type { MessageId } from '../../i18n/i18n.ts';
import { paramSelectData } from './paramNames.ts';

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

/**
 * Select options, grouped (energy, power, voltage, …) with human names and units: only what the device
 * reports, or the whole catalogue until its newest reading is known (and for a device without readings).
 */
export function paramOptions(
  t: (id: MessageId, values?: Record<string, unknown>) => string,
  own: readonly string[],
  chosen: readonly string[] = [],
) {
  const offered = own.length === 0 ? PARAM_NAMES : [...own, ...chosen.filter((p) => !own.includes(p))];
  return paramSelectData(t, offered);
}
