/**
 * The whole environment of a Kilowatch process (docs/configuration.md), as one schema. Every role (`all`,
 * `api`, `ingest`) starts from `settingsFromEnv`, so a variable means the same in each: flags take the same
 * words everywhere, and a value the schema does not know stops the start with one line per wrong variable
 * (its name, what it was, what is expected). No I/O here: the caller passes the environment and host name.
 */
import * as v from 'valibot';
import type { SettlementRules } from './settlement.ts';

/** `on`/`off` and the usual spellings of both; anything else is an error, never a guess. */
const ON = ['on', 'true', 'yes', '1'];
const OFF = ['off', 'false', 'no', '0'];
const flag = () =>
  v.pipe(
    v.string(),
    v.trim(),
    v.toLowerCase(),
    v.picklist([...ON, ...OFF], 'on or off (also true/false, yes/no, 1/0)'),
    v.transform((s) => ON.includes(s)),
  );

const whole = (min: number, max: number, unit = '') =>
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^\d+$/, `a whole number${unit} from ${min} to ${max}`),
    v.transform(Number),
    v.minValue(min, `a whole number${unit} from ${min} to ${max}`),
    v.maxValue(max, `a whole number${unit} from ${min} to ${max}`),
  );

/** A size in bytes: `500000000`, `500M`, `2G` (K, M, G: powers of 1,024). */
const byteSize = () =>
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^\d+[KMG]?$/i, 'a size in bytes such as 500000000, 500M or 2G'),
    v.transform((s) => {
      const unit = { K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[s.slice(-1).toUpperCase()];
      return unit ? Number(s.slice(0, -1)) * unit : Number(s);
    }),
    v.minValue(1, 'a size in bytes such as 500000000, 500M or 2G, above 0'),
  );

/** A decimal number from `min` to `max` (a dot as the decimal point). */
const decimal = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^\d+(\.\d+)?$/, `a number from ${min} to ${max}, e.g. ${min === 0 ? '0.8' : min}`),
    v.transform(Number),
    v.minValue(min, `a number from ${min} to ${max}`),
    v.maxValue(max, `a number from ${min} to ${max}`),
  );

/** A calendar day `YYYY-MM-DD`. */
const day = () =>
  v.pipe(
    v.string(),
    v.trim(),
    v.regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, 'a day as YYYY-MM-DD, e.g. 2024-07-01'),
  );

const text = (expected = 'a non-empty value') => v.pipe(v.string(), v.trim(), v.nonEmpty(expected));

const url = (protocols: string[], example: string) =>
  v.pipe(
    v.string(),
    v.trim(),
    v.check(
      (s) => {
        try {
          return protocols.includes(new URL(s).protocol);
        } catch {
          return false;
        }
      },
      `a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')} (e.g. ${example})`,
    ),
  );

/** Whether `s` is a size DuckDB's `memory_limit` takes: a number and a unit (`512MB`, `1.5GiB`). */
export const isMemorySize = (s: string): boolean =>
  /^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(s.trim());

/** The bytes of a memory size as DuckDB reads it (`64MB` = 64,000,000; `64MiB` = 64 × 2²⁰); NaN if not one. */
export function memorySizeBytes(s: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(I?)B$/i.exec(s.trim());
  if (!m) return Number.NaN;
  const power = ' KMGT'.indexOf(m[2]!.toUpperCase() || ' ');
  return Number(m[1]) * (m[3] ? 1024 : 1000) ** power;
}

/**
 * `KW_TRUST_PROXY`: off → trust nobody; on → any proxy (only when nothing else can reach the port); a
 * number → that many proxy hops; otherwise a comma-separated list of proxy addresses or CIDRs.
 */
const trustProxy = v.pipe(
  v.string(),
  v.trim(),
  v.transform((raw): boolean | number | string[] | null => {
    const s = raw.toLowerCase();
    if (OFF.includes(s)) return false;
    if (ON.includes(s)) return true;
    if (/^[1-9]\d*$/.test(s)) return Number(s);
    const list = raw
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    const address = (a: string) =>
      /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a) || ['loopback', 'linklocal', 'uniquelocal'].includes(a);
    return list.length > 0 && list.every(address) ? list : null;
  }),
  v.check((t) => t !== null, 'on, off, a number of proxy hops, or proxy addresses/CIDRs separated by commas'),
  v.transform((t) => t as boolean | number | string[]),
);

const list = v.pipe(
  v.string(),
  v.transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  ),
);

/**
 * Every variable Kilowatch reads, with its default where it has a fixed one (docs/configuration.md lists
 * the same names and defaults; a test holds them together). Defaults that depend on other variables
 * (embedded or not, the role, the host name) are derived in `settingsFromEnv`.
 */
export const ENVIRONMENT = v.object({
  PORT: v.optional(whole(0, 65535), '8080'),
  HOST: v.optional(text('an address to listen on, e.g. 0.0.0.0'), '127.0.0.1'),
  KW_ROLE: v.optional(v.picklist(['all', 'api', 'ingest'], 'all, api or ingest'), 'all'),
  KW_DATA_DIR: v.optional(text('a directory'), './data'),
  DATABASE_URL: v.optional(url(['postgres:', 'postgresql:'], 'postgres://user:password@host:5432/kilowatch')),
  INFLUX_URL: v.optional(url(['http:', 'https:'], 'http://influxdb:8086')),
  INFLUX_DB: v.optional(text('a database name'), 'kilowatch'),
  INFLUX_TOKEN: v.optional(text('a token')),
  INFLUX_USER: v.optional(text('a user name')),
  INFLUX_PASSWORD: v.optional(v.string()),
  INFLUX_RP: v.optional(text('a retention policy name')),
  KW_DUCKDB_MEMORY_LIMIT: v.optional(
    v.pipe(v.string(), v.trim(), v.check(isMemorySize, 'a size such as 512MB or 2GB')),
    '384MB',
  ),
  KW_DUCKDB_IDLE_MEMORY_LIMIT: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.check((s) => s.toLowerCase() === 'off' || isMemorySize(s), 'a size such as 64MB, or off'),
    ),
    '64MB',
  ),
  KW_DUCKDB_BULK_MEMORY_LIMIT: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.check((s) => s.toLowerCase() === 'off' || isMemorySize(s), 'a size such as 192MB, or off'),
    ),
    '192MB',
  ),
  MQTT_URL: v.optional(url(['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'tls:'], 'mqtt://mosquitto:1883')),
  KW_MQTT_PORT: v.optional(whole(0, 65535), '1883'),
  KW_MQTT_HOST: v.optional(text('an address to listen on, e.g. 0.0.0.0'), '127.0.0.1'),
  KW_MQTT_TLS_PORT: v.optional(whole(0, 65535)),
  KW_MQTT_TLS_CERT: v.optional(text('a file with the certificate chain (PEM)')),
  KW_MQTT_TLS_KEY: v.optional(text('a file with the private key (PEM)')),
  KW_MQTT_PUBLIC_URL: v.optional(
    url(['mqtt:', 'mqtts:', 'tcp:', 'ssl:', 'tls:'], 'mqtts://meters.example.com:8883'),
  ),
  KW_MQTT_USERNAME: v.optional(text('a user name')),
  KW_MQTT_PASSWORD: v.optional(v.string()),
  KW_MQTT_ADMIN_USERNAME: v.optional(text('a user name')),
  KW_MQTT_ADMIN_PASSWORD: v.optional(v.string()),
  KW_INGEST_CLIENT_ID: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^[!-~]{1,128}$/, 'an MQTT client id: 1–128 printable characters, no spaces'),
    ),
  ),
  KW_INGEST_SESSION_EXPIRY_S: v.optional(whole(0, 4_294_967_295, ' of seconds'), '600'),
  KW_INGEST_SHARED: v.optional(flag()),
  KW_METER_READINGS_PER_S: v.optional(whole(0, 1_000_000, ' of readings'), '20'),
  KW_METER_READINGS_BURST: v.optional(whole(1, 100_000_000, ' of readings'), '30000'),
  KW_METER_BACKDATED_PER_S: v.optional(whole(0, 1_000_000, ' of readings'), '2'),
  KW_METER_BACKDATED_BURST: v.optional(whole(1, 100_000_000, ' of readings'), '30000'),
  KW_METER_BACKDATED_AFTER_S: v.optional(whole(1, 31_622_400, ' of seconds'), '3600'),
  KW_PUBLISH_LIVE: v.optional(flag()),
  KW_ROLLUP_INTERVAL_MS: v.optional(whole(0, 86_400_000, ' of milliseconds')),
  KW_DEMO: v.optional(flag()),
  KW_DEMO_HISTORY_DAYS: v.optional(whole(1, 3660, ' of days'), '365'),
  KW_DEMO_SIGNINS_PER_MINUTE: v.optional(whole(1, 1_000_000, ' of sign-ins'), '10'),
  KW_DEMO_MAX_WORKSPACES: v.optional(whole(1, 1_000_000, ' of workspaces'), '500'),
  KW_DEMO_WORKSPACE_IDLE_H: v.optional(whole(1, 8760, ' of hours'), '24'),
  KW_SIM_INTERVAL_MS: v.optional(whole(100, 3_600_000, ' of milliseconds'), '10000'),
  KW_ALLOWED_ORIGINS: v.optional(list),
  KW_PUBLIC_URL: v.optional(url(['http:', 'https:'], 'https://kilowatch.example.org')),
  SMTP_URL: v.optional(url(['smtp:', 'smtps:'], 'smtp://user:password@mail.example.org:587')),
  MAIL_FROM: v.optional(
    text('a sender, e.g. Kilowatch <no-reply@example.org>'),
    'Kilowatch <no-reply@localhost>',
  ),
  KW_TRUST_PROXY: v.optional(trustProxy, 'off'),
  KW_WEB_DIST: v.optional(text('a directory'), './web/dist'),
  KW_EXPORT_USER_BYTES: v.optional(byteSize(), '1G'),
  KW_EXPORT_TOTAL_BYTES: v.optional(byteSize(), '10G'),
  KW_IMPORT_MAX_BYTES: v.optional(byteSize(), '256M'),
  KW_HEAVY_READS: v.optional(whole(1, 1000, ' of requests'), '4'),
  KW_HEAVY_QUEUE: v.optional(whole(0, 100_000, ' of requests'), '32'),
  KW_HEAVY_PER_USER: v.optional(whole(1, 100_000, ' of requests'), '8'),
  KW_HEAVY_WAIT_MS: v.optional(whole(1, 3_600_000, ' of milliseconds'), '20000'),
  KW_QUOTA_DEVICES: v.optional(whole(0, 1_000_000, ' of devices'), '500'),
  KW_QUOTA_LOCATIONS: v.optional(whole(0, 1_000_000, ' of locations'), '50'),
  KW_QUOTA_TARIFFS: v.optional(whole(0, 1_000_000, ' of tariffs'), '200'),
  KW_QUOTA_COMPARISONS: v.optional(whole(0, 1_000_000, ' of comparisons'), '100'),
  KW_QUOTA_API_KEYS: v.optional(whole(0, 20, ' of API keys'), '20'),
  KW_DEMO_QUOTA_DEVICES: v.optional(whole(0, 1_000_000, ' of devices'), '10'),
  KW_DEMO_QUOTA_LOCATIONS: v.optional(whole(0, 1_000_000, ' of locations'), '5'),
  KW_DEMO_QUOTA_TARIFFS: v.optional(whole(0, 1_000_000, ' of tariffs'), '20'),
  KW_DEMO_QUOTA_COMPARISONS: v.optional(whole(0, 1_000_000, ' of comparisons'), '10'),
  KW_DEMO_QUOTA_API_KEYS: v.optional(whole(0, 20, ' of API keys'), '20'),
  KW_SETTLEMENT_SMALL_RATIO: v.optional(decimal(0, 1), '0.8'),
  KW_SETTLEMENT_LARGE_RATIO: v.optional(decimal(0, 1), '0.7'),
  KW_SETTLEMENT_SMALL_UP_TO_KW: v.optional(decimal(0, 1_000_000), '10'),
  KW_SETTLEMENT_CREDIT_MONTHS: v.optional(whole(1, 120, ' of months'), '12'),
  KW_SETTLEMENT_HOURLY_PRICE_FROM: v.optional(day(), '2024-07-01'),
  KW_SETTLEMENT_PRICE_FACTOR: v.optional(decimal(0, 100), '1'),
  LOG_LEVEL: v.optional(
    v.picklist(
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'fatal, error, warn, info, debug, trace or silent',
    ),
    'info',
  ),
  KW_LOG_FORMAT: v.optional(v.picklist(['json', 'pretty'], 'json or pretty')),
});

/** The variable names the schema knows. */
export type EnvName = keyof typeof ENVIRONMENT.entries;
export const ENV_NAMES = Object.keys(ENVIRONMENT.entries) as EnvName[];

/** A variable's fixed default as written in the environment, or undefined when it has none or a derived one. */
export function envDefault(name: EnvName): string | undefined {
  return v.getDefault(ENVIRONMENT.entries[name]) as string | undefined;
}

/** Values never echoed in an error (they may hold a password). */
const SECRET = new Set<string>([
  'DATABASE_URL',
  'INFLUX_TOKEN',
  'INFLUX_PASSWORD',
  'KW_MQTT_PASSWORD',
  'SMTP_URL',
]);

export interface ConfigProblem {
  name: string;
  /** The value as set, or `(hidden)` for a secret; undefined when the variable is missing. */
  value: string | undefined;
  expected: string;
}

/** A start refused for its configuration: one problem per wrong variable. */
export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(
      `the configuration is wrong (docs/configuration.md):\n${problems
        .map(
          (p) =>
            `  ${p.name}${p.value === undefined ? ' is not set' : `="${p.value}"`}: expected ${p.expected}`,
        )
        .join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

export type Role = 'all' | 'api' | 'ingest';

/** The resolved configuration every role starts from. Paths are as given (the caller resolves them). */
/** What an account may hold of each kind it creates (docs/api.md §Conventions, Quotas). */
export type QuotaKind = 'devices' | 'locations' | 'tariffs' | 'comparisons' | 'apiKeys';
export interface Quotas {
  account: Record<QuotaKind, number>;
  /** A demo visitor's workspace: smaller. */
  demo: Record<QuotaKind, number>;
}
export const DEFAULT_QUOTAS: Quotas = {
  account: { devices: 500, locations: 50, tariffs: 200, comparisons: 100, apiKeys: 20 },
  // API keys cost nothing but a row and are capped at 20 anyway; the profile screen tells of that cap.
  demo: { devices: 10, locations: 5, tariffs: 20, comparisons: 10, apiKeys: 20 },
};

export interface ServerSettings {
  port: number;
  host: string;
  role: Role;
  /** No DATABASE_URL, INFLUX_URL or MQTT_URL: one process with the embedded broker, DuckDB and PGlite. */
  embedded: boolean;
  dataDir: string;
  databaseUrl: string | undefined;
  influx:
    | {
        url: string;
        database: string;
        token?: string;
        username?: string;
        password?: string;
        retentionPolicy?: string;
      }
    | undefined;
  duckdbMemoryLimit: string;
  /** What DuckDB keeps cached once idle (trimmed after 15 s without a query); undefined: no trim. */
  duckdbIdleMemoryLimit: string | undefined;
  /** DuckDB's limit while history is bulk-loaded and its rollups refreshed (`off`: the memory limit). */
  duckdbBulkMemoryLimit: string | undefined;
  mqttUrl: string | undefined;
  /** The embedded broker's port and listen address. */
  mqttPort: number;
  mqttHost: string;
  /**
   * The embedded broker's TLS listener (on `mqttHost`): its port and the files of its certificate chain and
   * private key (PEM), read at start. Undefined: plain MQTT only.
   */
  mqttTls: { port: number; certFile: string; keyFile: string } | undefined;
  /** Where meters connect, as the claim answer tells them. No host: the host the client reached the API on. */
  mqttPublic: { host?: string; port: number; tls: boolean };
  /** The services' MQTT account; generated at start when embedded. */
  mqttService: { username: string; password: string } | undefined;
  /**
   * The Mosquitto dynamic-security admin: with it the API keeps meters' accounts on an external broker in
   * step; without it they are only stored.
   */
  mqttAdmin: { username: string; password: string } | undefined;
  ingestClientId: string;
  ingestSessionExpirySeconds: number;
  /** Shared subscription (`$share/kilowatch-ingest/…`) across ingest processes. */
  ingestShared: boolean;
  /**
   * Each meter's write budget in ingest (`KW_METER_*`): readings a second and at once, and how many of
   * them may be older than `backdatedAfterMs`. A rate of 0 bounds nothing.
   */
  meterLimits: {
    readingsPerSecond: number;
    readingsBurst: number;
    backdatedPerSecond: number;
    backdatedBurst: number;
    backdatedAfterMs: number;
  };
  /** Publish committed readings on `kilowatch/live/<deviceKey>` for API processes. */
  publishLive: boolean;
  rollupIntervalMs: number;
  demo: boolean;
  demoHistoryDays: number;
  /** Demo sign-ins one address may make in a minute (each creates a workspace). */
  demoSignInRateLimit: { max: number; windowMs: number };
  /** Demo workspaces at once, and how long one lives after its last sign-in or token refresh. */
  demoWorkspaces: { max: number; idleMs: number };
  simulatorIntervalMs: number;
  allowedOrigins: string[];
  publicUrl: string;
  smtpUrl: string | undefined;
  mailFrom: string;
  trustProxy: boolean | number | string[];
  webDist: string;
  logLevel: string;
  /** `json` or `pretty` (one line of text per entry); unset: pretty on a terminal, JSON otherwise. */
  logFormat: 'json' | 'pretty' | undefined;
  /** Bytes of export files one user may keep, finished and being written. */
  exportUserBytes: number;
  /** Bytes of export files all users together may keep. */
  exportTotalBytes: number;
  /** Bytes of one history-import file at most. */
  importMaxBytes: number;
  /** Heavy reads (long telemetry ranges, analytics) answered at once. */
  heavyReads: number;
  /** Heavy reads waiting for their turn; more are answered 503. */
  heavyQueue: number;
  /** Heavy reads one user may have running and waiting; more are answered 503. */
  heavyPerUser: number;
  /** The longest a heavy read waits for its turn before it is answered 503. */
  heavyWaitMs: number;
  /** What one account may create (`KW_QUOTA_*`), and a demo workspace (`KW_DEMO_QUOTA_*`). */
  quotas: Quotas;
  /** Prosumer settlement's coefficients and dates (`KW_SETTLEMENT_*`, docs/domain.md §Prosumer settlement). */
  settlement: SettlementRules;
}

function mqttEndpoint(raw: string): { host: string; port: number; tls: boolean } {
  const u = new URL(raw);
  const tls = ['mqtts:', 'ssl:', 'tls:'].includes(u.protocol);
  return { host: u.hostname, port: u.port ? Number(u.port) : tls ? 8883 : 1883, tls };
}

/**
 * The environment, checked and resolved. Empty values count as unset (compose writes `VAR: ""` for an
 * unset `${VAR:-}`). Throws a `ConfigError` listing every wrong variable.
 */
export function settingsFromEnv(env: Record<string, string | undefined>, hostname: string): ServerSettings {
  const raw: Record<string, string> = {};
  for (const name of ENV_NAMES) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') raw[name] = value;
  }
  const problems: ConfigProblem[] = [];
  const shown = (name: string) => (SECRET.has(name) ? '(hidden)' : raw[name]);
  const parsed = v.safeParse(ENVIRONMENT, raw);
  if (!parsed.success) {
    for (const issue of parsed.issues) {
      const name = String(issue.path?.[0]?.key ?? '?');
      if (!problems.some((p) => p.name === name))
        problems.push({ name, value: shown(name), expected: issue.message });
    }
  }
  // Variables that only make sense together.
  const together = (name: string, other: string, expected: string) => {
    if (raw[name] !== undefined && raw[other] === undefined)
      problems.push({ name: other, value: undefined, expected });
  };
  if (raw.INFLUX_TOKEN !== undefined && raw.INFLUX_USER !== undefined)
    problems.push({
      name: 'INFLUX_USER',
      value: raw.INFLUX_USER,
      expected: 'unset when INFLUX_TOKEN is set (a token, or INFLUX_USER with INFLUX_PASSWORD, not both)',
    });
  together('INFLUX_USER', 'INFLUX_PASSWORD', 'a password, since INFLUX_USER is set');
  together('INFLUX_PASSWORD', 'INFLUX_USER', 'a user name, since INFLUX_PASSWORD is set');
  for (const name of ['INFLUX_TOKEN', 'INFLUX_USER', 'INFLUX_PASSWORD', 'INFLUX_RP'])
    together(name, 'INFLUX_URL', `the InfluxDB address (e.g. http://influxdb:8086), since ${name} is set`);
  together('KW_MQTT_USERNAME', 'KW_MQTT_PASSWORD', 'a password, since KW_MQTT_USERNAME is set');
  together('KW_MQTT_PASSWORD', 'KW_MQTT_USERNAME', 'a user name, since KW_MQTT_PASSWORD is set');
  together(
    'KW_MQTT_ADMIN_USERNAME',
    'KW_MQTT_ADMIN_PASSWORD',
    'a password, since KW_MQTT_ADMIN_USERNAME is set',
  );
  together(
    'KW_MQTT_ADMIN_PASSWORD',
    'KW_MQTT_ADMIN_USERNAME',
    'a user name, since KW_MQTT_ADMIN_PASSWORD is set',
  );
  // The embedded broker's TLS listener: a port, a certificate and its key, all three or none.
  const tlsFiles = ['KW_MQTT_TLS_CERT', 'KW_MQTT_TLS_KEY'].filter((name) => raw[name] !== undefined);
  if (tlsFiles.length > 0 && raw.KW_MQTT_TLS_PORT === undefined)
    problems.push({
      name: 'KW_MQTT_TLS_PORT',
      value: undefined,
      expected: `a port for the embedded broker's TLS listener (e.g. 8883), since ${tlsFiles.join(' and ')} ${tlsFiles.length > 1 ? 'are' : 'is'} set`,
    });
  together(
    'KW_MQTT_TLS_PORT',
    'KW_MQTT_TLS_CERT',
    'a file with the certificate chain (PEM), since KW_MQTT_TLS_PORT is set',
  );
  together(
    'KW_MQTT_TLS_PORT',
    'KW_MQTT_TLS_KEY',
    'a file with the private key (PEM), since KW_MQTT_TLS_PORT is set',
  );
  if (raw.MQTT_URL !== undefined)
    for (const name of ['KW_MQTT_TLS_PORT', 'KW_MQTT_TLS_CERT', 'KW_MQTT_TLS_KEY'])
      if (raw[name] !== undefined)
        problems.push({
          name,
          value: raw[name],
          expected:
            "unset when MQTT_URL is set (it is the embedded broker's; the external broker's TLS is set up in its own configuration, e.g. deploy/mosquitto.conf)",
        });
  if (parsed.success && parsed.output.KW_MQTT_TLS_PORT !== undefined) {
    const { KW_MQTT_TLS_PORT: tlsPort, KW_MQTT_PORT: plainPort } = parsed.output;
    if (tlsPort !== 0 && tlsPort === plainPort)
      problems.push({
        name: 'KW_MQTT_TLS_PORT',
        value: raw.KW_MQTT_TLS_PORT,
        expected: `a port other than KW_MQTT_PORT's (${plainPort}): plain MQTT listens there`,
      });
  }
  if (problems.length > 0 || !parsed.success) throw new ConfigError(problems);

  const e = parsed.output;
  const embedded = !e.DATABASE_URL && !e.INFLUX_URL && !e.MQTT_URL;
  const mqttPort = e.KW_MQTT_PORT;
  const host = e.HOST;
  const port = e.PORT;
  const mqttTls =
    e.KW_MQTT_TLS_PORT !== undefined && e.KW_MQTT_TLS_CERT && e.KW_MQTT_TLS_KEY
      ? { port: e.KW_MQTT_TLS_PORT, certFile: e.KW_MQTT_TLS_CERT, keyFile: e.KW_MQTT_TLS_KEY }
      : undefined;
  // With a TLS listener, meters are told to use it.
  const mqttPublic = e.KW_MQTT_PUBLIC_URL
    ? mqttEndpoint(e.KW_MQTT_PUBLIC_URL)
    : e.MQTT_URL
      ? (({ port, tls }) => ({ port, tls }))(mqttEndpoint(e.MQTT_URL))
      : mqttTls
        ? { port: mqttTls.port, tls: true }
        : { port: mqttPort, tls: false };
  return {
    port,
    host,
    role: e.KW_ROLE,
    embedded,
    dataDir: e.KW_DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    influx: e.INFLUX_URL
      ? {
          url: e.INFLUX_URL,
          database: e.INFLUX_DB,
          ...(e.INFLUX_TOKEN ? { token: e.INFLUX_TOKEN } : {}),
          ...(e.INFLUX_USER ? { username: e.INFLUX_USER, password: e.INFLUX_PASSWORD ?? '' } : {}),
          ...(e.INFLUX_RP ? { retentionPolicy: e.INFLUX_RP } : {}),
        }
      : undefined,
    duckdbMemoryLimit: e.KW_DUCKDB_MEMORY_LIMIT,
    duckdbIdleMemoryLimit:
      e.KW_DUCKDB_IDLE_MEMORY_LIMIT.toLowerCase() === 'off' ? undefined : e.KW_DUCKDB_IDLE_MEMORY_LIMIT,
    duckdbBulkMemoryLimit:
      e.KW_DUCKDB_BULK_MEMORY_LIMIT.toLowerCase() === 'off' ? undefined : e.KW_DUCKDB_BULK_MEMORY_LIMIT,
    mqttUrl: e.MQTT_URL,
    mqttPort,
    mqttHost: e.KW_MQTT_HOST,
    mqttTls,
    mqttPublic,
    mqttService: e.KW_MQTT_USERNAME
      ? { username: e.KW_MQTT_USERNAME, password: e.KW_MQTT_PASSWORD ?? '' }
      : undefined,
    mqttAdmin: e.KW_MQTT_ADMIN_USERNAME
      ? { username: e.KW_MQTT_ADMIN_USERNAME, password: e.KW_MQTT_ADMIN_PASSWORD ?? '' }
      : undefined,
    // The ingest's MQTT session. One per ingest process: two processes with one client id would take the
    // session from each other endlessly. Stable across restarts of the same host, so what the broker
    // queued for it while it was down is delivered when it is back.
    ingestClientId:
      e.KW_INGEST_CLIENT_ID ??
      (embedded
        ? 'kilowatch-ingest'
        : `kilowatch-ingest-${hostname.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40)}`),
    // How long the broker keeps a crashed ingest's session (and its place in the shared group) for a
    // restart under the same id; a graceful stop leaves at once.
    ingestSessionExpirySeconds: e.KW_INGEST_SESSION_EXPIRY_S,
    ingestShared: e.KW_INGEST_SHARED ?? !embedded,
    meterLimits: {
      readingsPerSecond: e.KW_METER_READINGS_PER_S,
      readingsBurst: e.KW_METER_READINGS_BURST,
      backdatedPerSecond: e.KW_METER_BACKDATED_PER_S,
      backdatedBurst: e.KW_METER_BACKDATED_BURST,
      backdatedAfterMs: e.KW_METER_BACKDATED_AFTER_S * 1000,
    },
    publishLive: e.KW_PUBLISH_LIVE ?? Boolean(e.MQTT_URL),
    // 0: this process refreshes no rollups (another one does, or a separate job). On DuckDB a refresh
    // costs about the same whether it covers 10 s or 60 s of readings (planning the counter-step query
    // dominates: ~100 ms of CPU per meter), so it runs every minute; on InfluxDB every 10 s.
    rollupIntervalMs: e.KW_ROLLUP_INTERVAL_MS ?? (e.INFLUX_URL ? 10_000 : 60_000),
    demo: e.KW_DEMO ?? embedded,
    demoHistoryDays: e.KW_DEMO_HISTORY_DAYS,
    demoSignInRateLimit: { max: e.KW_DEMO_SIGNINS_PER_MINUTE, windowMs: 60_000 },
    demoWorkspaces: { max: e.KW_DEMO_MAX_WORKSPACES, idleMs: e.KW_DEMO_WORKSPACE_IDLE_H * 3_600_000 },
    simulatorIntervalMs: e.KW_SIM_INTERVAL_MS,
    allowedOrigins: e.KW_ALLOWED_ORIGINS ?? [],
    publicUrl: e.KW_PUBLIC_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    trustProxy: e.KW_TRUST_PROXY,
    webDist: e.KW_WEB_DIST,
    logLevel: e.LOG_LEVEL,
    logFormat: e.KW_LOG_FORMAT,
    exportUserBytes: e.KW_EXPORT_USER_BYTES,
    exportTotalBytes: e.KW_EXPORT_TOTAL_BYTES,
    importMaxBytes: e.KW_IMPORT_MAX_BYTES,
    heavyReads: e.KW_HEAVY_READS,
    heavyQueue: e.KW_HEAVY_QUEUE,
    heavyPerUser: e.KW_HEAVY_PER_USER,
    heavyWaitMs: e.KW_HEAVY_WAIT_MS,
    quotas: {
      account: {
        devices: e.KW_QUOTA_DEVICES,
        locations: e.KW_QUOTA_LOCATIONS,
        tariffs: e.KW_QUOTA_TARIFFS,
        comparisons: e.KW_QUOTA_COMPARISONS,
        apiKeys: e.KW_QUOTA_API_KEYS,
      },
      demo: {
        devices: e.KW_DEMO_QUOTA_DEVICES,
        locations: e.KW_DEMO_QUOTA_LOCATIONS,
        tariffs: e.KW_DEMO_QUOTA_TARIFFS,
        comparisons: e.KW_DEMO_QUOTA_COMPARISONS,
        apiKeys: e.KW_DEMO_QUOTA_API_KEYS,
      },
    },
    settlement: {
      smallRatio: e.KW_SETTLEMENT_SMALL_RATIO,
      largeRatio: e.KW_SETTLEMENT_LARGE_RATIO,
      smallUpToKw: e.KW_SETTLEMENT_SMALL_UP_TO_KW,
      creditMonths: e.KW_SETTLEMENT_CREDIT_MONTHS,
      hourlyPriceFrom: e.KW_SETTLEMENT_HOURLY_PRICE_FROM,
      priceFactor: e.KW_SETTLEMENT_PRICE_FACTOR,
    },
  };
}
