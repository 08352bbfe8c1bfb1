import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { UpdateUserRequestSchema } from './account.ts';
import { ClaimDeviceRequestSchema, LimitsSchema } from './devices.ts';
import { TariffRequestSchema } from './locations.ts';
import { MESSAGES } from './messages.ts';

function messages(schema: v.GenericSchema, input: unknown): Record<string, string[]> {
  const r = v.safeParse(schema, input);
  const out: Record<string, string[]> = {};
  for (const issue of r.issues ?? []) {
    const key = issue.path?.map((p) => String(p.key)).join('.') ?? '_';
    out[key] = [...(out[key] ?? []), issue.message];
  }
  return out;
}

describe('limit values (docs/spec.md §5)', () => {
  it.each([
    [{ warning: 10, critical: 15 }, {}],
    [{ warning: 0, critical: 100 }, {}],
    [{ warning: 50, critical: 51 }, {}],
    [
      { warning: 15, critical: 15 },
      { warning: [MESSAGES.warningBelowCritical], critical: [MESSAGES.criticalAboveWarning] },
    ],
    [{ warning: 50.5, critical: 60 }, { warning: [MESSAGES.warningRange] }],
    [{ warning: 10, critical: -5 }, { critical: [MESSAGES.criticalRange] }],
    [
      { warning: 60, critical: 120 },
      { warning: [MESSAGES.warningRange], critical: [MESSAGES.criticalRange] },
    ],
    [{ warning: Number.NaN, critical: 20 }, { warning: [MESSAGES.validNumber] }],
    [{ warning: '5', critical: 20 }, { warning: [MESSAGES.validNumber] }],
  ])('%j → %j', (input, expected) => {
    expect(messages(LimitsSchema, input)).toEqual(expected);
  });
});

describe('request schemas', () => {
  it('normalise and validate a claim', () => {
    const out = v.parse(ClaimDeviceRequestSchema, {
      mac: ' AA-BB-CC-DD-EE-FF ',
      name: ' Meter ',
      typeCode: 16,
    });
    expect(out).toMatchObject({
      mac: 'AA-BB-CC-DD-EE-FF',
      name: 'Meter',
      phases: 3,
      locationId: null,
      model: '',
    });
    expect(messages(ClaimDeviceRequestSchema, { mac: 'AA:BB', name: 'x', typeCode: 1 })).toEqual({
      mac: [MESSAGES.invalidMac],
    });
  });

  it('require country and timezone on a profile update', () => {
    expect(
      messages(UpdateUserRequestSchema, {
        fullName: 'A',
        country: ' ',
        timezone: 'Europe/Nowhere',
        language: 'pl',
      }),
    ).toEqual({
      country: [MESSAGES.countryRequired],
      timezone: [MESSAGES.timezoneRequired],
    });
  });

  it('default a tariff and check its validity dates', () => {
    const t = v.parse(TariffRequestSchema, {
      name: 'G11',
      group: 'G11',
      zone1Price: 0.9,
      validFrom: '2026-01-01',
    });
    expect(t).toMatchObject({
      zone2Price: 0,
      zone3Price: 0,
      fixedPrice: 0,
      currency: 'PLN',
      clockBasis: 'local',
      validTo: null,
    });
    expect(messages(TariffRequestSchema, { ...t, validTo: '2026-01-01' })).toEqual({
      validTo: [MESSAGES.invalidDate],
    });
    expect(messages(TariffRequestSchema, { ...t, validFrom: '2026-02-29' })).toEqual({
      validFrom: [MESSAGES.invalidDate],
    });
  });
});
