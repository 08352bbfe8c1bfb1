/**
 * Field checks shared by the forms of several screens: each check answers a catalogue id (and its values)
 * or nothing, with the docs/spec.md §5 messages.
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

export function withoutEmpty<K extends string>(errors: FormErrors<K>): FormErrors<K> {
  return Object.fromEntries(Object.entries(errors).filter(([, e]) => e !== undefined)) as FormErrors<K>;
}
