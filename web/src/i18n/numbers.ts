/**
 * Numbers placed into a message as the interface language writes them: a fraction with its decimal
 * separator (pl "195,5 V", en "195.5 V"). Whole numbers stay numbers, so plural rules still choose by them.
 */
export function localizeNumbers(
  values: Record<string, unknown> | undefined,
  language: string,
): Record<string, unknown> | undefined {
  if (!values) return values;
  let format: Intl.NumberFormat | undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (typeof v === 'number' && Number.isFinite(v) && !Number.isInteger(v)) {
      format ??= new Intl.NumberFormat(INTL[language] ?? 'en-US', {
        maximumFractionDigits: 3,
        useGrouping: false,
      });
      out[k] = format.format(v);
    } else out[k] = v;
  }
  return out;
}

const INTL: Record<string, string> = { en: 'en-US', pl: 'pl-PL', tr: 'tr-TR' };
