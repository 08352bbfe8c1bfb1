/**
 * `compose.yaml`, the broker configuration it mounts and the `Dockerfile`, read as an operator's tools
 * would read them: what README "Run it on servers" promises holds in the files themselves. (No Docker
 * here: the image's build steps themselves run in api/src/deployment.test.ts, which starts the compiled
 * server with node.)
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV_NAMES, settingsFromEnv } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  restart?: string;
  healthcheck?: { test?: unknown; disable?: boolean };
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  volumes?: (string | { source?: string; target?: string })[];
  profiles?: string[];
  ports?: unknown[];
}

// `merge: true` resolves the `<<: *kw-env` merge keys the way compose does.
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
/** Services running Kilowatch's own image: they read the environment of docs/configuration.md. */
const kilowatch = services.filter(([, s]) => s.build !== undefined);

/** A service's environment as compose hands it over when no `.env` is given: `${X:-default}` → default. */
function environment(s: Service): Record<string, string> {
  const entries = Array.isArray(s.environment)
    ? s.environment.map((e) => e.split(/=(.*)/s).slice(0, 2) as [string, string])
    : Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)] as const);
  return Object.fromEntries(
    entries.map(([k, v]) => [
      k,
      v
        .replace(/\$\{[A-Z0-9_]+(?::?-([^}]*))?\}/g, (_, d: string | undefined) => d ?? '')
        .replace(/\$\$/g, '$'),
    ]),
  );
}

describe('compose.yaml', () => {
  it('runs the api and ingest roles of Kilowatch’s image', () => {
    expect(kilowatch.map(([, s]) => environment(s).KW_ROLE).sort()).toEqual(['api', 'ingest']);
  });

  it.each(services)('%s restarts by itself', (_name, s) => {
    expect(['always', 'unless-stopped', 'on-failure']).toContain(s.restart);
  });

  it.each(services)('%s has a health check', (_name, s) => {
    expect(s.healthcheck?.test).toBeDefined();
    expect(s.healthcheck?.disable).not.toBe(true);
  });

  it.each(services)('%s waits for what it depends on to be healthy', (_name, s) => {
    if (s.depends_on === undefined) return;
    expect(Array.isArray(s.depends_on), 'depends_on with conditions, not a list').toBe(false);
    for (const [dep, { condition }] of Object.entries(
      s.depends_on as Record<string, { condition?: string }>,
    )) {
      expect(compose.services[dep], dep).toBeDefined();
      expect(condition, dep).toBe(compose.services[dep]!.healthcheck ? 'service_healthy' : 'service_started');
    }
  });

  it.each(kilowatch)('%s sets only variables the configuration schema knows, and they parse', (_name, s) => {
    const env = environment(s);
    for (const name of Object.keys(env)) expect(ENV_NAMES, name).toContain(name);
    // The defaults compose fills in are a valid configuration of that role.
    const settings = settingsFromEnv(env, 'kilowatch-ingest-1');
    expect(settings.embedded).toBe(false);
    expect(settings.databaseUrl).toBeDefined();
    expect(settings.influx).toBeDefined();
    expect(settings.mqttUrl).toBeDefined();
    expect(settings.demo).toBe(false);
  });

  it('tells the API its public address and whom to trust for client addresses', () => {
    const [, api] = kilowatch.find(([, s]) => environment(s).KW_ROLE === 'api')!;
    const env = environment(api);
    expect(env.KW_PUBLIC_URL).toMatch(/^https:\/\//);
    expect(Object.keys(env)).toContain('KW_TRUST_PROXY');
    expect(Object.keys(env)).toContain('SMTP_URL');
  });

  const brokerConf = () => {
    const [, broker] = services.find(([, s]) => s.image?.startsWith('eclipse-mosquitto'))!;
    const mount = (broker.volumes ?? [])
      .map((v) => (typeof v === 'string' ? v.split(':') : [v.source ?? '', v.target ?? '']))
      .find(([, target]) => target === '/mosquitto/config/mosquitto.conf');
    expect(mount, 'deploy/mosquitto.conf mounted').toBeDefined();
    return read(mount![0]!)
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean);
  };

  it('mounts a broker configuration that keeps what it acknowledged across a crash', () => {
    const conf = brokerConf();
    expect(conf).toContain('persistence true');
    expect(conf.some((l) => /^autosave_interval \d+$/.test(l))).toBe(true);
  });

  it("binds meters' client ids to their accounts, and gives the services a listener of their own", () => {
    const conf = brokerConf();
    const listeners = new Map<string, string[]>();
    let current: string[] | null = null;
    for (const line of conf) {
      const m = /^listener (\d+)/.exec(line);
      if (m) {
        current = [];
        listeners.set(m[1]!, current);
      } else current?.push(line);
    }
    expect(listeners.get('1883')).toContain('use_username_as_clientid true');
    expect(listeners.get('1884')).toBeDefined();
    expect(listeners.get('1884')).not.toContain('use_username_as_clientid true');
    // The commented TLS listener for meters on the internet binds them too.
    expect(read('deploy/mosquitto.conf')).toMatch(/^#listener 8883\n#use_username_as_clientid true$/m);
    for (const [, s] of kilowatch) expect(environment(s).MQTT_URL).toBe('mqtt://mosquitto:1884');
    const [, broker] = services.find(([, s]) => s.image?.startsWith('eclipse-mosquitto'))!;
    expect(JSON.stringify(broker.ports ?? [])).not.toContain('1884');
  });

  it('mounts a broker configuration that refuses anonymous clients', () => {
    expect(brokerConf().filter((l) => /^allow_anonymous\s+true$/.test(l))).toEqual([]);
  });
});

describe('Dockerfile', () => {
  const lines = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const runtime = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')));

  it('builds once and carries production dependencies only', () => {
    expect(lines.some((l) => /pnpm build\b/.test(l))).toBe(true);
    expect(lines.some((l) => /pnpm .*deploy\b.*--prod|pnpm .*--prod .*deploy\b/.test(l))).toBe(true);
    expect(runtime.some((l) => /\b(tsx|pnpm)\b/.test(l))).toBe(false);
  });

  it('runs node itself as PID 1 (exec form), as an unprivileged user', () => {
    const cmd = runtime.findLast((l) => l.startsWith('CMD ') || l.startsWith('ENTRYPOINT '));
    expect(cmd).toBeDefined();
    const argv = JSON.parse(cmd!.replace(/^(CMD|ENTRYPOINT) /, '')) as string[];
    expect(argv[0]).toBe('node');
    const user = runtime.findLast((l) => l.startsWith('USER '));
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^USER (root|0)(:|$)/);
  });

  it('keeps the build context small (.dockerignore)', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const p of ['node_modules', '.git'])
      expect(
        ignored.some((l) => l.includes(p)),
        p,
      ).toBe(true);
  });
});
