/**
 * The notification settings form's values and checks (the ranges of core's NotificationSettingsSchema).
 * Shares (overload, imbalance, base load, unusual, solar) are typed in per cent and stored as fractions; a
 * fuse rating or imbalance share left empty turns that check off (null).
 */
import {
  DEFAULT_DAILY_ALERT_SETTINGS,
  DEFAULT_DETECTOR_ALERT_SETTINGS,
  DEFAULT_NOTIFICATION_SETTINGS,
  type NotificationSettings,
} from '@kilowatch/core';

export interface NotificationForm {
  enabled: boolean;
  voltageDrop: string | number;
  voltageRise: string | number;
  totalConsumption: string | number;
  disableAtNight: boolean;
  interval: string | number;
  muteAll: boolean;
  fuseA: string | number;
  overloadShare: string | number;
  overloadSeconds: string | number;
  imbalanceShare: string | number;
  offline: boolean;
  offlineFactor: string | number;
  baseLoad: boolean;
  baseLoadShare: string | number;
  unusual: boolean;
  unusualShare: string | number;
  solar: boolean;
  solarShare: string | number;
  email: boolean;
}

export type NumberField =
  | 'voltageDrop'
  | 'voltageRise'
  | 'totalConsumption'
  | 'interval'
  | 'fuseA'
  | 'overloadShare'
  | 'overloadSeconds'
  | 'imbalanceShare'
  | 'offlineFactor'
  | 'baseLoadShare'
  | 'unusualShare'
  | 'solarShare';

export type ToggleField =
  | 'enabled'
  | 'disableAtNight'
  | 'muteAll'
  | 'offline'
  | 'baseLoad'
  | 'unusual'
  | 'solar'
  | 'email';

interface Range {
  /** In the form's unit (per cent for a share). */
  min: number;
  max: number;
  integer?: boolean;
  /** Typed in per cent, stored as a fraction. */
  percent?: boolean;
  /** Empty is allowed and stored as null (the check off). */
  nullable?: boolean;
}

export const NUMBER_RANGES: Record<NumberField, Range> = {
  voltageDrop: { min: 0, max: 500 },
  voltageRise: { min: 0, max: 500 },
  totalConsumption: { min: 0, max: 1_000_000 },
  interval: { min: 1, max: 10_080, integer: true },
  fuseA: { min: 1, max: 1000, nullable: true },
  overloadShare: { min: 10, max: 200, percent: true },
  overloadSeconds: { min: 10, max: 3600, integer: true },
  imbalanceShare: { min: 5, max: 300, percent: true, nullable: true },
  offlineFactor: { min: 2, max: 1000 },
  baseLoadShare: { min: 5, max: 500, percent: true },
  unusualShare: { min: 10, max: 1000, percent: true },
  solarShare: { min: 5, max: 95, percent: true },
};

/** Settings as a device overview gives them: any field may be missing or null. */
export type LooseSettings = { [K in keyof NotificationSettings]?: NotificationSettings[K] | null };

const DEFAULTS = {
  ...DEFAULT_NOTIFICATION_SETTINGS,
  ...DEFAULT_DETECTOR_ALERT_SETTINGS,
  ...DEFAULT_DAILY_ALERT_SETTINGS,
};

/** A fraction as per cent, without the float's tail (0.3 → 30, not 30.000000000000004). */
const toPercent = (x: number) => Math.round(x * 100 * 1e6) / 1e6;

/** The form's starting values: the device's settings, the defaults where it has none. */
export function formFrom(settings: LooseSettings | null | undefined): NotificationForm {
  const s = settings ?? {};
  const form = { ...DEFAULTS } as Record<string, unknown>;
  for (const [k, v] of Object.entries(s)) if (v !== undefined && v !== null) form[k] = v;
  // The nullable checks: null (off) is an empty field; absent takes the default.
  if (s.fuseA === null) form.fuseA = null;
  if (s.imbalanceShare === null) form.imbalanceShare = null;
  for (const [k, range] of Object.entries(NUMBER_RANGES) as [NumberField, Range][]) {
    const v = form[k];
    if (v === null || v === undefined) form[k] = '';
    else if (range.percent && typeof v === 'number') form[k] = toPercent(v);
  }
  return form as unknown as NotificationForm;
}

export type FieldError = { id: 'val.number' } | { id: 'val.range'; values: { min: number; max: number } };

/** The first problem of each number field, or the settings to save when there is none. */
export function checkForm(
  form: NotificationForm,
):
  | { ok: true; settings: NotificationSettings }
  | { ok: false; errors: Partial<Record<NumberField, FieldError>> } {
  const errors: Partial<Record<NumberField, FieldError>> = {};
  const numbers = {} as Record<NumberField, number | null>;
  for (const [field, range] of Object.entries(NUMBER_RANGES) as [NumberField, Range][]) {
    const raw = form[field];
    const empty = typeof raw === 'string' && raw.trim() === '';
    if (empty && range.nullable) {
      numbers[field] = null;
      continue;
    }
    const n = typeof raw === 'number' ? raw : empty ? Number.NaN : Number(raw);
    if (!Number.isFinite(n) || (range.integer && !Number.isInteger(n))) errors[field] = { id: 'val.number' };
    else if (n < range.min || n > range.max)
      errors[field] = { id: 'val.range', values: { min: range.min, max: range.max } };
    else numbers[field] = range.percent ? n / 100 : n;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const n = numbers as Record<NumberField, number> & { fuseA: number | null; imbalanceShare: number | null };
  return {
    ok: true,
    settings: {
      enabled: form.enabled,
      disableAtNight: form.disableAtNight,
      muteAll: form.muteAll,
      offline: form.offline,
      baseLoad: form.baseLoad,
      unusual: form.unusual,
      solar: form.solar,
      email: form.email,
      ...n,
    },
  };
}
