// `pnpm start`: builds what is missing or older than its sources (the first run builds both, later runs
// usually nothing), then runs the compiled server in this process with plain `node`.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildServer, buildWeb, SERVER_OUT, WEB_OUT } from './build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The newest modification time of the files under `paths` (directories walked; tests and builds skipped). */
function newest(paths) {
  let t = 0;
  const visit = (p) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(p)) {
        if (name === 'node_modules' || name === 'dist' || name.endsWith('.test.ts')) continue;
        visit(path.join(p, name));
      }
    } else if (st.mtimeMs > t) t = st.mtimeMs;
  };
  for (const p of paths) visit(path.join(root, p));
  return t;
}

const builtAt = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);
const shared = ['core/src', 'core/package.json', 'pnpm-lock.yaml'];
const serverSources = [
  ...shared,
  ...['tsdb', 'influx', 'ingest', 'api'].flatMap((p) => [`${p}/src`, `${p}/package.json`]),
  'scripts/build.mjs',
];
const webSources = [
  ...shared,
  'web/src',
  'web/public',
  'web/index.html',
  'web/vite.config.ts',
  'web/package.json',
];

/**
 * One build step as one line (`compiling the server… done in 9.1 s`); on a failure, everything the
 * step printed, then its error, and the start stops.
 */
async function step(what, run) {
  process.stdout.write(`${what}… `);
  let ms;
  try {
    ms = await run();
  } catch (e) {
    process.stdout.write('failed\n');
    if (e?.output) process.stderr.write(e.output.endsWith('\n') ? e.output : `${e.output}\n`);
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  }
  process.stdout.write(`done in ${(ms / 1000).toFixed(1)} s\n`);
}

const serverEntry = path.join(SERVER_OUT, 'main.js');
if (builtAt(serverEntry) < newest(serverSources)) {
  await step('compiling the server (once, or after its sources changed)', () =>
    buildServer(SERVER_OUT, { quiet: true }),
  );
}
// A web client served from elsewhere (KW_WEB_DIST) is not ours to build.
if (!process.env.KW_WEB_DIST && builtAt(path.join(WEB_OUT, 'index.html')) < newest(webSources)) {
  await step('building the web client (once, or after its sources changed)', () => buildWeb({ quiet: true }));
}
await import(pathToFileURL(serverEntry).href);
