// `pnpm build`: the server compiled to plain JavaScript and the web client built, so `pnpm start` (and a
// container) runs `node api/dist/main.js` without compiling TypeScript at every start.
//
// The server is an ES module bundle of api/src/main.ts (server.js, loaded by the small entry main.js that
// answers on the port while it loads: api/src/entry.ts) with Kilowatch's own packages inside it and every
// other package left to node_modules (native DuckDB, PGlite's WebAssembly, Fastify's plugins load files of
// their own), plus the bodies of the ingest decode thread and of the demo history's generation thread
// beside it. Development and tests keep running the TypeScript sources (tsx, vitest); this file runs
// under plain `node`.
//
//   node scripts/build.mjs [server|web]... (both by default)
//   node scripts/build.mjs server --outdir api/dist/x   (the server elsewhere under api/, e.g. for a test)
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_OUT = path.join(root, 'api', 'dist');
export const WEB_OUT = path.join(root, 'web', 'dist');

/** The package a bare import names (`@fastify/static/x` → `@fastify/static`). */
const packageOf = (spec) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

/**
 * The server compiled to `outdir`. `quiet`: esbuild prints nothing (`pnpm start` shows one line per step);
 * its errors are in the message it throws either way.
 */
export async function buildServer(outdir = SERVER_OUT, { quiet = false } = {}) {
  const { build } = await import('esbuild');
  const started = performance.now();
  const external = new Set();
  /** Bare imports outside Kilowatch stay imports, resolved at run time from api/node_modules. */
  const externals = {
    name: 'kilowatch-externals',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:') || builtinModules.includes(args.path)) {
          return { path: args.path, external: true };
        }
        if (args.path.startsWith('@kilowatch/')) return undefined;
        external.add(packageOf(args.path));
        return { path: args.path, external: true };
      });
    },
  };
  mkdirSync(outdir, { recursive: true });
  await build({
    absWorkingDir: root,
    entryPoints: {
      // A small entry that answers on the port at once, then loads the server beside it (api/src/entry.ts).
      main: 'api/src/entry.ts',
      server: 'api/src/main.ts',
      decodeWorker: 'ingest/src/decodeWorker.ts',
      backfillWorker: 'ingest/src/simulator/backfillWorker.ts',
      // Run once here, never by the server: makes the metadata database a first start loads.
      pgliteTemplate: 'api/src/db/pglite-template.ts',
    },
    outdir,
    bundle: true,
    splitting: false,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    // Keep names in stack traces and logs readable.
    minify: false,
    keepNames: true,
    legalComments: 'none',
    logLevel: quiet ? 'silent' : 'warning',
    plugins: [externals],
  });
  // The bundle imports these from api/: every one must be a dependency of @kilowatch/api.
  const apiPkg = JSON.parse(readFileSync(path.join(root, 'api', 'package.json'), 'utf8'));
  const declared = new Set(Object.keys(apiPkg.dependencies ?? {}));
  const missing = [...external].filter((p) => !declared.has(p));
  if (missing.length > 0) {
    throw new Error(
      `the server bundle imports ${missing.join(', ')}, which api/package.json does not list as dependencies; ` +
        'add them there (the compiled server resolves its packages from api/node_modules)',
    );
  }
  await dumpPgliteTemplate(outdir);
  return performance.now() - started;
}

/**
 * A PGlite data directory, initialised and migrated, dumped beside the bundle
 * (api/src/db/pglite-template.ts; api/src/plugins/app/metadata.ts loads it at a first start instead of
 * running initdb and the migrations). Made with the PGlite the server imports and the migrations the
 * bundle holds, so it matches both; made again when either changes.
 */
async function dumpPgliteTemplate(outdir) {
  const apiRequire = createRequire(path.join(root, 'api', 'package.json'));
  const entry = apiRequire.resolve('@electric-sql/pglite');
  let dir = path.dirname(entry);
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  const maker = path.join(outdir, 'pgliteTemplate.js');
  const stampOf = `${version} ${createHash('sha256').update(readFileSync(maker)).digest('hex')}`;
  // Always api/dist's (made once, kept while the stamp matches), as before: a server built elsewhere
  // (--outdir, the deployment test on PostgreSQL) does not wait for a dump of its own.
  const file = path.join(SERVER_OUT, 'pglite-initdb.tar.gz');
  const stamp = `${file}.version`;
  if (existsSync(file) && existsSync(stamp) && readFileSync(stamp, 'utf8') === stampOf) return;
  const { migratedPgliteDump } = await import(pathToFileURL(maker).href);
  mkdirSync(SERVER_OUT, { recursive: true });
  writeFileSync(file, await migratedPgliteDump());
  writeFileSync(stamp, stampOf);
}

/**
 * The web client built into web/dist. `quiet`: Vite's output is kept, not shown, and becomes the thrown
 * error's `output` when the build fails (`pnpm start` shows it then, and one line otherwise).
 */
export function buildWeb({ quiet = false } = {}) {
  const started = performance.now();
  const r = spawnSync('pnpm', ['--filter', '@kilowatch/web', 'build'], {
    cwd: root,
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) {
    const err = new Error(`the web client's build failed (exit ${r.status ?? r.signal ?? r.error?.message})`);
    if (quiet) err.output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
    throw err;
  }
  if (!existsSync(path.join(WEB_OUT, 'index.html'))) throw new Error('the web build wrote no index.html');
  return performance.now() - started;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--outdir');
  const outdir = at >= 0 ? path.resolve(args[at + 1] ?? '') : SERVER_OUT;
  const what = at >= 0 ? args.filter((_, i) => i !== at && i !== at + 1) : args;
  const all = what.length === 0;
  try {
    if (all || what.includes('server')) {
      const ms = await buildServer(outdir);
      console.log(`server compiled to ${path.relative(root, outdir)}/ in ${(ms / 1000).toFixed(1)} s`);
    }
    if (all || what.includes('web')) {
      const ms = buildWeb();
      console.log(`web client built to ${path.relative(root, WEB_OUT)}/ in ${(ms / 1000).toFixed(1)} s`);
    }
  } catch (e) {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  }
}
