/**
 * What each device type measures, from core's device-type rule and parameter catalogue: a three-phase
 * meter its phases' power, voltage, current, power factor, energy and frequency (and their totals), a
 * single-phase meter the same for L1 only, a PV installation its power, energy and DC strings, an energy
 * meter its power and energy, a thermostat its temperatures and relay. Pickers offer these per device.
 */
import { COMBINED_PARAMS, type DetailsPage, detailsPageFor, PARAMS, type ParamGroup } from '@kilowatch/core';

const METER: readonly ParamGroup[] = [
  'power',
  'voltage',
  'current',
  'powerFactor',
  'activeEnergy',
  'reactiveEnergy',
  'frequency',
  'balance',
];

const GROUPS: Record<DetailsPage, readonly ParamGroup[]> = {
  'three-phase': METER,
  'single-phase': METER,
  solar: ['power', 'voltage', 'current', 'activeEnergy', 'frequency', 'dc'],
  energy: ['power', 'activeEnergy', 'reactiveEnergy', 'balance'],
  thermostat: ['temperature', 'state'],
};

/** Stored and phases-combined parameter names a device of this type measures, in catalogue order. */
export function measuredParams(typeCode: number, phases: 1 | 3 = 3): Set<string> {
  const page = detailsPageFor(typeCode, phases);
  const groups = new Set(GROUPS[page]);
  const onePhase = page === 'single-phase';
  const out = new Set<string>();
  for (const p of PARAMS) {
    if (!groups.has(p.group)) continue;
    // A single-phase meter has only L1, and no three-phase totals; a thermostat raises no meter alarm.
    if (onePhase && ((p.phase !== undefined && p.phase !== 1) || p.name.includes('3phases'))) continue;
    if (page === 'thermostat' && p.name === 'alarm') continue;
    out.add(p.name);
  }
  // The phases combined (`eai` for `eai1..3`), as the heatmap offers them: for one phase, that phase's total.
  for (const c of COMBINED_PARAMS) if (groups.has(c.group) && c.of.some((o) => out.has(o))) out.add(c.name);
  return out;
}

/** `params` (in their order) narrowed to what the device type measures, keeping those already chosen. */
export function paramsForDevice(
  params: readonly string[],
  device: { typeCode: number; phases?: 1 | 3 } | undefined,
  chosen: readonly (string | null)[] = [],
): string[] {
  if (!device) return [...params];
  const measured = measuredParams(device.typeCode, device.phases ?? 3);
  return params.filter((p) => measured.has(p) || chosen.includes(p));
}
