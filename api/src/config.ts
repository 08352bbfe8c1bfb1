/** Configuration from the environment (docs/configuration.md); `buildApp` takes the parsed form. */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { memoryLimit } from '@kilowatch/ingest';

export type Role = 'all' | 'api' | 'ingest';

export interface RateLimit {
  max: number;
  windowMs: number;
}

export interface AppConfig {
  appVersion: string;
  /** Embedded data: PGlite directory `meta`, DuckDB file, export files. */
  dataDir: string;
  /** PostgreSQL for metadata when set; PGlite otherwise. */
  databaseUrl: string | undefined;
  /** CORS and hub Origin allow-list; empty → only the served origin (no CORS headers). */
  allowedOrigins: string[];
  /** Largest accepted request body in bytes (→ 413). */
  bodyLimit: number;
  accessTokenTtlMs: number;
  /** Refresh-token lifetime without remember-me. */
  refreshTokenTtlMs: number;
  /** Refresh-token lifetime with remember-me. */
  rememberMeTtlMs: number;
  resetTokenTtlMs: number;
  /** scrypt cost; OWASP minimum N = 2^17, r = 8, p = 1. Tests lower N to stay fast. */
  scrypt: { N: number; r: number; p: number };
  /** Attempts per IP and account (email) on login, register, forgot password and refresh. */
  accountRateLimit: RateLimit;
  /** Attempts per IP alone on the same routes: wide enough for a shared address, tight for a scan. */
  ipRateLimit: RateLimit;
  /** Base of links in mails (password reset). */
  publicUrl: string;
  /** `smtp://user:pass@host:port` — mails are written to the server log when unset. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Create the demo account (embedded deployment). */
  demo: boolean;
  /** Built web client served with SPA fallback when the directory exists. */
  webDist: string | undefined;
  /** Event-loop delay (ms) above which requests get 503 with Retry-After; 0 = off. */
  maxEventLoopDelayMs: number;
  /**
   * Fastify's `trustProxy` (`KW_TRUST_PROXY`): whose `X-Forwarded-*` to believe, so that per-IP limits see
   * the client behind a reverse proxy. Off by default: a direct client could forge the header.
   */
  trustProxy: boolean | number | string[];
  /**
   * Where meters connect, as told in the claim answer (`KW_MQTT_PUBLIC_URL`, e.g. `mqtts://meters.example.com:8883`).
   * No host: the host name the client used to reach the API.
   */
  mqttPublic: { host?: string; port: number; tls: boolean };
}

const MINUTE = 60_000;
const DAY = 86_400_000;

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export function defaultConfig(): AppConfig {
  return {
    appVersion: packageVersion(),
    dataDir: path.resolve('data'),
    databaseUrl: undefined,
    allowedOrigins: [],
    bodyLimit: 1024 * 1024,
    accessTokenTtlMs: 15 * MINUTE,
    refreshTokenTtlMs: DAY,
    rememberMeTtlMs: 30 * DAY,
    resetTokenTtlMs: 60 * MINUTE,
    scrypt: { N: 2 ** 17, r: 8, p: 1 },
    accountRateLimit: { max: 10, windowMs: 15 * MINUTE },
    ipRateLimit: { max: 100, windowMs: 15 * MINUTE },
    publicUrl: 'http://127.0.0.1:8080',
    smtpUrl: undefined,
    mailFrom: 'Kilowatch <no-reply@localhost>',
    demo: false,
    webDist: undefined,
    maxEventLoopDelayMs: 1000,
    trustProxy: false,
    mqttPublic: { port: 1883, tls: false },
  };
}

function flag(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return !['0', 'false', 'off', 'no'].includes(value.toLowerCase());
}

/**
 * `KW_TRUST_PROXY`: unset or off → trust nobody; `on`/`true` → any proxy (only when nothing else can reach
 * the port); a number → that many proxy hops; otherwise a comma-separated list of proxy addresses or CIDRs.
 */
export function trustProxyFrom(raw: string | undefined): boolean | number | string[] {
  const v = (raw ?? '').trim();
  if (v === '' || ['0', 'off', 'false', 'no'].includes(v.toLowerCase())) return false;
  if (['on', 'true', 'yes'].includes(v.toLowerCase())) return true;
  if (/^[1-9]\d*$/.test(v)) return Number(v);
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const a of list)
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(a) && !['loopback', 'linklocal', 'uniquelocal'].includes(a))
      throw new Error(
        `KW_TRUST_PROXY must be on, off, a number of hops or proxy addresses/CIDRs separated by commas (got "${a}")`,
      );
  return list;
}

/** A whole number ≥ 0 from the environment, or the default; anything else stops the start naming it. */
function whole(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a whole number ≥ 0 (got "${raw}")`);
  return n;
}

/** The environment of docs/configuration.md. `embedded` is true when no external servers are configured. */
export function configFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  hostname: string = os.hostname(),
): AppConfig & {
  port: number;
  host: string;
  role: Role;
  embedded: boolean;
  mqttUrl: string | undefined;
  mqttPort: number;
  duckdbMemoryLimit: string;
  ingestClientId: string;
  ingestSessionExpirySeconds: number;
  rollupIntervalMs: number;
  /** The embedded broker's listen address (`KW_MQTT_HOST`; 0.0.0.0 lets meters on the network in). */
  mqttHost: string;
  /** The services' MQTT account (`KW_MQTT_USERNAME`, `KW_MQTT_PASSWORD`); generated when embedded. */
  mqttService: { username: string; password: string } | undefined;
} {
  const base = defaultConfig();
  const port = Number(env.PORT ?? 8080);
  const host = env.HOST ?? '127.0.0.1';
  const embedded = !env.DATABASE_URL && !env.INFLUX_URL && !env.MQTT_URL;
  const role = (env.KW_ROLE ?? 'all') as Role;
  if (!['all', 'api', 'ingest'].includes(role))
    throw new Error(`KW_ROLE must be all, api or ingest (got ${role})`);
  const mqttPort = Number(env.KW_MQTT_PORT ?? 1883);
  const publicUrl = env.KW_PUBLIC_URL ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    ...base,
    port,
    host,
    role,
    embedded,
    mqttUrl: env.MQTT_URL || undefined,
    mqttPort,
    mqttHost: env.KW_MQTT_HOST || '127.0.0.1',
    mqttService: env.KW_MQTT_USERNAME
      ? { username: env.KW_MQTT_USERNAME, password: env.KW_MQTT_PASSWORD ?? '' }
      : undefined,
    mqttPublic: mqttPublicFrom(env.KW_MQTT_PUBLIC_URL, env.MQTT_URL, mqttPort),
    // The ingest's persistent MQTT session. One per ingest process: two processes with one client id
    // would take the session from each other endlessly. Stable across restarts of the same host, so
    // what the broker queued for it while it was down is delivered when it is back.
    ingestClientId:
      env.KW_INGEST_CLIENT_ID ||
      (embedded
        ? 'kilowatch-ingest'
        : `kilowatch-ingest-${hostname.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40)}`),
    // How long the broker keeps a crashed ingest's session (and its place in the shared group) for a
    // restart under the same id; a graceful stop leaves at once.
    ingestSessionExpirySeconds: whole(env, 'KW_INGEST_SESSION_EXPIRY_S', 600),
    // 0: this process refreshes no rollups (another one does, or a separate job).
    rollupIntervalMs: whole(env, 'KW_ROLLUP_INTERVAL_MS', 10_000),
    dataDir: path.resolve(env.KW_DATA_DIR ?? 'data'),
    duckdbMemoryLimit: memoryLimit(env.KW_DUCKDB_MEMORY_LIMIT),
    databaseUrl: env.DATABASE_URL || undefined,
    allowedOrigins: (env.KW_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    publicUrl,
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM ?? base.mailFrom,
    demo: flag(env.KW_DEMO, embedded),
    webDist: path.resolve(env.KW_WEB_DIST ?? 'web/dist'),
    trustProxy: trustProxyFrom(env.KW_TRUST_PROXY),
  };
}

/** Where meters connect: `KW_MQTT_PUBLIC_URL`, else the broker's port (`MQTT_URL`'s or the embedded one's). */
export function mqttPublicFrom(
  publicUrl: string | undefined,
  mqttUrl: string | undefined,
  embeddedPort: number,
): AppConfig['mqttPublic'] {
  const parse = (raw: string, name: string) => {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new Error(`${name} must be a URL such as mqtts://meters.example.com:8883 (got "${raw}")`);
    }
    const tls = url.protocol === 'mqtts:' || url.protocol === 'ssl:' || url.protocol === 'tls:';
    if (!tls && url.protocol !== 'mqtt:' && url.protocol !== 'tcp:')
      throw new Error(`${name} must start with mqtt:// or mqtts:// (got "${raw}")`);
    return { host: url.hostname, port: url.port ? Number(url.port) : tls ? 8883 : 1883, tls };
  };
  if (publicUrl) return parse(publicUrl, 'KW_MQTT_PUBLIC_URL');
  if (mqttUrl) {
    const { port, tls } = parse(mqttUrl, 'MQTT_URL');
    return { port, tls };
  }
  return { port: embeddedPort, tls: false };
}
