/**
 * Pure form logic of the places screens: the location's field checks (docs/spec.md §5) and the request body
 * built from what was typed.
 */
import {
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
}

export type LocationField = keyof LocationValues;

export function validateLocation(v: LocationValues): FormErrors<LocationField> {
  const errors: FormErrors<LocationField> = {
    name: requiredText(v.name, 100),
    code: optionalText(v.code, 50),
    address: optionalText(v.address, 200),
    city: optionalText(v.city, 100),
    timezone: timeZoneError(v.timezone),
  };
  return withoutEmpty(errors);
}

export function locationRequest(v: LocationValues) {
  return {
    name: v.name.trim(),
    code: v.code.trim(),
    address: v.address.trim(),
    city: v.city.trim(),
    timezone: v.timezone ?? '',
    tariffId: v.tariffId ? Number(v.tariffId) : null,
  };
}
