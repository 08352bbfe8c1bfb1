import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { SCREENS, screenFor } from './screens.ts';

describe('screenFor', () => {
  it.each([
    ['/dashboard', '/dashboard'],
    ['/dashboard/', '/dashboard'],
    ['/device-details/12', '/device-details/$id'],
    ['/solar-device-details/abc', '/solar-device-details/$id'],
    ['/device/overview/7', '/device/overview/$id'],
    ['/device/data-log', '/device/data-log'],
    ['/location/tariff-edit/3/9', '/location/tariff-edit/$locationId/$tariffId'],
    ['/404', '/404'],
  ])('%s → %s', (pathname, path) => {
    expect(screenFor(pathname)?.path).toBe(path);
  });

  it.each(['/nowhere', '/device-details', '/device-details/1/2', '/location/tariff-edit/3', '/sign-in'])(
    '%s matches no screen',
    (pathname) => {
      expect(screenFor(pathname)).toBeUndefined();
    },
  );
});

describe('the data log address', () => {
  const search = SCREENS.find((s) => s.path === '/device/data-log')?.search;

  it('reads ?device=6 (parsed as a number) and ?device="6" alike', () => {
    expect(search).toBeDefined();
    expect(v.parse(search!, { device: 6 })).toEqual({ device: '6' });
    expect(v.parse(search!, { device: '6' })).toEqual({ device: '6' });
  });

  it('drops an id that does not fit rather than fail the screen', () => {
    expect(v.parse(search!, { device: 'abc' })).toEqual({ device: undefined });
    expect(v.parse(search!, {})).toEqual({ device: undefined });
  });
});
