/**
 * Pure form logic of the places screens: field checks with the docs/spec.md §5 messages, and the request
 * bodies built from what was typed. Each check answers a catalogue id (and its values) or nothing.
 */
import { isValidTimeZone } from '@kilowatch/core';
import type { MessageId } from '../../i18n/i18n.ts';

export interface FieldError {
  id: MessageId;
  values?: Record<string, unknown>;
}

export type FormErrors<K extends string> = Partial<Record<K, FieldError>>;

export function requiredText(value: string, max: number): FieldError | undefined {
  if (!value.trim()) return { id: 'val.required' };
  if (value.trim().length > max) return { id: 'places.val.tooLong', values: { max } };
  return undefined;
}

export function optionalText(value: string, max: number): FieldError | undefined {
  return value.trim().length > max ? { id: 'places.val.tooLong', values: { max } } : undefined;
}

export function timeZoneError(value: string | null): FieldError | undefined {
  return value && isValidTimeZone(value) ? undefined : { id: 'val.timezone' };
}

/** Every IANA zone the browser knows, for the searchable selects. */
export function timeZoneOptions(current?: string | null): string[] {
  let zones: string[] = [];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    zones = [];
  }
  // Intl lists canonical names only; keep a stored alias (e.g. UTC) selectable.
  const extra = ['UTC', current].filter((z): z is string => !!z && !zones.includes(z));
  return [...extra, ...zones];
}

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

export function withoutEmpty<K extends string>(errors: FormErrors<K>): FormErrors<K> {
  return Object.fromEntries(Object.entries(errors).filter(([, e]) => e !== undefined)) as FormErrors<K>;
}
