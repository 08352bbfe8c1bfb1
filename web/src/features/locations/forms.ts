/**
 * Pure form logic of the places screens: the location's field checks (docs/spec.md §5) and the request body
 * built from what was typed.
 */
import type { SettlementScheme } from '@kilowatch/core';
import {
  type FieldError,
  type FormErrors,
  optionalText,
  requiredText,
  timeZoneError,
  withoutEmpty,
} from '../../shared/forms/fields.ts';

export interface LocationValues {
  name: string;
  code: string;
  address: string;
  city: string;
  timezone: string | null;
  tariffId: string | null;
  /** Prosumer settlement (docs/domain.md §Prosumer settlement). */
  settlementScheme: SettlementScheme;
  /** Installed power in kW as typed (net-metering). */
  installedKw: string;
  /** The first day under the scheme, `YYYY-MM-DD` or ''. */
  settlementSince: string;
}

export type LocationField = keyof LocationValues;

export function validateLocation(v: LocationValues): FormErrors<LocationField> {
  const errors: FormErrors<LocationField> = {
    name: requiredText(v.name, 100),
    code: optionalText(v.code, 50),
    address: optionalText(v.address, 200),
    city: optionalText(v.city, 100),
    timezone: timeZoneError(v.timezone),
    installedKw: v.settlementScheme === 'net-metering' ? installedKwError(v.installedKw) : undefined,
    settlementSince: v.settlementScheme !== 'none' && !v.settlementSince ? { id: 'val.required' } : undefined,
  };
  return withoutEmpty(errors);
}

/** Installed power: a number of kW above 0, at most 50 (a household's); a decimal comma is read as a point. */
function installedKwError(value: string): FieldError | undefined {
  const kw = Number(value.trim().replace(',', '.'));
  if (!value.trim()) return { id: 'val.required' };
  return Number.isFinite(kw) && kw > 0 && kw <= 50 ? undefined : { id: 'places.val.installedKw' };
}

export function locationRequest(v: LocationValues) {
  return {
    name: v.name.trim(),
    code: v.code.trim(),
    address: v.address.trim(),
    city: v.city.trim(),
    timezone: v.timezone ?? '',
    tariffId: v.tariffId ? Number(v.tariffId) : null,
    settlement: {
      scheme: v.settlementScheme,
      installedKw:
        v.settlementScheme === 'net-metering' ? Number(v.installedKw.trim().replace(',', '.')) : null,
      since: v.settlementScheme === 'none' ? null : v.settlementSince || null,
    },
  };
}
