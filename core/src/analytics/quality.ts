/**
 * Voltage quality (docs/domain.md §Limits): EN 50160 asks that 95 % of the 10-minute mean voltages of a week lie
 * within 230 V ± 10 %; next to it, the shares within the user's warning and critical bands.
 */
/** Nominal voltage of the low-voltage grid (docs/spec.md §9). */
const NOMINAL_VOLTAGE = 230;
export const EN50160_BAND_PERCENT = 10;
export const EN50160_REQUIRED_SHARE = 0.95;
export const TEN_MINUTES_MS = 600_000;

export interface VoltageBands {
  /** Warning level, % of 230 V (0–50). */
  warning: number;
  /** Critical level, % of 230 V (0–100). */
  critical: number;
}

export interface PhaseQuality {
  /** 10-minute means considered. */
  samples: number;
  withinWarning: number | null;
  withinCritical: number | null;
  withinEn50160: number | null;
  /** Whether the EN 50160 share (≥ 95 %) is met; null without samples. */
  en50160Met: boolean | null;
}

function share(means: readonly number[], percent: number): number | null {
  if (means.length === 0) return null;
  const lo = NOMINAL_VOLTAGE * (1 - percent / 100);
  const hi = NOMINAL_VOLTAGE * (1 + percent / 100);
  let n = 0;
  for (const v of means) if (v >= lo && v <= hi) n++;
  return n / means.length;
}

/** Shares of 10-minute means within each band, for one phase. */
export function phaseQuality(tenMinuteMeans: readonly number[], bands: VoltageBands): PhaseQuality {
  const en = share(tenMinuteMeans, EN50160_BAND_PERCENT);
  return {
    samples: tenMinuteMeans.length,
    withinWarning: share(tenMinuteMeans, bands.warning),
    withinCritical: share(tenMinuteMeans, bands.critical),
    withinEn50160: en,
    en50160Met: en === null ? null : en >= EN50160_REQUIRED_SHARE,
  };
}

/** 10-minute means of raw voltage samples (epoch-aligned windows); empty windows are skipped. */
export function tenMinuteMeans(samples: readonly { ts: number; value: number }[]): number[] {
  const out: number[] = [];
  let window = Number.NaN;
  let sum = 0;
  let n = 0;
  for (const s of samples) {
    const w = Math.floor(s.ts / TEN_MINUTES_MS);
    if (w !== window) {
      if (n > 0) out.push(sum / n);
      window = w;
      sum = 0;
      n = 0;
    }
    sum += s.value;
    n++;
  }
  if (n > 0) out.push(sum / n);
  return out;
}

/** 230 V ± percent, for drawing warning/critical bands on voltage charts. */
export function voltageBand(percent: number): { low: number; high: number } {
  return { low: NOMINAL_VOLTAGE * (1 - percent / 100), high: NOMINAL_VOLTAGE * (1 + percent / 100) };
}
