/** Tariff form: checks with clear messages and the request body (docs/api.md §Locations and tariffs). */
import {
  defaultClockBasis,
  TARIFF_GROUPS,
  type Tariff,
  type TariffGroup,
  type TariffRequest,
  type Zone,
  type ZoneSchedule,
} from '@kilowatch/core';
import {
  type FieldError,
  type FormErrors,
  optionalText,
  requiredText,
  withoutEmpty,
} from '../../shared/forms/fields.ts';

export const PRICE_MAX = 1_000_000;

export interface TariffValues {
  name: string;
  group: TariffGroup;
  operator: string;
  zone1Price: string;
  zone2Price: string;
  zone3Price: string;
  fixedPrice: string;
  currency: string;
  validFrom: string;
  validTo: string;
}

export type TariffField = keyof TariffValues;

export function isTariffGroup(x: unknown): x is TariffGroup {
  return typeof x === 'string' && (TARIFF_GROUPS as readonly string[]).includes(x);
}

/** A decimal typed with a dot or a comma; NaN when it is not a number. */
export function parseDecimal(s: string): number {
  const t = s.trim().replace(',', '.');
  return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : Number.NaN;
}

export function priceError(s: string): FieldError | undefined {
  if (!s.trim()) return { id: 'val.required' };
  const n = parseDecimal(s);
  if (!Number.isFinite(n)) return { id: 'val.number' };
  if (n < 0 || n > PRICE_MAX) return { id: 'val.range', values: { min: 0, max: PRICE_MAX } };
  return undefined;
}

/** `YYYY-MM-DD` naming a day that exists. */
export function isDateString(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const t = Date.parse(`${s}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().startsWith(s);
}

/** Checks the fields the form shows: prices only of the zones the group's schedule uses. */
export function validateTariff(v: TariffValues, zones: readonly Zone[]): FormErrors<TariffField> {
  const errors: FormErrors<TariffField> = {
    name: requiredText(v.name, 100),
    group: isTariffGroup(v.group) ? undefined : { id: 'val.required' },
    operator: optionalText(v.operator, 50),
    zone1Price: zones.includes(1) ? priceError(v.zone1Price) : undefined,
    zone2Price: zones.includes(2) ? priceError(v.zone2Price) : undefined,
    zone3Price: zones.includes(3) ? priceError(v.zone3Price) : undefined,
    fixedPrice: priceError(v.fixedPrice),
    currency: /^[A-Z]{3}$/.test(v.currency.trim().toUpperCase()) ? undefined : { id: 'places.val.currency' },
    validFrom: !v.validFrom
      ? { id: 'val.required' }
      : isDateString(v.validFrom)
        ? undefined
        : { id: 'places.val.date' },
    validTo: !v.validTo
      ? undefined
      : !isDateString(v.validTo)
        ? { id: 'places.val.date' }
        : // The server keeps a version at least two days long (validTo after validFrom).
          isDateString(v.validFrom) && v.validTo <= v.validFrom
          ? { id: 'places.val.validTo' }
          : undefined,
  };
  return withoutEmpty(errors);
}

function priceOrZero(s: string): number {
  const n = parseDecimal(s);
  return Number.isFinite(n) && n >= 0 && n <= PRICE_MAX ? n : 0;
}

/** The request body; prices of zones the group does not use are kept when valid, else 0. */
export function tariffRequest(v: TariffValues, existing?: Tariff | null): TariffRequest {
  return {
    name: v.name.trim(),
    group: v.group,
    operator: v.operator.trim() || null,
    zone1Price: priceOrZero(v.zone1Price),
    zone2Price: priceOrZero(v.zone2Price),
    zone3Price: priceOrZero(v.zone3Price),
    fixedPrice: priceOrZero(v.fixedPrice),
    currency: v.currency.trim().toUpperCase(),
    validFrom: v.validFrom,
    validTo: v.validTo || null,
    clockBasis: existing?.clockBasis ?? defaultClockBasis(v.operator),
    schedule: effectiveSchedule(v, existing),
  };
}

/** Edited zone windows belong to the group they were written for; another group takes its defaults. */
export function effectiveSchedule(
  v: Pick<TariffValues, 'group'>,
  existing?: Tariff | null,
): ZoneSchedule | null {
  return existing && existing.group === v.group ? existing.schedule : null;
}

export function tariffValues(t: Tariff | null | undefined, today: string): TariffValues {
  return {
    name: t?.name ?? '',
    group: t?.group ?? 'G11',
    operator: t?.operator ?? '',
    zone1Price: t ? String(t.zone1Price) : '',
    zone2Price: t ? String(t.zone2Price) : '',
    zone3Price: t ? String(t.zone3Price) : '',
    fixedPrice: t ? String(t.fixedPrice) : '0',
    currency: t?.currency ?? 'PLN',
    validFrom: t?.validFrom ?? today,
    validTo: t?.validTo ?? '',
  };
}
