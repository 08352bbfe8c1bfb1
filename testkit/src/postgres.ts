/**
 * A throwaway PostgreSQL 15 server (Debian package) for tests: on a free loopback port, data and socket
 * in a temp dir, stopped and removed by a watchdog if the test run dies. PostgreSQL refuses to run as
 * root, so as root it runs as the `postgres` OS user. Never a mock.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './ports.ts';
import { serverMissing } from './servers.ts';

/** The PostgreSQL binaries' folder (`KW_PG_BIN`, default Debian's PostgreSQL 15). */
export const POSTGRES_BIN = process.env.KW_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const BIN = POSTGRES_BIN;

/** Runs `cleanup` once this process is gone, even when it is killed without running its teardown. */
export function removeWhenGone(cleanup: string) {
  const watchdog = spawn(
    'sh',
    ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; ${cleanup}`],
    {
      detached: true,
      stdio: 'ignore',
    },
  );
  watchdog.unref();
  return watchdog;
}

/** Whether the PostgreSQL binaries are installed (CI=true requires them). */
export function postgresInstalled(): boolean {
  if (existsSync(path.join(BIN, 'initdb'))) return true;
  return serverMissing(`PostgreSQL (${BIN}/initdb)`, 'apt-get install postgresql') ?? false;
}

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  url: string;
  /** Stops the server; `fast` ends every session with 57P01 (a restart), `immediate` is a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its files. */
  remove(): void;
}

/**
 * A throwaway PostgreSQL server of its own (the shared one of the global setup is never stopped): on a
 * free loopback port, data and socket in a temp dir, for tests that restart the server under traffic.
 */
export async function startPostgresServer(): Promise<PostgresServer> {
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) =>
    asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', path.join(BIN, cmd), ...args], { stdio: 'pipe' })
      : execFileSync(path.join(BIN, cmd), args, { stdio: 'pipe' });

  const dir = mkdtempSync(path.join(tmpdir(), 'kw-pg-'));
  if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const serverOptions = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses='127.0.0.1'",
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  const startArgs = [
    '-D',
    data,
    '-o',
    serverOptions,
    '-l',
    path.join(dir, 'server.log'),
    '-w',
    '-t',
    '60',
    'start',
  ];
  run('pg_ctl', startArgs);

  // If this test run dies without its teardown (killed), a watchdog stops the server and removes its files.
  const pgCtl = `${asRoot ? 'runuser -u postgres -- ' : ''}${path.join(BIN, 'pg_ctl')}`;
  const watchdog = removeWhenGone(`${pgCtl} -D '${data}' -m immediate stop >/dev/null 2>&1; rm -rf '${dir}'`);
  let running = true;
  /** pg_ctl without blocking the event loop: the clients under test keep running meanwhile. */
  const runAsync = (args: string[]) =>
    new Promise<void>((resolve, reject) => {
      const [file, argv] = asRoot
        ? ['runuser', ['-u', 'postgres', '--', path.join(BIN, 'pg_ctl'), ...args]]
        : [path.join(BIN, 'pg_ctl'), args];
      execFile(file as string, argv as string[], (err) => (err ? reject(err) : resolve()));
    });

  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop(mode = 'fast') {
      if (!running) return;
      running = false;
      await runAsync(['-D', data, '-m', mode, '-w', 'stop']);
    },
    async start() {
      if (running) return;
      await runAsync(startArgs);
      running = true;
    },
    remove() {
      try {
        watchdog.kill();
        if (running) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
