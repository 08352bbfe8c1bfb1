import { describe, expect, it } from 'vitest';
import { configFromEnv } from './config.ts';

const trustProxyFrom = (value: string) => configFromEnv({ KW_TRUST_PROXY: value }, 'h').trustProxy;

describe('the ingest MQTT client id', () => {
  it('is the fixed one when everything is embedded (one process)', () => {
    expect(configFromEnv({}, 'host-a').ingestClientId).toBe('kilowatch-ingest');
  });

  it('is one per host on an external broker, so ingest replicas do not take each other’s session', () => {
    const env = { MQTT_URL: 'mqtt://127.0.0.1:1883', KW_ROLE: 'ingest' };
    const a = configFromEnv(env, 'ingest-7f3c2a').ingestClientId;
    const b = configFromEnv(env, 'ingest-91d0e4').ingestClientId;
    expect(a).toBe('kilowatch-ingest-ingest-7f3c2a');
    expect(b).not.toBe(a);
    // Stable across restarts on the same host: the broker's queue for it is not orphaned.
    expect(configFromEnv(env, 'ingest-7f3c2a').ingestClientId).toBe(a);
    // Whatever the host is called, the id stays a plain MQTT client id.
    expect(configFromEnv(env, 'node 1.example.org').ingestClientId).toBe(
      'kilowatch-ingest-node-1-example-org',
    );
  });

  it('is what KW_INGEST_CLIENT_ID says when set (several ingest processes on one host)', () => {
    expect(
      configFromEnv({ MQTT_URL: 'mqtt://127.0.0.1:1883', KW_INGEST_CLIENT_ID: 'ingest-2' }, 'h')
        .ingestClientId,
    ).toBe('ingest-2');
  });
});

describe('KW_TRUST_PROXY', () => {
  it('is off by default and when said so', () => {
    expect(configFromEnv({}, 'h').trustProxy).toBe(false);
    for (const v of ['', 'off', '0', 'false']) expect(trustProxyFrom(v)).toBe(false);
  });

  it('takes on, a number of hops, or proxy addresses and CIDRs', () => {
    expect(trustProxyFrom('on')).toBe(true);
    expect(trustProxyFrom('2')).toBe(2);
    expect(trustProxyFrom('10.0.0.0/8, 172.16.0.1,loopback')).toEqual([
      '10.0.0.0/8',
      '172.16.0.1',
      'loopback',
    ]);
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => configFromEnv({ KW_TRUST_PROXY: 'the proxy' }, 'h')).toThrow(/KW_TRUST_PROXY/);
  });
});
