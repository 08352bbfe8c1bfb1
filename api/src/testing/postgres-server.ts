/**
 * Vitest global setup: one throwaway PostgreSQL 15 server (Debian package) per test run, on a free
 * loopback port, data and socket in a temp dir. PostgreSQL refuses to run as root, so as root it runs
 * as the `postgres` OS user. Without the binaries the PostgreSQL half of the suite is skipped with a
 * message — except under CI=true, where that is a failure.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { POSTGRES_BIN, postgresInstalled, removeWhenGone, startPostgresServer } from '@kilowatch/testkit';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection string of the shared PostgreSQL server, null when none runs. */
    pgUrl: string | null;
    /** A freshly initialised PGlite data directory (tar), so each test file skips initdb. */
    pgliteDump: string | null;
  }
}

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
  if (!postgresInstalled()) {
    console.warn(`[api] PostgreSQL not found in ${POSTGRES_BIN}: repository tests run on PGlite only`);
    project.provide('pgUrl', null);
    return;
  }
  const server = await startPostgresServer();
  project.provide('pgUrl', server.url);
  return () => server.remove();
}
