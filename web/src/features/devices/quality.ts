/** Presentation of voltage-quality answers (docs/domain.md §Limits, voltage quality). */

/** Nominal voltage (docs/spec.md §9). */
export const NOMINAL_VOLTAGE = 230;
export const EN50160_PERCENT = 10;
export const EN50160_SHARE = 0.95;

/** The band 230 V ± `percent` %, in volts, rounded to 0.1 V. */
export function bandVolts(percent: number): { low: number; high: number } {
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    low: round(NOMINAL_VOLTAGE * (1 - percent / 100)),
    high: round(NOMINAL_VOLTAGE * (1 + percent / 100)),
  };
}

/** A share (0…1) as a percentage with one decimal, `—` when there is no data. */
export function formatShare(share: number | null | undefined, locale = 'en'): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '—';
  return `${(share * 100).toLocaleString(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 })} %`;
}
