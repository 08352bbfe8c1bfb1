import type { Tariff } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import {
  effectiveSchedule,
  isDateString,
  parseDecimal,
  priceError,
  type TariffValues,
  tariffRequest,
  tariffValues,
  validateTariff,
} from './tariffForm.ts';

const valid: TariffValues = {
  name: 'G12 2026',
  group: 'G12',
  operator: 'PGE',
  zone1Price: '1.05',
  zone2Price: '0,62',
  zone3Price: '',
  fixedPrice: '24.5',
  currency: 'PLN',
  validFrom: '2026-01-01',
  validTo: '',
};

describe('validateTariff', () => {
  it('accepts a complete G12 tariff (zone 3 unused)', () => {
    expect(validateTariff(valid, [1, 2])).toEqual({});
  });

  it.each([
    { change: { name: '  ' }, field: 'name', id: 'val.required' },
    { change: { name: 'x'.repeat(101) }, field: 'name', id: 'places.val.tooLong' },
    { change: { zone1Price: '' }, field: 'zone1Price', id: 'val.required' },
    { change: { zone2Price: 'abc' }, field: 'zone2Price', id: 'val.number' },
    { change: { zone2Price: '-1' }, field: 'zone2Price', id: 'val.range' },
    { change: { fixedPrice: '2000000' }, field: 'fixedPrice', id: 'val.range' },
    { change: { currency: 'zł' }, field: 'currency', id: 'places.val.currency' },
    { change: { validFrom: '' }, field: 'validFrom', id: 'val.required' },
    { change: { validFrom: '2026-02-30' }, field: 'validFrom', id: 'places.val.date' },
    { change: { validTo: '2025-12-31' }, field: 'validTo', id: 'places.val.validTo' },
    { change: { validTo: '2026-01-01' }, field: 'validTo', id: 'places.val.validTo' },
    { change: { operator: 'o'.repeat(51) }, field: 'operator', id: 'places.val.tooLong' },
  ] as const)('$field: $id', ({ change, field, id }) => {
    const errors = validateTariff({ ...valid, ...change }, [1, 2]);
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field]?.id).toBe(id);
  });

  it('asks only for the prices of the zones in use', () => {
    const g11 = { ...valid, group: 'G11' as const, zone2Price: '' };
    expect(validateTariff(g11, [1])).toEqual({});
    expect(validateTariff(g11, [1, 2]).zone2Price?.id).toBe('val.required');
    expect(validateTariff({ ...valid, zone3Price: '' }, [1, 2, 3]).zone3Price?.id).toBe('val.required');
  });

  it('gives the range in the message values', () => {
    expect(validateTariff({ ...valid, zone1Price: '-0.1' }, [1, 2]).zone1Price).toEqual({
      id: 'val.range',
      values: { min: 0, max: 1_000_000 },
    });
  });
});

describe('parsing', () => {
  it.each([
    ['1.5', 1.5],
    ['1,5', 1.5],
    [' 2 ', 2],
    ['.5', 0.5],
    ['1e3', Number.NaN],
    ['1.2.3', Number.NaN],
    ['', Number.NaN],
  ])('parseDecimal(%j) = %d', (s, n) => {
    expect(parseDecimal(s)).toBe(n);
  });

  it.each([
    ['2026-02-28', true],
    ['2028-02-29', true],
    ['2026-02-29', false],
    ['2026-13-01', false],
    ['26-01-01', false],
  ])('isDateString(%j) = %s', (s, ok) => {
    expect(isDateString(s)).toBe(ok);
  });

  it('priceError accepts zero', () => {
    expect(priceError('0')).toBeUndefined();
  });
});

const existing: Tariff = {
  id: 7,
  locationId: 3,
  name: 'Old',
  group: 'G12w',
  operator: 'Enea',
  zone1Price: 1,
  zone2Price: 0.5,
  zone3Price: 0,
  fixedPrice: 10,
  currency: 'PLN',
  validFrom: '2025-01-01',
  validTo: null,
  clockBasis: 'cet',
  schedule: { weekday: [{ from: '22:00', to: '06:00', zone: 2 }] },
  simulated: true,
};

describe('tariffRequest', () => {
  it('builds the body with numbers, a null end and an upper-case currency', () => {
    expect(tariffRequest({ ...valid, currency: 'pln', operator: ' ' })).toEqual({
      name: 'G12 2026',
      group: 'G12',
      operator: null,
      zone1Price: 1.05,
      zone2Price: 0.62,
      zone3Price: 0,
      fixedPrice: 24.5,
      currency: 'PLN',
      validFrom: '2026-01-01',
      validTo: null,
      clockBasis: 'local',
      schedule: null,
    });
  });

  it('takes Enea’s CET clock for a new tariff', () => {
    expect(tariffRequest({ ...valid, operator: 'Enea' }).clockBasis).toBe('cet');
  });

  it('keeps edited zone windows only while the group stays', () => {
    expect(effectiveSchedule({ group: 'G12w' }, existing)).toEqual(existing.schedule);
    expect(effectiveSchedule({ group: 'G12' }, existing)).toBeNull();
    expect(tariffRequest({ ...tariffValues(existing, '2026-01-01') }, existing).schedule).toEqual(
      existing.schedule,
    );
  });

  it('round-trips an existing tariff through the form values', () => {
    const body = tariffRequest(tariffValues(existing, '2026-01-01'), existing);
    expect(body).toMatchObject({ name: 'Old', group: 'G12w', zone2Price: 0.5, clockBasis: 'cet' });
  });
});
