import { describe, expect, it } from 'vitest';
import { influxOptionsFromEnv } from './config.ts';

describe('influxOptionsFromEnv', () => {
  it.each([
    ['nothing set: embedded', {}, null],
    [
      '1.x with a user',
      { INFLUX_URL: 'http://influx:8086', INFLUX_DB: 'kilowatch', INFLUX_USER: 'kw', INFLUX_PASSWORD: 'pw' },
      { url: 'http://influx:8086', database: 'kilowatch', username: 'kw', password: 'pw' },
    ],
    [
      '2.x/3.x with a token',
      { INFLUX_URL: 'http://influx:8181', INFLUX_DB: 'kilowatch', INFLUX_TOKEN: 't0k' },
      { url: 'http://influx:8181', database: 'kilowatch', token: 't0k' },
    ],
    [
      'a retention policy',
      { INFLUX_URL: 'http://i:8086', INFLUX_DB: 'k', INFLUX_RP: 'two_years' },
      { url: 'http://i:8086', database: 'k', retentionPolicy: 'two_years' },
    ],
  ])('%s', (_, env, expected) => {
    expect(influxOptionsFromEnv(env)).toEqual(expected);
  });

  it.each([
    ['no database', { INFLUX_URL: 'http://i:8086' }, /INFLUX_DB/],
    [
      'token and user',
      { INFLUX_URL: 'http://i', INFLUX_DB: 'k', INFLUX_TOKEN: 't', INFLUX_USER: 'u' },
      /not both/,
    ],
  ])('refuses %s as a configuration error', (_, env, msg) => {
    expect(() => influxOptionsFromEnv(env)).toThrow(msg);
  });
});
