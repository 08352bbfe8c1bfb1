/** The notification settings form's values and checks (the ranges of core's NotificationSettingsSchema). */
import { DEFAULT_NOTIFICATION_SETTINGS, type NotificationSettings } from '@kilowatch/core';

export interface NotificationForm {
  enabled: boolean;
  voltageDrop: string | number;
  voltageRise: string | number;
  totalConsumption: string | number;
  disableAtNight: boolean;
  interval: string | number;
  muteAll: boolean;
}

type NumberField = 'voltageDrop' | 'voltageRise' | 'totalConsumption' | 'interval';

export const NUMBER_RANGES: Record<NumberField, { min: number; max: number; integer?: boolean }> = {
  voltageDrop: { min: 0, max: 500 },
  voltageRise: { min: 0, max: 500 },
  totalConsumption: { min: 0, max: 1_000_000 },
  interval: { min: 1, max: 10_080, integer: true },
};

/** Settings as a device overview gives them: any field may be missing or null. */
export type LooseSettings = { [K in keyof NotificationSettings]?: NotificationSettings[K] | null };

/** The form's starting values: the device's settings, the defaults where it has none. */
export function formFrom(settings: LooseSettings | null | undefined): NotificationForm {
  const given = Object.fromEntries(
    Object.entries(settings ?? {}).filter(([, v]) => v !== null && v !== undefined),
  );
  return { ...DEFAULT_NOTIFICATION_SETTINGS, ...given };
}

export type FieldError = { id: 'val.number' } | { id: 'val.range'; values: { min: number; max: number } };

/** The first problem of each number field, or the settings to save when there is none. */
export function checkForm(
  form: NotificationForm,
):
  | { ok: true; settings: NotificationSettings }
  | { ok: false; errors: Partial<Record<NumberField, FieldError>> } {
  const errors: Partial<Record<NumberField, FieldError>> = {};
  const numbers = {} as Record<NumberField, number>;
  for (const [field, range] of Object.entries(NUMBER_RANGES) as [
    NumberField,
    (typeof NUMBER_RANGES)[NumberField],
  ][]) {
    const raw = form[field];
    const n = typeof raw === 'number' ? raw : raw.trim() === '' ? Number.NaN : Number(raw);
    if (!Number.isFinite(n) || (range.integer && !Number.isInteger(n))) errors[field] = { id: 'val.number' };
    else if (n < range.min || n > range.max)
      errors[field] = { id: 'val.range', values: { min: range.min, max: range.max } };
    else numbers[field] = n;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    settings: {
      enabled: form.enabled,
      disableAtNight: form.disableAtNight,
      muteAll: form.muteAll,
      ...numbers,
    },
  };
}
