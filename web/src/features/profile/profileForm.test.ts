import { describe, expect, it } from 'vitest';
import { countryOptions, profileRequest, validateProfile } from './profileForm.ts';

describe('validateProfile', () => {
  const profile = { fullName: 'Ada', country: 'PL', timezone: 'Europe/Warsaw', language: 'pl' as const };

  it('accepts a complete profile', () => {
    expect(validateProfile(profile)).toEqual({});
  });

  it.each([
    { change: { country: null }, field: 'country', id: 'val.country' },
    { change: { country: '  ' }, field: 'country', id: 'val.country' },
    { change: { timezone: null }, field: 'timezone', id: 'val.timezone' },
    { change: { timezone: 'Nowhere/City' }, field: 'timezone', id: 'val.timezone' },
    { change: { fullName: '' }, field: 'fullName', id: 'val.required' },
  ] as const)('$field: $id (docs/spec.md §5)', ({ change, field, id }) => {
    const errors = validateProfile({ ...profile, ...change });
    expect(Object.keys(errors)).toEqual([field]);
    expect(errors[field]?.id).toBe(id);
  });

  it('builds the update request', () => {
    expect(profileRequest({ ...profile, fullName: ' Ada ' })).toEqual({
      fullName: 'Ada',
      country: 'PL',
      timezone: 'Europe/Warsaw',
      language: 'pl',
    });
  });

  it('names countries in the interface language and keeps an unknown stored value', () => {
    const pl = countryOptions('pl', 'Atlantis');
    expect(pl.find((c) => c.value === 'DE')?.label).toBe('Niemcy (DE)');
    expect(pl.some((c) => c.value === 'Atlantis')).toBe(true);
    expect(countryOptions('en').find((c) => c.value === 'PL')?.label).toBe('Poland (PL)');
  });
});
