import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  ENV_NAMES,
  type EnvName,
  envDefault,
  memorySizeBytes,
  settingsFromEnv,
} from './config.ts';

const parse = (env: Record<string, string>) => settingsFromEnv(env, 'host-a');

/** The problems a start would be refused for, as `NAME: expected …` lines. */
function problems(env: Record<string, string>): ConfigError['problems'] {
  try {
    parse(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(env)} to be refused`);
}

describe('settingsFromEnv', () => {
  it('runs embedded with the documented defaults when nothing is set', () => {
    const s = parse({});
    expect(s).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      role: 'all',
      embedded: true,
      dataDir: './data',
      influx: undefined,
      duckdbMemoryLimit: '384MB',
      duckdbIdleMemoryLimit: '64MB',
      duckdbBulkMemoryLimit: '192MB',
      mqttPort: 1883,
      mqttHost: '127.0.0.1',
      mqttPublic: { port: 1883, tls: false },
      mqttTls: undefined,
      ingestClientId: 'kilowatch-ingest',
      ingestSessionExpirySeconds: 600,
      ingestShared: false,
      publishLive: false,
      rollupIntervalMs: 60_000,
      demo: true,
      demoHistoryDays: 365,
      simulatorIntervalMs: 10_000,
      allowedOrigins: [],
      publicUrl: 'http://127.0.0.1:8080',
      trustProxy: false,
      logLevel: 'info',
    });
  });

  it('resolves a server deployment: InfluxDB with its retention policy, shared ingest, live readings', () => {
    const s = parse({
      KW_ROLE: 'ingest',
      MQTT_URL: 'mqtt://mosquitto:1883',
      INFLUX_URL: 'http://influxdb:8086',
      INFLUX_DB: 'kw',
      INFLUX_USER: 'u',
      INFLUX_PASSWORD: 'p',
      INFLUX_RP: 'two_years',
      DATABASE_URL: 'postgres://kw:pw@postgres:5432/kw',
      KW_INGEST_SESSION_EXPIRY_S: '120',
      KW_ROLLUP_INTERVAL_MS: '0',
      KW_TRUST_PROXY: '10.0.0.0/8, 172.16.0.1',
    });
    expect(s).toMatchObject({
      embedded: false,
      influx: {
        url: 'http://influxdb:8086',
        database: 'kw',
        username: 'u',
        password: 'p',
        retentionPolicy: 'two_years',
      },
      ingestClientId: 'kilowatch-ingest-host-a',
      ingestSessionExpirySeconds: 120,
      ingestShared: true,
      publishLive: true,
      rollupIntervalMs: 0,
      demo: false,
      trustProxy: ['10.0.0.0/8', '172.16.0.1'],
      mqttPublic: { port: 1883, tls: false },
    });
    expect(parse({ INFLUX_URL: 'http://i:8086', INFLUX_TOKEN: 't' }).rollupIntervalMs).toBe(10_000);
    expect(parse({ DATABASE_URL: 'postgres://kw@pg/kw' }).rollupIntervalMs).toBe(60_000);
    expect(parse({ INFLUX_URL: 'http://i:8086', INFLUX_TOKEN: 't' }).influx).toEqual({
      url: 'http://i:8086',
      database: 'kilowatch',
      token: 't',
    });
  });

  it('reads every on/off variable the same way, and counts an empty value as unset', () => {
    for (const name of ['KW_DEMO', 'KW_INGEST_SHARED', 'KW_PUBLISH_LIVE'] as const) {
      const key = { KW_DEMO: 'demo', KW_INGEST_SHARED: 'ingestShared', KW_PUBLISH_LIVE: 'publishLive' }[name];
      for (const on of ['on', 'true', 'yes', '1', ' ON ', 'True'])
        expect(parse({ [name]: on })[key as 'demo']).toBe(true);
      for (const off of ['off', 'false', 'no', '0', 'OFF'])
        expect(parse({ [name]: off })[key as 'demo']).toBe(false);
    }
    expect(parse({ KW_DEMO: '' }).demo).toBe(true);
    expect(parse({ PORT: '' }).port).toBe(8080);
  });

  it('takes the idle memory limit of DuckDB, or off', () => {
    expect(parse({ KW_DUCKDB_IDLE_MEMORY_LIMIT: '128MB' }).duckdbIdleMemoryLimit).toBe('128MB');
    expect(parse({ KW_DUCKDB_IDLE_MEMORY_LIMIT: 'OFF' }).duckdbIdleMemoryLimit).toBeUndefined();
  });

  it('takes the bulk memory limit of DuckDB, or off', () => {
    expect(parse({}).duckdbBulkMemoryLimit).toBe('192MB');
    expect(parse({ KW_DUCKDB_BULK_MEMORY_LIMIT: '256MB' }).duckdbBulkMemoryLimit).toBe('256MB');
    expect(parse({ KW_DUCKDB_BULK_MEMORY_LIMIT: 'off' }).duckdbBulkMemoryLimit).toBeUndefined();
  });

  it('reads a memory size in bytes as DuckDB does', () => {
    expect(memorySizeBytes('64MB')).toBe(64_000_000);
    expect(memorySizeBytes('64MiB')).toBe(64 * 2 ** 20);
    expect(memorySizeBytes(' 1.5GiB ')).toBe(1.5 * 2 ** 30);
    expect(memorySizeBytes('512 mb')).toBe(512_000_000);
    expect(memorySizeBytes('100B')).toBe(100);
    expect(memorySizeBytes('80%')).toBeNaN();
  });

  it('takes KW_MQTT_PUBLIC_URL, else the external broker’s port and TLS', () => {
    expect(parse({ KW_MQTT_PUBLIC_URL: 'mqtts://meters.example.com' }).mqttPublic).toEqual({
      host: 'meters.example.com',
      port: 8883,
      tls: true,
    });
    expect(parse({ MQTT_URL: 'mqtts://broker:8884' }).mqttPublic).toEqual({ port: 8884, tls: true });
    expect(parse({ KW_MQTT_PORT: '0' }).mqttPublic).toEqual({ port: 0, tls: false });
  });

  it("takes the embedded broker's TLS listener, and then tells meters to use it", () => {
    const tls = {
      KW_MQTT_TLS_PORT: '8883',
      KW_MQTT_TLS_CERT: '/certs/fullchain.pem',
      KW_MQTT_TLS_KEY: '/certs/privkey.pem',
    };
    expect(parse(tls)).toMatchObject({
      mqttPort: 1883,
      mqttTls: { port: 8883, certFile: '/certs/fullchain.pem', keyFile: '/certs/privkey.pem' },
      mqttPublic: { port: 8883, tls: true },
    });
    expect(parse({ ...tls, KW_MQTT_PUBLIC_URL: 'mqtt://meters.lan:1883' }).mqttPublic).toEqual({
      host: 'meters.lan',
      port: 1883,
      tls: false,
    });
    expect(problems({ ...tls, KW_MQTT_TLS_PORT: '1883' })).toEqual([
      {
        name: 'KW_MQTT_TLS_PORT',
        value: '1883',
        expected: "a port other than KW_MQTT_PORT's (1883): plain MQTT listens there",
      },
    ]);
    expect(problems({ ...tls, KW_MQTT_TLS_PORT: '88833' })).toEqual([
      { name: 'KW_MQTT_TLS_PORT', value: '88833', expected: 'a whole number from 0 to 65535' },
    ]);
    expect(problems({ ...tls, KW_MQTT_TLS_KEY: ' ' })).toEqual([
      {
        name: 'KW_MQTT_TLS_KEY',
        value: undefined,
        expected: 'a file with the private key (PEM), since KW_MQTT_TLS_PORT is set',
      },
    ]);
  });

  it.each([
    [
      { KW_MQTT_TLS_PORT: '8883' },
      [
        {
          name: 'KW_MQTT_TLS_CERT',
          value: undefined,
          expected: 'a file with the certificate chain (PEM), since KW_MQTT_TLS_PORT is set',
        },
        {
          name: 'KW_MQTT_TLS_KEY',
          value: undefined,
          expected: 'a file with the private key (PEM), since KW_MQTT_TLS_PORT is set',
        },
      ],
    ],
    [
      { KW_MQTT_TLS_CERT: '/c.pem', KW_MQTT_TLS_KEY: '/k.pem' },
      [
        {
          name: 'KW_MQTT_TLS_PORT',
          value: undefined,
          expected:
            "a port for the embedded broker's TLS listener (e.g. 8883), since KW_MQTT_TLS_CERT and KW_MQTT_TLS_KEY are set",
        },
      ],
    ],
    [
      {
        MQTT_URL: 'mqtt://mosquitto:1883',
        KW_MQTT_TLS_PORT: '8883',
        KW_MQTT_TLS_CERT: '/c.pem',
        KW_MQTT_TLS_KEY: '/k.pem',
      },
      ['KW_MQTT_TLS_PORT', 'KW_MQTT_TLS_CERT', 'KW_MQTT_TLS_KEY'].map((name) => ({
        name,
        value: { KW_MQTT_TLS_PORT: '8883', KW_MQTT_TLS_CERT: '/c.pem', KW_MQTT_TLS_KEY: '/k.pem' }[name],
        expected:
          "unset when MQTT_URL is set (it is the embedded broker's; the external broker's TLS is set up in its own configuration, e.g. deploy/mosquitto.conf)",
      })),
    ],
  ])('refuses an incomplete or misplaced TLS listener %j', (env, expected) => {
    expect(problems(env)).toEqual(expected);
  });

  it.each([
    ['KW_DEMO', 'maybe', 'on or off (also true/false, yes/no, 1/0)'],
    ['KW_INGEST_SHARED', 'enabled', 'on or off (also true/false, yes/no, 1/0)'],
    ['KW_PUBLISH_LIVE', '2', 'on or off (also true/false, yes/no, 1/0)'],
    ['KW_ROLE', 'worker', 'all, api or ingest'],
    ['PORT', '80a', 'a whole number from 0 to 65535'],
    ['PORT', '70000', 'a whole number from 0 to 65535'],
    ['KW_MQTT_PORT', '-1', 'a whole number from 0 to 65535'],
    ['KW_ROLLUP_INTERVAL_MS', 'soon', 'a whole number of milliseconds from 0 to 86400000'],
    ['KW_INGEST_SESSION_EXPIRY_S', '1.5', 'a whole number of seconds from 0 to 4294967295'],
    ['KW_DEMO_HISTORY_DAYS', '0', 'a whole number of days from 1 to 3660'],
    ['KW_SIM_INTERVAL_MS', '10', 'a whole number of milliseconds from 100 to 3600000'],
    ['KW_DUCKDB_MEMORY_LIMIT', '80%', 'a size such as 512MB or 2GB'],
    ['KW_DUCKDB_IDLE_MEMORY_LIMIT', 'none', 'a size such as 64MB, or off'],
    ['KW_DUCKDB_BULK_MEMORY_LIMIT', 'half', 'a size such as 192MB, or off'],
    [
      'KW_TRUST_PROXY',
      'the proxy',
      'on, off, a number of proxy hops, or proxy addresses/CIDRs separated by commas',
    ],
    [
      'MQTT_URL',
      'mosquitto:1883',
      'a URL starting with mqtt:// or mqtts:// or tcp:// or ssl:// or tls:// (e.g. mqtt://mosquitto:1883)',
    ],
    ['INFLUX_URL', 'influxdb:8086', 'a URL starting with http:// or https:// (e.g. http://influxdb:8086)'],
    [
      'KW_PUBLIC_URL',
      'kilowatch.example.org',
      'a URL starting with http:// or https:// (e.g. https://kilowatch.example.org)',
    ],
    ['KW_INGEST_CLIENT_ID', 'ingest one', 'an MQTT client id: 1–128 printable characters, no spaces'],
    ['LOG_LEVEL', 'verbose', 'fatal, error, warn, info, debug, trace or silent'],
  ])('refuses %s=%j, saying what is expected', (name, value, expected) => {
    expect(problems({ [name]: value })).toEqual([{ name, value, expected }]);
  });

  it('names every wrong variable at once, one line each, and never echoes a secret', () => {
    let message = '';
    try {
      parse({ KW_DEMO: 'maybe', PORT: 'http', DATABASE_URL: 'mysql://root:hunter2@db/kw' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.split('\n')).toEqual([
      'the configuration is wrong (docs/configuration.md):',
      '  PORT="http": expected a whole number from 0 to 65535',
      '  DATABASE_URL="(hidden)": expected a URL starting with postgres:// or postgresql:// (e.g. postgres://user:password@host:5432/kilowatch)',
      '  KW_DEMO="maybe": expected on or off (also true/false, yes/no, 1/0)',
    ]);
    expect(message).not.toContain('hunter2');
  });

  it.each([
    [
      { INFLUX_URL: 'http://i:8086', INFLUX_USER: 'kw' },
      [{ name: 'INFLUX_PASSWORD', value: undefined, expected: 'a password, since INFLUX_USER is set' }],
    ],
    [
      { INFLUX_URL: 'http://i:8086', INFLUX_PASSWORD: 'pw' },
      [{ name: 'INFLUX_USER', value: undefined, expected: 'a user name, since INFLUX_PASSWORD is set' }],
    ],
    [
      { INFLUX_URL: 'http://i:8086', INFLUX_TOKEN: 't', INFLUX_USER: 'kw', INFLUX_PASSWORD: 'pw' },
      [
        {
          name: 'INFLUX_USER',
          value: 'kw',
          expected: 'unset when INFLUX_TOKEN is set (a token, or INFLUX_USER with INFLUX_PASSWORD, not both)',
        },
      ],
    ],
    [
      { INFLUX_RP: 'two_years' },
      [
        {
          name: 'INFLUX_URL',
          value: undefined,
          expected: 'the InfluxDB address (e.g. http://influxdb:8086), since INFLUX_RP is set',
        },
      ],
    ],
    [
      { MQTT_URL: 'mqtt://m:1883', KW_MQTT_USERNAME: 'kilowatch' },
      [{ name: 'KW_MQTT_PASSWORD', value: undefined, expected: 'a password, since KW_MQTT_USERNAME is set' }],
    ],
  ])('refuses half-set credentials %j', (env, expected) => {
    expect(problems(env)).toEqual(expected);
  });
});

/** The rows of the markdown tables in `file` whose first cell is one backticked variable name. */
function documented(file: string): Map<string, { defaultCell: string }> {
  const rows = new Map<string, { defaultCell: string }>();
  const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
  for (const line of text.split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/.exec(line);
    if (m) rows.set(m[1]!, { defaultCell: m[2]!.trim() });
  }
  return rows;
}

describe('the configuration tables', () => {
  const docs = documented('docs/configuration.md');

  it('docs/configuration.md documents every variable of the schema, and only those', () => {
    expect([...docs.keys()].sort()).toEqual([...ENV_NAMES].sort());
  });

  it.each([['docs/configuration.md'], ['README.md']])(
    '%s gives each variable the schema’s default',
    (file) => {
      const rows = documented(file);
      expect(rows.size).toBeGreaterThan(0);
      for (const [name, { defaultCell }] of rows) {
        expect(ENV_NAMES, `${file}: ${name} is not in the schema`).toContain(name);
        const dflt = envDefault(name as EnvName);
        if (dflt === undefined) {
          // No fixed default: the table says what happens when it is unset.
          expect(defaultCell, `${file}: ${name}`).not.toBe('');
          expect(defaultCell, `${file}: ${name}`).not.toMatch(/^`[^`]*`$/);
        } else {
          expect(defaultCell, `${file}: ${name}`).toBe(`\`${dflt}\``);
        }
      }
    },
  );

  it('every default in the schema passes the schema', () => {
    for (const name of ENV_NAMES) {
      const dflt = envDefault(name);
      if (dflt !== undefined) expect(() => parse({ [name]: dflt }), name).not.toThrow();
    }
  });
});
