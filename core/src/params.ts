/**
 * The parameter catalogue (docs/domain.md §Parameters): every name a meter may report, its unit, kind and
 * plausible range. Ingest validates against it, the stores lay out their columns from it, the API and
 * the client label charts with it.
 */

export type ParamKind = 'gauge' | 'counter' | 'state';
export type ParamGroup =
  | 'power'
  | 'voltage'
  | 'current'
  | 'powerFactor'
  | 'activeEnergy'
  | 'reactiveEnergy'
  | 'frequency'
  | 'dc'
  | 'temperature'
  | 'state'
  | 'balance';

export interface ParamDef {
  readonly name: string;
  readonly unit: string;
  readonly kind: ParamKind;
  readonly group: ParamGroup;
  /** Plausible range; a reading outside it is rejected with the reason. */
  readonly min: number;
  readonly max: number;
  /** 1..3 for per-phase parameters. */
  readonly phase?: 1 | 2 | 3;
  /** Stem shared by the phases (`vave` for `vave1..3`). */
  readonly stem?: string;
}

/** A name without its phase digit: all phases combined (docs/spec.md "summed" view). */
export interface CombinedParamDef {
  readonly name: string;
  readonly unit: string;
  readonly kind: ParamKind;
  readonly group: ParamGroup;
  /** Powers, currents and energies add up; voltages and power factors are averaged. */
  readonly combine: 'sum' | 'mean';
  readonly of: readonly string[];
}

const PHASES = [1, 2, 3] as const;

/** Largest power a single phase is taken to carry (docs/domain.md: 100 kW per phase). */
export const MAX_PHASE_POWER_W = 100_000;
const COUNTER_MAX = 1e9;

function phased(
  stems: readonly string[],
  def: Omit<ParamDef, 'name' | 'phase' | 'stem'>,
  phases: readonly (1 | 2 | 3)[] = PHASES,
): ParamDef[] {
  return stems.flatMap((stem) => phases.map((phase) => ({ ...def, name: `${stem}${phase}`, phase, stem })));
}

export const PARAMS: readonly ParamDef[] = [
  ...phased(['pave', 'pmax', 'pmin'], {
    unit: 'W',
    kind: 'gauge',
    group: 'power',
    min: -MAX_PHASE_POWER_W,
    max: MAX_PHASE_POWER_W,
  }),
  ...phased(['vave', 'vmax', 'vmin'], { unit: 'V', kind: 'gauge', group: 'voltage', min: 0, max: 500 }),
  ...phased(['iave', 'imax', 'imin'], { unit: 'A', kind: 'gauge', group: 'current', min: -1000, max: 1000 }),
  ...phased(['pfave', 'pfmax', 'pfmin'], { unit: '', kind: 'gauge', group: 'powerFactor', min: -1, max: 1 }),
  ...phased(['eai', 'eae'], {
    unit: 'kWh',
    kind: 'counter',
    group: 'activeEnergy',
    min: 0,
    max: COUNTER_MAX,
  }),
  ...phased(['eri', 'ere'], {
    unit: 'kvarh',
    kind: 'counter',
    group: 'reactiveEnergy',
    min: 0,
    max: COUNTER_MAX,
  }),
  {
    name: 'energy3phases_import',
    unit: 'kWh',
    kind: 'counter',
    group: 'activeEnergy',
    min: 0,
    max: COUNTER_MAX,
  },
  {
    name: 'energy3phases_export',
    unit: 'kWh',
    kind: 'counter',
    group: 'activeEnergy',
    min: 0,
    max: COUNTER_MAX,
  },
  {
    name: 'renergy3phases_import',
    unit: 'kvarh',
    kind: 'counter',
    group: 'reactiveEnergy',
    min: 0,
    max: COUNTER_MAX,
  },
  {
    name: 'renergy3phases_export',
    unit: 'kvarh',
    kind: 'counter',
    group: 'reactiveEnergy',
    min: 0,
    max: COUNTER_MAX,
  },
  {
    name: 'energy3phases',
    unit: 'kWh',
    kind: 'counter',
    group: 'activeEnergy',
    min: -COUNTER_MAX,
    max: COUNTER_MAX,
  },
  {
    name: 'renergy3phases',
    unit: 'kvarh',
    kind: 'counter',
    group: 'reactiveEnergy',
    min: -COUNTER_MAX,
    max: COUNTER_MAX,
  },
  {
    name: 'power3phases',
    unit: 'W',
    kind: 'gauge',
    group: 'power',
    min: -3 * MAX_PHASE_POWER_W,
    max: 3 * MAX_PHASE_POWER_W,
  },
  { name: 'frq1', unit: 'Hz', kind: 'gauge', group: 'frequency', min: 40, max: 70 },
  { name: 'vdc1', unit: 'V', kind: 'gauge', group: 'dc', min: 0, max: 1500 },
  { name: 'vdc2', unit: 'V', kind: 'gauge', group: 'dc', min: 0, max: 1500 },
  { name: 'vdc3', unit: 'V', kind: 'gauge', group: 'dc', min: 0, max: 1500 },
  { name: 'idc1', unit: 'A', kind: 'gauge', group: 'dc', min: -100, max: 100 },
  { name: 'idc2', unit: 'A', kind: 'gauge', group: 'dc', min: -100, max: 100 },
  { name: 'tempmain', unit: '°C', kind: 'gauge', group: 'temperature', min: -50, max: 100 },
  { name: 'tempset', unit: '°C', kind: 'gauge', group: 'temperature', min: -50, max: 100 },
  { name: 'rel1', unit: '', kind: 'state', group: 'state', min: 0, max: 1 },
  { name: 'alarm', unit: '', kind: 'state', group: 'state', min: 0, max: 65_535 },
  // A meter may report the balance itself; otherwise it is derived hourly from the counters.
  { name: 'balance', unit: 'kWh', kind: 'gauge', group: 'balance', min: -COUNTER_MAX, max: COUNTER_MAX },
];

const SUMMED_STEMS = new Set(['pave', 'pmax', 'pmin', 'iave', 'imax', 'imin', 'eai', 'eae', 'eri', 'ere']);

export const COMBINED_PARAMS: readonly CombinedParamDef[] = [
  ...new Set(PARAMS.filter((p) => p.stem !== undefined).map((p) => p.stem as string)),
].map((stem) => {
  const first = PARAMS.find((p) => p.stem === stem)!;
  return {
    name: stem,
    unit: first.unit,
    kind: first.kind,
    group: first.group,
    combine: SUMMED_STEMS.has(stem) ? 'sum' : 'mean',
    of: PHASES.map((n) => `${stem}${n}`),
  };
});

const byName = new Map<string, ParamDef>(PARAMS.map((p) => [p.name, p]));
const combinedByName = new Map<string, CombinedParamDef>(COMBINED_PARAMS.map((p) => [p.name, p]));

/** Names of every stored parameter, in catalogue order (stores lay out columns in this order). */
export const PARAM_NAMES: readonly string[] = PARAMS.map((p) => p.name);
export const COUNTER_NAMES: readonly string[] = PARAMS.filter((p) => p.kind === 'counter').map((p) => p.name);
export const GAUGE_NAMES: readonly string[] = PARAMS.filter((p) => p.kind !== 'counter').map((p) => p.name);

export function paramDef(name: string): ParamDef | undefined {
  return byName.get(name);
}

export function combinedParamDef(name: string): CombinedParamDef | undefined {
  return combinedByName.get(name);
}

export function isStoredParam(name: string): boolean {
  return byName.has(name);
}

/** A stored name or an all-phases name (`vave`, `eai`, ...). */
export function isQueryableParam(name: string): boolean {
  return byName.has(name) || combinedByName.has(name);
}

export function unitOf(name: string): string | undefined {
  return byName.get(name)?.unit ?? combinedByName.get(name)?.unit;
}

export type RangeCheck =
  | { ok: true }
  | { ok: false; reason: 'unknown-parameter' | 'out-of-range' | 'not-finite' };

const IN_RANGE: RangeCheck = { ok: true };

/** Checks one value against the catalogue. */
export function checkValue(name: string, value: number): RangeCheck {
  const def = byName.get(name);
  if (!def) return { ok: false, reason: 'unknown-parameter' };
  if (!Number.isFinite(value)) return { ok: false, reason: 'not-finite' };
  if (value < def.min || value > def.max) return { ok: false, reason: 'out-of-range' };
  return IN_RANGE;
}
