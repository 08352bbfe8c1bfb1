import { describe, expect, it } from 'vitest';
import { validateLimits } from './limits.ts';

describe('validateLimits', () => {
  it.each([
    { warning: '10', critical: '15', errors: {} },
    { warning: '0', critical: '100', errors: {} },
    { warning: '7,5', critical: '12', errors: {} },
    { warning: '', critical: '15', errors: { warning: 'val.required' } },
    { warning: 'abc', critical: '15', errors: { warning: 'val.number' } },
    { warning: '51', critical: '60', errors: { warning: 'val.warnRange' } },
    { warning: '-1', critical: '60', errors: { warning: 'val.warnRange' } },
    { warning: '10', critical: '101', errors: { critical: 'val.criticalRange' } },
    { warning: '10', critical: 'x', errors: { critical: 'val.number' } },
    {
      warning: '20',
      critical: '20',
      errors: { warning: 'val.warnBelowCritical', critical: 'val.criticalAboveWarn' },
    },
    {
      warning: '30',
      critical: '10',
      errors: { warning: 'val.warnBelowCritical', critical: 'val.criticalAboveWarn' },
    },
  ])('warning $warning, critical $critical', ({ warning, critical, errors }) => {
    expect(validateLimits({ warning, critical })).toEqual(errors);
  });
});
