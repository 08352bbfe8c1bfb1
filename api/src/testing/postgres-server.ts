/**
 * Vitest global setup: one throwaway PostgreSQL 15 server (Debian package) per test run, on a free
 * loopback port, data and socket in a temp dir. PostgreSQL refuses to run as root, so as root it runs
 * as the `postgres` OS user. Without the binaries the PostgreSQL half of the suite is skipped with a
 * message — except under CI=true, where that is a failure.
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@kilowatch/testkit';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of the shared PostgreSQL server, null when none runs. */
    pgUrl: string | null;
    /** A freshly initialised PGlite data directory (tar), so each test file skips initdb. */
    pgliteDump: string | null;
  }
}

const BIN = process.env.KW_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** initdb in WASM takes seconds; do it once per run and let every test file load the result. */
async function pgliteTemplate(): Promise<{ file: string; remove(): void }> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create();
  const dump = await db.dumpDataDir('none');
  await db.close();
  const dir = mkdtempSync(path.join(tmpdir(), 'kw-pglite-'));
  const file = path.join(dir, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  const watchdog = removeWhenGone(`rm -rf '${dir}'`);
  return {
    file,
    remove: () => {
      watchdog.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `cleanup` once this process is gone, even when it is killed without running its teardown. */
function removeWhenGone(cleanup: string) {
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

export default async function setup(project: TestProject) {
  const template = await pgliteTemplate();
  project.provide('pgliteDump', template.file);
  const postgresTeardown = await startPostgres(project);
  return () => {
    template.remove();
    postgresTeardown?.();
  };
}

async function startPostgres(project: TestProject): Promise<(() => void) | undefined> {
  if (!existsSync(path.join(BIN, 'initdb'))) {
    if (process.env.CI === 'true')
      throw new Error(`PostgreSQL binaries not found in ${BIN} (apt-get install postgresql)`);
    console.warn(`[api] PostgreSQL not found in ${BIN}: repository tests run on PGlite only`);
    project.provide('pgUrl', null);
    return;
  }
  const server = await startPostgresServer();
  project.provide('pgUrl', server.url);
  return () => server.remove();
}

/** Whether the PostgreSQL binaries are installed (CI=true requires them). */
export function postgresInstalled(): boolean {
  if (existsSync(path.join(BIN, 'initdb'))) return true;
  if (process.env.CI === 'true')
    throw new Error(`PostgreSQL binaries not found in ${BIN} (apt-get install postgresql)`);
  return false;
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
