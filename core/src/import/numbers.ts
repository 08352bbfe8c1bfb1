/**
 * Numbers of an import file: a decimal point or a decimal comma (Polish files: `1 234,5`), and the exact
 * decimal amount of an energy so that a running sum of interval energies does not drift.
 */

const PLAIN = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;
/** A space, no-break space or narrow no-break space between groups of three digits. */
const GROUP_SPACE = /(\d)[ \u00a0\u202f](?=\d{3}(?:\D|$))/g;

/** The number in `.`-decimal form, or undefined when the text is not one. */
export function normalizeNumber(text: string, decimal: '.' | ','): string | undefined {
  let s = text.trim();
  if (decimal === ',') {
    if (s.includes('.')) return undefined;
    s = s.replace(GROUP_SPACE, '$1').replace(',', '.');
  }
  return PLAIN.test(s) ? s : undefined;
}

/** Digits kept of an energy: 1e-12 of its unit. */
export const EXACT_DIGITS = 12;

/** The decimal `normalized` × 10^digits as an integer (digits past that are cut). */
export function toExact(normalized: string, digits: number): bigint {
  if (/e/i.test(normalized)) return BigInt(Math.round(Number(normalized) * 10 ** digits));
  const neg = normalized.startsWith('-');
  const body = normalized.replace(/^[+-]/, '');
  const [int = '', frac = ''] = body.split('.');
  const digitsText = `${int || '0'}${(frac + '0'.repeat(digits)).slice(0, digits)}`;
  const v = BigInt(digitsText);
  return neg ? -v : v;
}

/** The number nearest to exact × 10^-EXACT_DIGITS. */
export function fromExact(exact: bigint): number {
  const neg = exact < 0n;
  const s = (neg ? -exact : exact).toString().padStart(EXACT_DIGITS + 1, '0');
  return Number(`${neg ? '-' : ''}${s.slice(0, -EXACT_DIGITS)}.${s.slice(-EXACT_DIGITS)}`);
}

/** An energy in the catalogue's unit (kWh, kvarh), exactly, from a value written in `unit`. */
export function energyExact(normalized: string, unit: 'Wh' | 'kWh' | undefined): bigint {
  return toExact(normalized, unit === 'Wh' ? EXACT_DIGITS - 3 : EXACT_DIGITS);
}
