import {
  DEFAULT_DAILY_ALERT_SETTINGS,
  DEFAULT_DETECTOR_ALERT_SETTINGS,
  DEFAULT_NOTIFICATION_SETTINGS,
} from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { checkForm, formFrom } from './notificationForm.ts';

/** Every setting's default as the form shows it: shares in per cent, an unset fuse rating empty. */
const FORM_DEFAULTS = {
  ...DEFAULT_NOTIFICATION_SETTINGS,
  ...DEFAULT_DETECTOR_ALERT_SETTINGS,
  ...DEFAULT_DAILY_ALERT_SETTINGS,
  fuseA: '',
  overloadShare: 90,
  imbalanceShare: 50,
  baseLoadShare: 30,
  unusualShare: 50,
  solarShare: 40,
};

const SAVED_DEFAULTS = {
  ...DEFAULT_NOTIFICATION_SETTINGS,
  ...DEFAULT_DETECTOR_ALERT_SETTINGS,
  ...DEFAULT_DAILY_ALERT_SETTINGS,
};

describe('notification settings form', () => {
  it('starts from the defaults when the device has none', () => {
    expect(formFrom(null)).toEqual(FORM_DEFAULTS);
    expect(formFrom({ ...DEFAULT_NOTIFICATION_SETTINGS, voltageDrop: 200 }).voltageDrop).toBe(200);
    expect(formFrom({ enabled: true, voltageRise: null })).toEqual({ ...FORM_DEFAULTS, enabled: true });
    // Stored fractions show in per cent; a check turned off (null) shows empty.
    expect(formFrom({ baseLoadShare: 0.3, fuseA: 25, imbalanceShare: null })).toMatchObject({
      baseLoadShare: 30,
      fuseA: 25,
      imbalanceShare: '',
    });
  });

  it('gives the settings to save, numbers typed as text included', () => {
    const checked = checkForm({ ...formFrom(null), enabled: true, voltageDrop: '205.5', interval: '15' });
    expect(checked).toEqual({
      ok: true,
      settings: { ...SAVED_DEFAULTS, enabled: true, voltageDrop: 205.5, interval: 15 },
    });
  });

  it('saves per cent as fractions and an empty fuse rating or imbalance share as off', () => {
    const checked = checkForm({
      ...formFrom(null),
      fuseA: '32',
      overloadShare: '85',
      imbalanceShare: '',
      baseLoad: true,
      baseLoadShare: '25',
      solar: true,
      solarShare: 30,
      email: true,
    });
    expect(checked).toEqual({
      ok: true,
      settings: {
        ...SAVED_DEFAULTS,
        fuseA: 32,
        overloadShare: 0.85,
        imbalanceShare: null,
        baseLoad: true,
        baseLoadShare: 0.25,
        solar: true,
        solarShare: 0.3,
        email: true,
      },
    });
  });

  it('names each field out of its range or not a number', () => {
    const checked = checkForm({
      ...formFrom(null),
      voltageDrop: 501,
      voltageRise: '',
      totalConsumption: -1,
      interval: 2.5,
      solarShare: 99,
      overloadSeconds: '',
    });
    expect(checked).toEqual({
      ok: false,
      errors: {
        voltageDrop: { id: 'val.range', values: { min: 0, max: 500 } },
        voltageRise: { id: 'val.number' },
        totalConsumption: { id: 'val.range', values: { min: 0, max: 1_000_000 } },
        interval: { id: 'val.number' },
        solarShare: { id: 'val.range', values: { min: 5, max: 95 } },
        overloadSeconds: { id: 'val.number' },
      },
    });
    expect(checkForm({ ...formFrom(null), interval: 0 })).toMatchObject({
      ok: false,
      errors: { interval: { id: 'val.range', values: { min: 1, max: 10_080 } } },
    });
  });
});
