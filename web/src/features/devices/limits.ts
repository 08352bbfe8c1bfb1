/** Limit values (docs/spec.md §5): warning 0–50 %, critical 0–100 %, warning below critical. */
import type { MessageId } from '../../i18n/i18n.ts';

export interface LimitInput {
  warning: string;
  critical: string;
}

export type LimitErrors = Partial<Record<keyof LimitInput, MessageId>>;

function num(s: string): number | null {
  if (s.trim() === '') return null;
  const n = Number(s.replace(',', '.'));
  return Number.isFinite(n) ? n : Number.NaN;
}

export function validateLimits(input: LimitInput): LimitErrors {
  const errors: LimitErrors = {};
  const w = num(input.warning);
  const c = num(input.critical);
  if (w === null) errors.warning = 'val.required';
  else if (Number.isNaN(w)) errors.warning = 'val.number';
  else if (w < 0 || w > 50) errors.warning = 'val.warnRange';
  if (c === null) errors.critical = 'val.required';
  else if (Number.isNaN(c)) errors.critical = 'val.number';
  else if (c < 0 || c > 100) errors.critical = 'val.criticalRange';
  if (!errors.warning && !errors.critical && w !== null && c !== null && w >= c) {
    errors.warning = 'val.warnBelowCritical';
    errors.critical = 'val.criticalAboveWarn';
  }
  return errors;
}
