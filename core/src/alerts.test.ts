import { describe, expect, it } from 'vitest';
import {
  type AlertSettings,
  evaluateReading,
  evaluateSilence,
  initialAlertState,
  isNight,
} from './alerts.ts';

const WAW = 'Europe/Warsaw';
// 10:00 local on a winter weekday.
const T0 = Date.parse('2026-01-14T09:00:00Z');
const min = (m: number) => T0 + m * 60_000;
const settings: AlertSettings = {
  enabled: true,
  voltageDrop: 207,
  voltageRise: 253,
  totalConsumption: 10,
  disableAtNight: true,
  interval: 30,
  muteAll: false,
};
const volts = (v1: number, v2 = 230, v3 = 230) => ({ vave1: v1, vave2: v2, vave3: v3 });

describe('evaluateReading', () => {
  it('raises a voltage drop once, clears only past the hysteresis margin, notes the recovery', () => {
    const s = initialAlertState();
    const a = evaluateReading(s, { ts: min(0), values: volts(200) }, settings, WAW);
    expect(a.map((e) => [e.kind, e.type, e.phase])).toEqual([['voltage-drop', 'alert', 1]]);
    expect(a[0]!.message).toBe('Voltage drop on phase 1: 200 V (below 207 V)');
    // Still low, then just above the threshold but inside the margin: nothing new.
    expect(evaluateReading(s, { ts: min(1), values: volts(201) }, settings, WAW)).toEqual([]);
    expect(evaluateReading(s, { ts: min(2), values: volts(208) }, settings, WAW)).toEqual([]);
    const r = evaluateReading(s, { ts: min(3), values: volts(209.5) }, settings, WAW);
    expect(r.map((e) => [e.kind, e.type])).toEqual([['voltage-drop', 'recovery']]);
  });

  it('keeps the minimum interval between two alerts of a kind', () => {
    const s = initialAlertState();
    evaluateReading(s, { ts: min(0), values: volts(250, 260) }, settings, WAW);
    evaluateReading(s, { ts: min(5), values: volts(240, 240) }, settings, WAW); // recovery
    expect(evaluateReading(s, { ts: min(10), values: volts(230, 260) }, settings, WAW)).toEqual([]);
    const later = evaluateReading(s, { ts: min(31), values: volts(230, 260) }, settings, WAW);
    expect(later.map((e) => [e.kind, e.type, e.phase])).toEqual([['voltage-rise', 'alert', 2]]);
  });

  it('mute-all and disabled settings stay silent', () => {
    for (const over of [{ muteAll: true }, { enabled: false }]) {
      const s = initialAlertState();
      expect(evaluateReading(s, { ts: min(0), values: volts(150) }, { ...settings, ...over }, WAW)).toEqual(
        [],
      );
    }
  });

  it('night silence 22:00–07:00 local: a still-active alert is told when the night ends', () => {
    const night = Date.parse('2026-01-14T22:30:00Z'); // 23:30 in Warsaw
    expect(isNight(night, WAW)).toBe(true);
    expect(isNight(Date.parse('2026-01-15T06:00:00Z'), WAW)).toBe(false); // 07:00 local
    const s = initialAlertState();
    expect(evaluateReading(s, { ts: night, values: volts(190) }, settings, WAW)).toEqual([]);
    const morning = evaluateReading(
      s,
      { ts: Date.parse('2026-01-15T06:01:00Z'), values: volts(191) },
      settings,
      WAW,
    );
    expect(morning.map((e) => [e.kind, e.type])).toEqual([['voltage-drop', 'alert']]);
    // Without night silence it is told at once.
    const s2 = initialAlertState();
    expect(
      evaluateReading(s2, { ts: night, values: volts(190) }, { ...settings, disableAtNight: false }, WAW),
    ).toHaveLength(1);
  });

  it('consumption threshold on the local day', () => {
    const s = initialAlertState();
    expect(evaluateReading(s, { ts: min(0), values: {}, todayImportKwh: 9 }, settings, WAW)).toEqual([]);
    const a = evaluateReading(s, { ts: min(1), values: {}, todayImportKwh: 10.5 }, settings, WAW);
    expect(a.map((e) => e.message)).toEqual(["Today's consumption 10.5 kWh exceeds 10 kWh"]);
  });
});

describe('evaluateSilence', () => {
  it('a silent device raises no-data once; its next reading recovers', () => {
    const s = initialAlertState();
    evaluateReading(s, { ts: min(0), values: volts(230) }, settings, WAW);
    expect(evaluateSilence(s, min(10), settings, WAW)).toEqual([]);
    const off = evaluateSilence(s, min(16), settings, WAW);
    expect(off.map((e) => [e.kind, e.type])).toEqual([['no-data', 'alert']]);
    expect(evaluateSilence(s, min(20), settings, WAW)).toEqual([]);
    const back = evaluateReading(s, { ts: min(21), values: volts(230) }, settings, WAW);
    expect(back.map((e) => [e.kind, e.type])).toEqual([['no-data', 'recovery']]);
  });

  it('a device that never reported raises nothing', () => {
    expect(evaluateSilence(initialAlertState(), min(100), settings, WAW)).toEqual([]);
  });
});
