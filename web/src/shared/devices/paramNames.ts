/**
 * Human names of the parameter catalogue (docs/domain.md §Parameters) in the active language: `vave1` is
 * "Voltage L1", `vave` (phases combined) "Voltage, average of phases", `energy3phases_import` "Active
 * energy import, total". Raw codes never reach the screen; a code the catalogue lacks is shown as is.
 */
import { combinedParamDef, paramDef, unitOf } from '@kilowatch/core';
import { en, type MessageId } from '../../i18n/locales/en.ts';

type T = (id: MessageId, values?: Record<string, unknown>) => string;

const STEMS = new Set([
  'pave',
  'pmax',
  'pmin',
  'vave',
  'vmax',
  'vmin',
  'iave',
  'imax',
  'imin',
  'pfave',
  'pfmax',
  'pfmin',
  'eai',
  'eae',
  'eri',
  'ere',
]);

const SINGLE = new Set([
  'energy3phases_import',
  'energy3phases_export',
  'energy3phases',
  'renergy3phases_import',
  'renergy3phases_export',
  'renergy3phases',
  'power3phases',
  'frq1',
  'tempmain',
  'tempset',
  'rel1',
  'alarm',
  'balance',
]);

/** The parameter's name without its unit ("Voltage L1"). */
export function paramName(t: T, name: string): string {
  if (SINGLE.has(name)) return t(`param.${name}` as MessageId);
  const dc = /^(vdc|idc)(\d)$/.exec(name);
  if (dc) return t(`param.${dc[1]}` as MessageId, { n: dc[2] });
  const def = paramDef(name);
  if (def?.stem && def.phase && STEMS.has(def.stem))
    return t('param.phase', { name: t(`param.${def.stem}` as MessageId), phase: def.phase });
  const combined = combinedParamDef(name);
  if (combined && STEMS.has(name))
    return t(combined.combine === 'sum' ? 'param.total' : 'param.mean', {
      name: t(`param.${name}` as MessageId),
    });
  return name;
}

/** The parameter's unit as shown ('' for unitless ones such as the power factor). */
export function paramUnit(name: string): string {
  return unitOf(name) ?? combinedParamDef(name)?.unit ?? '';
}

/** The name with its unit: "Voltage L1 (V)". */
export function paramLabel(t: T, name: string): string {
  const unit = paramUnit(name);
  return unit ? `${paramName(t, name)} (${unit})` : paramName(t, name);
}

const GROUP_ORDER = [
  'activeEnergy',
  'reactiveEnergy',
  'power',
  'voltage',
  'current',
  'powerFactor',
  'frequency',
  'dc',
  'temperature',
  'state',
  'balance',
] as const;

function groupOf(name: string): string {
  return paramDef(name)?.group ?? combinedParamDef(name)?.group ?? 'state';
}

/**
 * A label for each parameter that no other in `params` shares: where a meter's own total ("Power, total",
 * `power3phases`) and the sum of its phases (`pave`) would read alike, the sum is named as one.
 */
export function uniqueParamLabels(t: T, params: readonly string[]): Map<string, string> {
  const labels = new Map(params.map((p) => [p, paramLabel(t, p)]));
  const count = new Map<string, number>();
  for (const l of labels.values()) count.set(l, (count.get(l) ?? 0) + 1);
  for (const [p, l] of labels) {
    if ((count.get(l) ?? 0) < 2 || combinedParamDef(p)?.combine !== 'sum') continue;
    const unit = paramUnit(p);
    const name = t('param.sumOfPhases', { name: t(`param.${p}` as MessageId) });
    labels.set(p, unit ? `${name} (${unit})` : name);
  }
  return labels;
}

/** Options for a parameter select: human names with units, none alike, grouped (energy, power, voltage, …). */
export function paramSelectData(
  t: T,
  params: readonly string[],
): { group: string; items: { value: string; label: string }[] }[] {
  const labels = uniqueParamLabels(t, params);
  return GROUP_ORDER.map((g) => ({
    group: t(`paramGroup.${g}` as MessageId),
    items: params.filter((p) => groupOf(p) === g).map((p) => ({ value: p, label: labels.get(p)! })),
  })).filter((g) => g.items.length > 0);
}

/** A device type in the active language ("Licznik trójfazowy"); a type the catalogue lacks by the API's name. */
export function deviceTypeName(t: T, typeCode: number, fallback: string | null | undefined): string {
  const id = `devtype.${typeCode}`;
  return id in en ? t(id as MessageId) : (fallback ?? '');
}

/**
 * The device's own model, or '' when it has none: the API names a device without a model by its type
 * (`modelName` is then the type's English name), which screens show translated on their own.
 */
export function ownModel(d: { typeName: string; model: string; modelName: string }): string {
  return d.model || (d.modelName !== d.typeName ? d.modelName : '');
}
