/** The parameters offered for export: what the devices report, in catalogue order (docs/domain.md §Parameters). */
import { isStoredParam, PARAM_NAMES } from '@kilowatch/core';

export function exportableParams(
  reported: readonly (Record<string, unknown> | undefined)[],
  preset: readonly string[] = [],
): string[] {
  const seen = new Set<string>(preset.filter(isStoredParam));
  for (const values of reported) for (const k of Object.keys(values ?? {})) seen.add(k);
  const known = PARAM_NAMES.filter((p) => seen.has(p));
  // A device that has not reported yet offers the whole catalogue.
  return known.length > 0 ? known : [...PARAM_NAMES];
}
