/**
 * A real Mosquitto for tests and benchmarks: on a free loopback port, persistence in a temp dir,
 * anonymous or with the dynamic security plugin. Never a mock.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { serverMissing } from './servers.ts';

/** The services' account in tests: embedded brokers are started with it, legacy publishers use it. */
export const TEST_SERVICE = {
  username: 'kilowatch-test-service',
  password: 'test-service-password',
} as const;

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`);
}

export interface MosquittoServer {
  url: string;
  port: number;
  dir: string;
  /** Stops the broker (SIGTERM) and deletes its temp dir. */
  stop(): Promise<void>;
  /** Restarts on the same port and persistence. */
  restart(): Promise<void>;
  /** Stops the broker (SIGTERM), keeping its port and persistence for `start`. */
  halt(): Promise<void>;
  /** Starts a halted broker again. */
  start(): Promise<void>;
  running(): boolean;
}

/** Mosquitto's dynamic security plugin (Debian's `mosquitto` ships it), or null (`serverMissing`'s rule). */
export function findDynsecPlugin(): string | null {
  for (const c of [
    '/usr/lib/x86_64-linux-gnu/mosquitto_dynamic_security.so',
    '/usr/lib/aarch64-linux-gnu/mosquitto_dynamic_security.so',
    '/usr/lib/mosquitto_dynamic_security.so',
    '/usr/local/lib/mosquitto_dynamic_security.so',
  ])
    if (existsSync(c)) return c;
  return serverMissing('mosquitto_dynamic_security.so', 'apt-get install -y mosquitto');
}

/**
 * The dynamic security plugin's file with one admin client, as `mosquitto_ctrl dynsec init <file> <admin>`
 * writes it: PBKDF2-SHA512 (101 iterations) of the password with a random 12-byte salt, the `admin` role
 * (the `$CONTROL/dynamic-security/#` topics) and a default access that denies publishing and subscribing.
 */
export function dynsecInitFile(admin: { username: string; password: string }): string {
  const salt = randomBytes(12);
  const hash = pbkdf2Sync(admin.password, salt, 101, 64, 'sha512');
  const acl = (acltype: string, topic: string) => ({ acltype, topic, allow: true });
  return JSON.stringify(
    {
      clients: [
        {
          username: admin.username,
          textName: 'Dynsec admin user',
          password: hash.toString('base64'),
          salt: salt.toString('base64'),
          iterations: 101,
          roles: [{ rolename: 'admin' }],
        },
      ],
      roles: [
        {
          rolename: 'admin',
          acls: [
            acl('publishClientSend', '$CONTROL/dynamic-security/#'),
            acl('publishClientReceive', '$CONTROL/dynamic-security/#'),
            acl('subscribePattern', '$CONTROL/dynamic-security/#'),
          ],
        },
      ],
      defaultACLAccess: {
        publishClientSend: false,
        publishClientReceive: true,
        subscribe: false,
        unsubscribe: true,
      },
    },
    null,
    2,
  );
}

export interface MosquittoOptions {
  /**
   * Authentication by the dynamic security plugin (`plugin`: its .so) with this admin, anonymous refused.
   * Without it the broker is anonymous.
   */
  dynsec?: { plugin: string; admin: { username: string; password: string } };
  /**
   * Log lines on `$SYS/broker/log/<level>` (`log_dest topic`, levels as deploy/mosquitto.conf has them)
   * instead of none: the API reads meters' connections and refused logins there.
   */
  logTopic?: boolean;
  /**
   * Lines appended to the configuration (later settings override the harness's own). A `listener <port>`
   * among them is waited for as the harness's own is.
   */
  extraConfig?: string[];
}

/**
 * Starts `mosquitto` on a free loopback port with persistence in a temp dir: anonymous, or with the
 * dynamic security plugin (`opts.dynsec`). Inflight and queue limits are raised: ingest acknowledges after
 * commit, so mosquitto's default of 20 inflight messages per client would cap a batch at 20.
 */
export async function startMosquitto(binary: string, opts: MosquittoOptions = {}): Promise<MosquittoServer> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-mosquitto-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  if (opts.dynsec) await writeFile(join(dir, 'dynamic-security.json'), dynsecInitFile(opts.dynsec.admin));
  await writeFile(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      ...(opts.dynsec
        ? [
            'allow_anonymous false',
            `plugin ${opts.dynsec.plugin}`,
            `plugin_opt_config_file ${dir}/dynamic-security.json`,
          ]
        : ['allow_anonymous true']),
      // As root, Mosquitto would switch to the `mosquitto` user, who cannot read or write this temp dir.
      ...(process.getuid?.() === 0 ? ['user root'] : []),
      'persistence true',
      `persistence_location ${dir}/`,
      'autosave_interval 1',
      'max_inflight_messages 1000',
      'max_queued_messages 1000000',
      ...(opts.logTopic ? ['log_dest topic'] : ['log_dest none']),
      ...(opts.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  const extraPorts = (opts.extraConfig ?? []).flatMap((l) => {
    const m = /^listener (\d+)\b/.exec(l);
    return m ? [Number(m[1])] : [];
  });
  let proc: ChildProcess;
  const start = async () => {
    proc = spawn(binary, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (d) => {
      stderr += String(d);
    });
    const exited = once(proc, 'exit').then(() => {
      throw new Error(`mosquitto exited: ${stderr}`);
    });
    const ports = [port, ...extraPorts];
    await Promise.race([Promise.all(ports.map((p) => waitForPort(p, 10_000))), exited]);
    exited.catch(() => {});
  };
  const halt = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exit = once(proc, 'exit');
    proc.kill('SIGTERM');
    await exit;
  };
  await start();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    dir,
    async stop() {
      await halt();
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      await start();
    },
    halt,
    start,
    running: () => proc.exitCode === null && proc.signalCode === null,
  };
}
