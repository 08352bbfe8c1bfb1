import { describe, expect, it } from 'vitest';
import { calendarBuckets } from './buckets/calendar.ts';
import {
  allocateStep,
  defaultRole,
  FLOW_KEYS,
  type FlowStep,
  flowSeries,
  flowsByInterval,
  homeConsumption,
  isDeviceRole,
  locationRoles,
  summarizeFlows,
} from './flows.ts';
import { HOUR_MS } from './time.ts';

const step = (s: Partial<FlowStep>): FlowStep => ({
  import: 0,
  export: 0,
  production: 0,
  charge: 0,
  discharge: 0,
  subMeters: 0,
  ...s,
});

/** Compares every number to 9 decimals (sums of tenths are not exact in binary). */
function close<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (_k, v) => (typeof v === 'number' ? Math.round(v * 1e9) / 1e9 : v)),
  );
}

describe('device roles', () => {
  it('defaults by type code: solar produces, the energy meters are the grid, the rest are sub-meters', () => {
    expect(defaultRole(10)).toBe('production');
    expect(defaultRole(13)).toBe('grid');
    expect(defaultRole(16)).toBe('grid');
    expect(defaultRole(1)).toBe('consumer');
    expect(defaultRole(2)).toBe('consumer');
    expect(defaultRole(17)).toBe('consumer');
    expect(isDeviceRole('storage')).toBe(true);
    expect(isDeviceRole('battery')).toBe(false);
    expect(isDeviceRole(null)).toBe(false);
  });

  it('gives a location one grid meter: the first energy meter by id, unless one was chosen', () => {
    const roles = locationRoles([
      { id: 7, typeCode: 16 },
      { id: 3, typeCode: 13 },
      { id: 5, typeCode: 10 },
      { id: 9, typeCode: 1, role: 'storage' },
    ]);
    expect(Object.fromEntries(roles)).toEqual({ 3: 'grid', 5: 'production', 7: 'consumer', 9: 'storage' });
    const chosen = locationRoles([
      { id: 3, typeCode: 13 },
      { id: 7, typeCode: 1, role: 'grid' },
    ]);
    expect(Object.fromEntries(chosen)).toEqual({ 3: 'consumer', 7: 'grid' });
  });
});

describe('one step', () => {
  it('a sunny hour with export: production serves the home, the rest goes to the grid', () => {
    const s = step({ export: 2, production: 3 });
    expect(homeConsumption(s)).toBe(1);
    expect(allocateStep(s)).toEqual({
      productionToHome: 1,
      productionToBattery: 0,
      productionToGrid: 2,
      batteryToHome: 0,
      batteryToGrid: 0,
      gridToHome: 0,
      gridToBattery: 0,
    });
  });

  it('a sunny hour charging the battery: home first, then the battery, then the grid', () => {
    const s = step({ export: 0.5, production: 3, charge: 1.5 });
    expect(homeConsumption(s)).toBe(1);
    expect(allocateStep(s)).toMatchObject({
      productionToHome: 1,
      productionToBattery: 1.5,
      productionToGrid: 0.5,
    });
  });

  it('a night on the battery: the battery serves the home before the grid does', () => {
    const s = step({ import: 0.1, discharge: 0.9 });
    expect(homeConsumption(s)).toBe(1);
    expect(close(allocateStep(s))).toMatchObject({ batteryToHome: 0.9, gridToHome: 0.1, batteryToGrid: 0 });
    // A battery discharging more than the home uses feeds the grid with the rest.
    expect(allocateStep(step({ export: 0.5, discharge: 1.5 }))).toMatchObject({
      batteryToHome: 1,
      batteryToGrid: 0.5,
      gridToHome: 0,
    });
    // Charged from the grid at night.
    expect(allocateStep(step({ import: 2, charge: 1.5 }))).toMatchObject({
      gridToHome: 0.5,
      gridToBattery: 1.5,
      productionToBattery: 0,
    });
  });

  it('nets import against export inside a step, and never allocates a negative flow', () => {
    // Imported 1 in the morning, exported 1 at noon of the same hour: the hour's home used 2, all from PV.
    expect(allocateStep(step({ import: 1, export: 1, production: 2 }))).toMatchObject({
      productionToHome: 2,
      gridToHome: 0,
      productionToGrid: 0,
    });
    // Meters that disagree (more exported than produced): the home counts as zero, every flow ≥ 0.
    const odd = step({ export: 3, production: 2 });
    expect(homeConsumption(odd)).toBe(-1);
    const a = allocateStep(odd)!;
    expect(Object.values(a).every((v) => v >= 0)).toBe(true);
    expect(a.productionToGrid).toBe(2);
  });

  it('knows nothing of a step without the grid meter', () => {
    expect(homeConsumption(step({ import: null, export: null, production: 2 }))).toBeNull();
    expect(allocateStep(step({ import: null, export: null, production: 2 }))).toBeNull();
  });
});

describe('an interval', () => {
  it('a sunny day: the flows are allocated hour by hour, then summed (docs/domain.md worked example)', () => {
    const day = summarizeFlows([
      step({ import: 0.8, production: 0.2, subMeters: 0.5 }), // the evening
      step({ export: 2, production: 3, subMeters: 0.4 }), // noon
    ]);
    expect(close(day)).toEqual({
      import: 0.8,
      export: 2,
      production: 3.2,
      charge: 0,
      discharge: 0,
      subMeters: 0.9,
      consumption: 2,
      untracked: 1.1,
      selfConsumption: 0.375,
      selfSufficiency: 0.6,
      flows: {
        productionToHome: 1.2,
        productionToBattery: 0,
        productionToGrid: 2,
        batteryToHome: 0,
        batteryToGrid: 0,
        gridToHome: 0.8,
        gridToBattery: 0,
      },
      inconsistent: false,
    });
    // Allocated from the day's totals instead, production would seem to cover the whole home.
    expect(allocateStep(step({ import: 0.8, export: 2, production: 3.2 }))!.productionToHome).toBe(2);
  });

  it('reports a sub-meter reading more than the home as an inconsistency, never hides it', () => {
    const hour = summarizeFlows([step({ import: 1, subMeters: 1.3 })]);
    expect(close(hour.untracked)).toBe(-0.3);
    expect(hour.inconsistent).toBe(true);
    expect(summarizeFlows([step({ import: 1, subMeters: 1 })]).inconsistent).toBe(false);
  });

  it('keeps the shares within 0–1 and null where the divisor is zero', () => {
    // A battery exporting more than the PV produced: self-consumption would be negative.
    const s = summarizeFlows([step({ export: 2, production: 1, discharge: 2 })]);
    expect(s.selfConsumption).toBe(0);
    // Charging from the grid: more imported than the home used.
    expect(summarizeFlows([step({ import: 3, charge: 2 })]).selfSufficiency).toBe(0);
    const night = summarizeFlows([step({ import: 1 })]);
    expect(night.selfConsumption).toBeNull();
    expect(night.selfSufficiency).toBe(0);
    const none = summarizeFlows([]);
    expect(none).toMatchObject({ consumption: null, selfSufficiency: null, flows: null, untracked: null });
  });

  it('sums the known steps: an hour without the grid meter leaves the others counted', () => {
    const s = summarizeFlows([step({ import: 1 }), step({ import: null, export: null, production: 0.5 })]);
    expect(s).toMatchObject({ import: 1, production: 0.5, consumption: 1 });
    expect(s.flows?.gridToHome).toBe(1);
    // The production of the hour the grid meter missed shifts no share: none was known to be used.
    expect(s.selfConsumption).toBeNull();
    expect(s.selfSufficiency).toBe(0);
  });

  it('sums a DST day of 23 hours and of 25 hours into local days', () => {
    const tz = 'Europe/Warsaw';
    for (const [from, to, hours] of [
      [Date.UTC(2027, 2, 26, 23), Date.UTC(2027, 2, 29, 22), [24, 23, 24]],
      [Date.UTC(2027, 9, 29, 22), Date.UTC(2027, 10, 1, 23), [24, 25, 24]],
    ] as const) {
      const days = calendarBuckets(from, to, 'day', tz);
      const starts: number[] = [];
      const steps: FlowStep[] = [];
      for (let t = from; t < to; t += HOUR_MS) {
        starts.push(t);
        steps.push(step({ import: 1, subMeters: 0.5 }));
      }
      const summed = flowsByInterval(starts, steps, days);
      expect(summed.map((d) => d.consumption)).toEqual(hours);
      expect(summed.map((d) => d.untracked)).toEqual(hours.map((h) => h / 2));
      expect(summed.map((d) => d.flows?.gridToHome)).toEqual(hours);
    }
  });

  it('leaves out steps outside the intervals', () => {
    const intervals = { starts: [10, 20], end: 30 };
    const summed = flowsByInterval(
      [0, 10, 15, 20, 30],
      [0, 1, 2, 3, 4].map((i) => step({ import: i })),
      intervals,
    );
    expect(summed.map((d) => d.import)).toEqual([3, 3]);
  });

  it('gives the same numbers column by column (flowSeries) as interval by interval, nulls and DST included', () => {
    const tz = 'Europe/Warsaw';
    const from = Date.UTC(2027, 2, 20, 23);
    const to = Date.UTC(2027, 3, 3, 22);
    // A deterministic mix: sun by day, a battery both ways, a grid meter missing some hours, odd sub-meters.
    let seed = 42;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const starts: number[] = [];
    const steps: FlowStep[] = [];
    for (let t = from; t < to; t += HOUR_MS / 4) {
      starts.push(t);
      const gridKnown = rnd() > 0.05;
      steps.push({
        import: gridKnown ? rnd() * 2 : null,
        export: gridKnown ? rnd() * 1.5 : null,
        production: rnd() > 0.5 ? rnd() * 3 : 0,
        charge: rnd() > 0.7 ? rnd() : 0,
        discharge: rnd() > 0.7 ? rnd() : 0,
        subMeters: rnd() > 0.1 ? rnd() * 2 : null,
      });
    }
    const columns = Object.fromEntries(
      (['import', 'export', 'production', 'charge', 'discharge', 'subMeters'] as const).map((key) => [
        key,
        steps.map((s) => s[key]),
      ]),
    ) as Record<keyof FlowStep, (number | null)[]>;
    for (const intervals of [
      calendarBuckets(from, to, 'day', tz),
      { starts: starts.filter((_, i) => i % 4 === 0), end: to },
    ]) {
      const one = flowsByInterval(starts, steps, intervals);
      const cols = flowSeries(starts, columns, intervals);
      const keys = [
        'import',
        'export',
        'production',
        'charge',
        'discharge',
        'subMeters',
        'consumption',
        'untracked',
        'selfConsumption',
        'selfSufficiency',
        'inconsistent',
      ] as const;
      for (const key of keys) expect(close(cols[key]), key).toEqual(close(one.map((s) => s[key])));
      for (const key of FLOW_KEYS)
        expect(close(cols.flows[key]), key).toEqual(close(one.map((s) => s.flows?.[key] ?? null)));
      expect(one.some((s) => s.inconsistent)).toBe(true);
    }
  });
});
