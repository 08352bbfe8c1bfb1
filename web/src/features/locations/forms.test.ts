import { describe, expect, it } from 'vitest';
import { timeZoneOptions } from '../../shared/forms/fields.ts';
import { type LocationValues, locationRequest, validateLocation } from './forms.ts';

const location: LocationValues = {
  name: 'Home',
  code: 'GDN-01',
  address: 'ul. Długa 1',
  city: 'Gdańsk',
  timezone: 'Europe/Warsaw',
  tariffId: '4',
};

describe('validateLocation', () => {
  it('accepts a complete location', () => {
    expect(validateLocation(location)).toEqual({});
  });

  it.each([
    { change: { name: '' }, field: 'name', id: 'val.required' },
    { change: { code: 'c'.repeat(51) }, field: 'code', id: 'places.val.tooLong' },
    { change: { address: 'a'.repeat(201) }, field: 'address', id: 'places.val.tooLong' },
    { change: { city: 'c'.repeat(101) }, field: 'city', id: 'places.val.tooLong' },
    { change: { timezone: null }, field: 'timezone', id: 'val.timezone' },
    { change: { timezone: 'Mars/Olympus' }, field: 'timezone', id: 'val.timezone' },
  ] as const)('$field: $id', ({ change, field, id }) => {
    const errors = validateLocation({ ...location, ...change });
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field]?.id).toBe(id);
  });

  it('builds the request with a numeric tariff id or null', () => {
    expect(locationRequest({ ...location, name: ' Home ' })).toEqual({
      name: 'Home',
      code: 'GDN-01',
      address: 'ul. Długa 1',
      city: 'Gdańsk',
      timezone: 'Europe/Warsaw',
      tariffId: 4,
    });
    expect(locationRequest({ ...location, tariffId: null }).tariffId).toBeNull();
  });
});

describe('timeZoneOptions', () => {
  it('lists the IANA zones and keeps a stored alias', () => {
    const zones = timeZoneOptions('Etc/GMT+1');
    expect(zones).toContain('Europe/Warsaw');
    expect(zones).toContain('UTC');
    expect(zones).toContain('Etc/GMT+1');
    expect(new Set(zones).size).toBe(zones.length);
  });
});
