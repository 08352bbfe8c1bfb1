/** What a device's details page shows above its charts: the subtitle and the newest values. */
import { ownModel } from '../../shared/devices/paramNames.ts';

/** A meter total and the per-phase parameters it adds up (docs/domain.md §Parameters). */
const PHASE_TOTALS: Record<string, readonly string[]> = {
  power3phases: ['pave1', 'pave2', 'pave3'],
  energy3phases_import: ['eai1', 'eai2', 'eai3'],
  energy3phases_export: ['eae1', 'eae2', 'eae3'],
  renergy3phases_import: ['eri1', 'eri2', 'eri3'],
  renergy3phases_export: ['ere1', 'ere2', 'ere3'],
};

/**
 * The newest values with the totals a meter did not send filled in from its phases: a meter that
 * publishes only `pave1..3` still shows "Power, total". A total it sent stands; one with no phase known
 * stays missing.
 */
export function withPhaseTotals(
  values: Readonly<Record<string, number | null>> | undefined,
): Record<string, number | null> {
  const out: Record<string, number | null> = { ...values };
  for (const [total, phases] of Object.entries(PHASE_TOTALS)) {
    if (out[total] !== undefined && out[total] !== null) continue;
    const known = phases.map((p) => out[p]).filter((v): v is number => typeof v === 'number');
    if (known.length > 0) out[total] = known.reduce((a, b) => a + b, 0);
  }
  return out;
}

/**
 * The subtitle's parts: the type (in the reader's language), the model when the device has one of its
 * own, and the location. The API names a device without a model by its type (`modelName`), which the
 * subtitle already shows.
 */
export function deviceSubtitle(
  typeLabel: string,
  d: { typeName: string; model: string; modelName: string; location?: { name: string } | null },
): string[] {
  const model = ownModel(d);
  return [typeLabel, model !== typeLabel ? model : '', d.location?.name ?? ''].filter(Boolean);
}
