import { DEFAULT_NOTIFICATION_SETTINGS } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { checkForm, formFrom } from './notificationForm.ts';

describe('notification settings form', () => {
  it('starts from the defaults when the device has none', () => {
    expect(formFrom(null)).toEqual(DEFAULT_NOTIFICATION_SETTINGS);
    expect(formFrom({ ...DEFAULT_NOTIFICATION_SETTINGS, voltageDrop: 200 }).voltageDrop).toBe(200);
    expect(formFrom({ enabled: true, voltageRise: null })).toEqual({
      ...DEFAULT_NOTIFICATION_SETTINGS,
      enabled: true,
    });
  });

  it('gives the settings to save, numbers typed as text included', () => {
    const checked = checkForm({ ...formFrom(null), enabled: true, voltageDrop: '205.5', interval: '15' });
    expect(checked).toEqual({
      ok: true,
      settings: { ...DEFAULT_NOTIFICATION_SETTINGS, enabled: true, voltageDrop: 205.5, interval: 15 },
    });
  });

  it('names each field out of its range or not a number', () => {
    const checked = checkForm({
      ...formFrom(null),
      voltageDrop: 501,
      voltageRise: '',
      totalConsumption: -1,
      interval: 2.5,
    });
    expect(checked).toEqual({
      ok: false,
      errors: {
        voltageDrop: { id: 'val.range', values: { min: 0, max: 500 } },
        voltageRise: { id: 'val.number' },
        totalConsumption: { id: 'val.range', values: { min: 0, max: 1_000_000 } },
        interval: { id: 'val.number' },
      },
    });
    expect(checkForm({ ...formFrom(null), interval: 0 })).toMatchObject({
      ok: false,
      errors: { interval: { id: 'val.range', values: { min: 1, max: 10_080 } } },
    });
  });
});
