/**
 * Combining phases (docs/spec.md "summed" view): an all-phase name (`pave`, `vave`) is, per reading, the sum
 * (powers, currents, energies) or the mean (voltages, power factors) of the phases the reading has. Every path
 * computes it from here: the InfluxDB rollups and answers, the live values in the web client; the DuckDB
 * store renders the same rule to SQL from the catalogue (`COMBINED_PARAMS`).
 */
import { COMBINED_PARAMS, type CombinedParamDef, combinedParamDef } from '../params.ts';

/** One combined parameter's value in a reading; undefined when the reading has none of its phases. */
export function combinePhases(
  def: CombinedParamDef,
  values: Readonly<Record<string, number | null | undefined>>,
): number | undefined {
  let sum = 0;
  let n = 0;
  for (const p of def.of) {
    const v = values[p];
    if (typeof v === 'number') {
      sum += v;
      n++;
    }
  }
  if (n === 0) return undefined;
  return def.combine === 'sum' ? sum : sum / n;
}

/** The value of an all-phase name in a reading; undefined for a stored name or when no phase is present. */
export function combinedValue(
  name: string,
  values: Readonly<Record<string, number | null | undefined>>,
): number | undefined {
  const def = combinedParamDef(name);
  return def ? combinePhases(def, values) : undefined;
}

/** Every combined parameter a reading has at least one phase of, with its value. */
export function combinedValues(
  values: Readonly<Record<string, number | null | undefined>>,
): [string, number][] {
  const out: [string, number][] = [];
  for (const c of COMBINED_PARAMS) {
    const v = combinePhases(c, values);
    if (v !== undefined) out.push([c.name, v]);
  }
  return out;
}
