/** Configuration from the environment (docs/configuration.md); `buildApp` takes the parsed form. */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DEFAULT_QUOTAS,
  DEFAULT_SETTLEMENT_RULES,
  type Quotas,
  type ServerSettings,
  type SettlementRules,
  settingsFromEnv,
} from '@kilowatch/core';
import type { GrafanaLimits } from '@kilowatch/grafana';

export type { Role } from '@kilowatch/core';

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
  /** Demo sign-ins per IP (`KW_DEMO_SIGNINS_PER_MINUTE`): each creates a workspace. */
  demoSignInRateLimit: RateLimit;
  /**
   * Demo workspaces (docs/architecture.md §The demo): at most `max` at once (`KW_DEMO_MAX_WORKSPACES`), each
   * kept `idleMs` after its last sign-in or token refresh (`KW_DEMO_WORKSPACE_IDLE_H`).
   */
  demoWorkspaces: { max: number; idleMs: number };
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
  /** Bytes of export files one user may keep, finished and being written (`KW_EXPORT_USER_BYTES`). */
  exportUserBytes: number;
  /** Bytes of export files all users together may keep (`KW_EXPORT_TOTAL_BYTES`). */
  exportTotalBytes: number;
  /** Bytes of one history-import file at most (`KW_IMPORT_MAX_BYTES`; imports/service.ts). */
  importMaxBytes: number;
  /** Heavy reads answered at once (`KW_HEAVY_READS`; plugins/app/heavy-reads.ts). */
  heavyReads: number;
  /** Heavy reads waiting for their turn; more are answered 503 (`KW_HEAVY_QUEUE`). */
  heavyQueue: number;
  /** Heavy reads one user may have running and waiting; more are answered 503 (`KW_HEAVY_PER_USER`). */
  heavyPerUser: number;
  /** The longest a heavy read waits for its turn before it is answered 503 (`KW_HEAVY_WAIT_MS`). */
  heavyWaitMs: number;
  /** What one account, and a demo workspace, may create (`KW_QUOTA_*`, `KW_DEMO_QUOTA_*`; plugins/app/quotas.ts). */
  quotas: Quotas;
  /** Prosumer settlement's coefficients and dates (`KW_SETTLEMENT_*`; routes/settlement.ts). */
  settlement: SettlementRules;
  /** Bounds of the Grafana data source other than its documented defaults (@kilowatch/grafana bounds.ts). */
  grafana?: Partial<GrafanaLimits>;
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
    demoSignInRateLimit: { max: 10, windowMs: MINUTE },
    demoWorkspaces: { max: 500, idleMs: DAY },
    webDist: undefined,
    maxEventLoopDelayMs: 1000,
    trustProxy: false,
    mqttPublic: { port: 1883, tls: false },
    exportUserBytes: 1024 ** 3,
    exportTotalBytes: 10 * 1024 ** 3,
    importMaxBytes: 256 * 1024 ** 2,
    heavyReads: 4,
    heavyQueue: 32,
    heavyPerUser: 8,
    heavyWaitMs: 20_000,
    quotas: DEFAULT_QUOTAS,
    settlement: DEFAULT_SETTLEMENT_RULES,
  };
}

export type ServerConfig = AppConfig & ServerSettings;

/**
 * The environment of docs/configuration.md, checked by the one schema in core (`settingsFromEnv`: a wrong
 * variable stops the start naming it), with paths resolved against the working directory.
 */
export function configFromEnv(
  env: Record<string, string | undefined> = process.env,
  hostname: string = os.hostname(),
): ServerConfig {
  const settings = settingsFromEnv(env, hostname);
  return {
    ...defaultConfig(),
    ...settings,
    dataDir: path.resolve(settings.dataDir),
    webDist: path.resolve(settings.webDist),
  };
}
