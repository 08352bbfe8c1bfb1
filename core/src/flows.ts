/**
 * Where a location's energy comes from and where it goes (docs/domain.md §Energy flows).
 *
 * Each device of a location has a role; the energies of one step (an hour or a quarter, the finest the
 * store keeps) are summed per role, allocated to flows (production serves the home first, then the
 * battery, then the grid; the battery serves the home before the grid does), and the steps of an
 * interval (a local day, a month, a billing period) are summed. Pure arithmetic on kWh: the API reads
 * the counters, this module decides what they mean.
 */

export const DEVICE_ROLES = ['grid', 'production', 'storage', 'consumer'] as const;
/**
 * `grid`: the connection meter (import = `eai`, export = `eae`); `production`: a PV inverter (`eae`, the
 * energy it feeds out); `storage`: a battery (charge = `eai`, discharge = `eae`); `consumer`: a sub-meter
 * (`eai`).
 */
export type DeviceRole = (typeof DEVICE_ROLES)[number];

export function isDeviceRole(value: unknown): value is DeviceRole {
  return typeof value === 'string' && (DEVICE_ROLES as readonly string[]).includes(value);
}

/**
 * The role a device of this type takes when nobody chose one: a solar installation (10) produces, the
 * energy meters (13, 16) measure the grid connection, every other type is a sub-meter.
 */
export function defaultRole(typeCode: number): DeviceRole {
  if (typeCode === 10) return 'production';
  if (typeCode === 13 || typeCode === 16) return 'grid';
  return 'consumer';
}

/**
 * The roles of a location's devices: a chosen role stands; a device without one takes its type's default,
 * except that a location has one grid meter, so an energy meter after the first (by id) that would be
 * `grid` is a sub-meter. Two devices *chosen* as `grid` are refused where the role is set, not here.
 */
export function locationRoles(
  devices: readonly { id: number; typeCode: number; role?: DeviceRole | null }[],
): Map<number, DeviceRole> {
  const roles = new Map<number, DeviceRole>();
  let grid = devices.some((d) => d.role === 'grid');
  for (const d of [...devices].sort((a, b) => a.id - b.id)) {
    if (d.role) {
      roles.set(d.id, d.role);
      continue;
    }
    let role = defaultRole(d.typeCode);
    if (role === 'grid') {
      if (grid) role = 'consumer';
      grid = true;
    }
    roles.set(d.id, role);
  }
  return roles;
}

/**
 * One step's energies in kWh, summed over the devices of each role. `null`: unknown (the location has no
 * grid meter, or the store has no counter for the step); a role the location has no device of is 0.
 */
export interface FlowStep {
  import: number | null;
  export: number | null;
  production: number | null;
  charge: number | null;
  discharge: number | null;
  subMeters: number | null;
}

/** Where one step's energy went, in kWh, every flow ≥ 0. */
export interface FlowAllocation {
  productionToHome: number;
  productionToBattery: number;
  productionToGrid: number;
  batteryToHome: number;
  batteryToGrid: number;
  gridToHome: number;
  gridToBattery: number;
}

export const FLOW_KEYS = [
  'productionToHome',
  'productionToBattery',
  'productionToGrid',
  'batteryToHome',
  'batteryToGrid',
  'gridToHome',
  'gridToBattery',
] as const satisfies readonly (keyof FlowAllocation)[];

const zeroAllocation = (): FlowAllocation => ({
  productionToHome: 0,
  productionToBattery: 0,
  productionToGrid: 0,
  batteryToHome: 0,
  batteryToGrid: 0,
  gridToHome: 0,
  gridToBattery: 0,
});

/** Home consumption H = I + P − E − C + D, or null when any part is unknown. */
export function homeConsumption(s: FlowStep): number | null {
  if (
    s.import === null ||
    s.export === null ||
    s.production === null ||
    s.charge === null ||
    s.discharge === null
  )
    return null;
  return s.import + s.production - s.export - s.charge + s.discharge;
}

/**
 * One step's flows. Within a step, import and export net against each other, and so do charge and
 * discharge (a step is the finest the store keeps: what swung back and forth inside it is not known).
 * A home consumption below zero (meters that disagree) is allocated as zero: no flow is ever negative.
 * Null when the home consumption is unknown.
 */
export function allocateStep(s: FlowStep): FlowAllocation | null {
  const home = homeConsumption(s);
  if (home === null) return null;
  const P = Math.max(0, s.production ?? 0);
  const battery = (s.discharge ?? 0) - (s.charge ?? 0);
  const charge = Math.max(0, -battery);
  const discharge = Math.max(0, battery);
  const H = Math.max(0, home);
  const a = zeroAllocation();
  a.productionToHome = Math.min(P, H);
  a.productionToBattery = Math.min(P - a.productionToHome, charge);
  a.batteryToHome = Math.min(discharge, H - a.productionToHome);
  a.gridToHome = H - a.productionToHome - a.batteryToHome;
  a.gridToBattery = charge - a.productionToBattery;
  // What is left of production and discharge goes out: with consistent meters it is the net export.
  a.productionToGrid = P - a.productionToHome - a.productionToBattery;
  a.batteryToGrid = discharge - a.batteryToHome;
  return a;
}

/** The energies of an interval and what follows from them; `null` where undefined. */
export interface FlowSummary extends FlowStep {
  /** H = I + P − E − C + D. */
  consumption: number | null;
  /** H − S; below zero the sub-meters read more than the home used (see `inconsistent`). */
  untracked: number | null;
  /** (P − E) / P, within 0–1; null without production. */
  selfConsumption: number | null;
  /** 1 − I / H, within 0–1; null without consumption. */
  selfSufficiency: number | null;
  /** The sums of the steps' allocations; null when no step's was known. */
  flows: FlowAllocation | null;
  /** True when the sub-meters read more than the home used, or the home used less than nothing. */
  inconsistent: boolean;
}

const share = (value: number): number => Math.min(1, Math.max(0, value));

/** Rounding noise of summed kWh (a thousandth of a watt-hour) is not an inconsistency. */
const EPSILON_KWH = 1e-6;

function addKnown(a: number | null, b: number | null): number | null {
  if (b === null) return a;
  return (a ?? 0) + b;
}

/**
 * Sums steps into one interval: each energy is the sum of its known steps (null when none is known), the
 * flows the sum of each step's allocation. What follows from the home consumption (untracked, the shares)
 * is taken over the steps whose home consumption is known, so a step without the grid meter's reading
 * shifts no share.
 */
export function summarizeFlows(steps: readonly FlowStep[]): FlowSummary {
  const sum: FlowStep = {
    import: null,
    export: null,
    production: null,
    charge: null,
    discharge: null,
    subMeters: null,
  };
  // Over the steps whose home consumption is known.
  let consumption: number | null = null;
  let known = { import: 0, export: 0, production: 0, subMeters: null as number | null };
  let flows: FlowAllocation | null = null;
  for (const s of steps) {
    sum.import = addKnown(sum.import, s.import);
    sum.export = addKnown(sum.export, s.export);
    sum.production = addKnown(sum.production, s.production);
    sum.charge = addKnown(sum.charge, s.charge);
    sum.discharge = addKnown(sum.discharge, s.discharge);
    sum.subMeters = addKnown(sum.subMeters, s.subMeters);
    const home = homeConsumption(s);
    const a = allocateStep(s);
    if (home === null || a === null) continue;
    consumption = (consumption ?? 0) + home;
    known = {
      import: known.import + s.import!,
      export: known.export + s.export!,
      production: known.production + s.production!,
      subMeters: addKnown(known.subMeters, s.subMeters),
    };
    flows = flows ?? zeroAllocation();
    for (const k of FLOW_KEYS) flows[k] += a[k];
  }
  const untracked = consumption !== null && known.subMeters !== null ? consumption - known.subMeters : null;
  const P = known.production;
  const selfConsumption = consumption !== null && P > 0 ? share((P - known.export) / P) : null;
  const selfSufficiency =
    consumption !== null && consumption > 0 ? share(1 - known.import / consumption) : null;
  const inconsistent =
    (untracked !== null && untracked < -EPSILON_KWH) || (consumption !== null && consumption < -EPSILON_KWH);
  return { ...sum, consumption, untracked, selfConsumption, selfSufficiency, flows, inconsistent };
}

/**
 * Groups fine steps (by their start instants, ascending) into intervals (their starts, ascending, and the
 * end of the last) and summarizes each. A step belongs to the interval its start falls in; steps outside
 * `[intervalStarts[0], end)` are left out.
 */
export function flowsByInterval(
  stepStarts: readonly number[],
  steps: readonly FlowStep[],
  intervals: { starts: readonly number[]; end: number },
): FlowSummary[] {
  const groups: FlowStep[][] = intervals.starts.map(() => []);
  let k = 0;
  for (let i = 0; i < stepStarts.length; i++) {
    const t = stepStarts[i]!;
    if (t < (intervals.starts[0] ?? Number.POSITIVE_INFINITY) || t >= intervals.end) continue;
    while (k + 1 < intervals.starts.length && t >= intervals.starts[k + 1]!) k++;
    groups[k]!.push(steps[i]!);
  }
  return groups.map(summarizeFlows);
}

/** Steps as columns (one value per step): what `flowSeries` reads without an object per step. */
export type FlowColumns = Record<keyof FlowStep, readonly (number | null)[]>;

/** Per-interval columns of `FlowSummary`'s fields, as `flowsByInterval` would give them one by one. */
export interface FlowSeries {
  import: (number | null)[];
  export: (number | null)[];
  production: (number | null)[];
  charge: (number | null)[];
  discharge: (number | null)[];
  subMeters: (number | null)[];
  consumption: (number | null)[];
  untracked: (number | null)[];
  selfConsumption: (number | null)[];
  selfSufficiency: (number | null)[];
  flows: Record<keyof FlowAllocation, (number | null)[]>;
  inconsistent: boolean[];
}

const STEP_KEYS = ['import', 'export', 'production', 'charge', 'discharge', 'subMeters'] as const;

/**
 * `flowsByInterval` for long series: the same numbers, column by column, with no object per step or per
 * interval (a year of quarters is 35,040 of each). `steps` holds one column per energy, aligned with
 * `stepStarts` (ascending).
 */
export function flowSeries(
  stepStarts: readonly number[],
  steps: FlowColumns,
  intervals: { starts: readonly number[]; end: number },
): FlowSeries {
  const n = intervals.starts.length;
  const col = () => new Float64Array(n);
  // Sums of each energy's known values, and how many were known.
  const sums = STEP_KEYS.map(col);
  const seen = STEP_KEYS.map(() => new Uint32Array(n));
  // Over the steps whose home consumption is known.
  const home = col();
  const homeSteps = new Uint32Array(n);
  const kImport = col();
  const kExport = col();
  const kProduction = col();
  const kSub = col();
  const kSubSeen = new Uint32Array(n);
  const flows = FLOW_KEYS.map(col);
  const first = intervals.starts[0] ?? Number.POSITIVE_INFINITY;
  let k = 0;
  for (let i = 0; i < stepStarts.length; i++) {
    const t = stepStarts[i]!;
    if (t < first || t >= intervals.end) continue;
    while (k + 1 < n && t >= intervals.starts[k + 1]!) k++;
    for (let c = 0; c < STEP_KEYS.length; c++) {
      const v = steps[STEP_KEYS[c]!][i];
      if (v !== null && v !== undefined) {
        sums[c]![k]! += v;
        seen[c]![k]!++;
      }
    }
    const I = steps.import[i];
    const E = steps.export[i];
    const P = steps.production[i];
    const C = steps.charge[i];
    const D = steps.discharge[i];
    if (I == null || E == null || P == null || C == null || D == null) continue;
    const h = I + P - E - C + D;
    home[k]! += h;
    homeSteps[k]!++;
    kImport[k]! += I;
    kExport[k]! += E;
    kProduction[k]! += P;
    const S = steps.subMeters[i];
    if (S !== null && S !== undefined) {
      kSub[k]! += S;
      kSubSeen[k]!++;
    }
    // allocateStep, inline.
    const p = Math.max(0, P);
    const battery = D - C;
    const charge = Math.max(0, -battery);
    const discharge = Math.max(0, battery);
    const H = Math.max(0, h);
    const pvHome = Math.min(p, H);
    const pvBattery = Math.min(p - pvHome, charge);
    const batteryHome = Math.min(discharge, H - pvHome);
    flows[0]![k]! += pvHome;
    flows[1]![k]! += pvBattery;
    flows[2]![k]! += p - pvHome - pvBattery;
    flows[3]![k]! += batteryHome;
    flows[4]![k]! += discharge - batteryHome;
    flows[5]![k]! += H - pvHome - batteryHome;
    flows[6]![k]! += charge - pvBattery;
  }
  const out = (c: number) => Array.from(sums[c]!, (v, j) => (seen[c]![j]! > 0 ? v : null));
  const consumption = Array.from(home, (v, j) => (homeSteps[j]! > 0 ? v : null));
  const untracked = consumption.map((h, j) => (h !== null && kSubSeen[j]! > 0 ? h - kSub[j]! : null));
  return {
    import: out(0),
    export: out(1),
    production: out(2),
    charge: out(3),
    discharge: out(4),
    subMeters: out(5),
    consumption,
    untracked,
    selfConsumption: consumption.map((h, j) =>
      h !== null && kProduction[j]! > 0 ? share((kProduction[j]! - kExport[j]!) / kProduction[j]!) : null,
    ),
    selfSufficiency: consumption.map((h, j) => (h !== null && h > 0 ? share(1 - kImport[j]! / h) : null)),
    flows: Object.fromEntries(
      FLOW_KEYS.map((key, c) => [key, Array.from(flows[c]!, (v, j) => (homeSteps[j]! > 0 ? v : null))]),
    ) as FlowSeries['flows'],
    inconsistent: consumption.map(
      (h, j) => (untracked[j] !== null && untracked[j]! < -EPSILON_KWH) || (h !== null && h < -EPSILON_KWH),
    ),
  };
}
