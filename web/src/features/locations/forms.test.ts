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
  settlementScheme: 'none',
  installedKw: '',
  settlementSince: '',
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
    {
      change: { settlementScheme: 'net-metering', installedKw: '', settlementSince: '2024-01-01' },
      field: 'installedKw',
      id: 'val.required',
    },
    {
      change: { settlementScheme: 'net-metering', installedKw: '60', settlementSince: '2024-01-01' },
      field: 'installedKw',
      id: 'places.val.installedKw',
    },
    {
      change: { settlementScheme: 'net-metering', installedKw: 'x', settlementSince: '2024-01-01' },
      field: 'installedKw',
      id: 'places.val.installedKw',
    },
    {
      change: { settlementScheme: 'net-billing', settlementSince: '' },
      field: 'settlementSince',
      id: 'val.required',
    },
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
      settlement: { scheme: 'none', installedKw: null, since: null },
    });
    expect(locationRequest({ ...location, tariffId: null }).tariffId).toBeNull();
  });

  it('sends the settlement: installed power only for net-metering, read with a decimal comma', () => {
    const metering = {
      ...location,
      settlementScheme: 'net-metering',
      installedKw: '8,5',
      settlementSince: '2021-06-01',
    } as const;
    expect(validateLocation(metering)).toEqual({});
    expect(locationRequest(metering).settlement).toEqual({
      scheme: 'net-metering',
      installedKw: 8.5,
      since: '2021-06-01',
    });
    expect(locationRequest({ ...metering, settlementScheme: 'net-billing' }).settlement).toEqual({
      scheme: 'net-billing',
      installedKw: null,
      since: '2021-06-01',
    });
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
