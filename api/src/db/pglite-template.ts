/**
 * The metadata database a first start begins from: a PGlite data directory, initialised and with every
 * migration applied, dumped as a gzipped tar. `pnpm build` writes it beside the compiled server
 * (scripts/build.mjs, `api/dist/pglite-initdb.tar.gz`) and a first start loads it
 * (plugins/app/metadata.ts), so it runs neither initdb nor the migrations in WebAssembly: together they
 * were most of a first start (15 s and 14 s of 57 s on the shared 2-core machine). `migrate` at start
 * then finds nothing to do, and still applies migrations added after the dump.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { migrate } from './migrations.ts';
import { createPgliteSql } from './sql.ts';

export async function migratedPgliteDump(): Promise<Uint8Array> {
  const dir = await mkdtemp(path.join(tmpdir(), 'kw-pglite-template-'));
  try {
    const sql = await createPgliteSql({ dataDir: dir });
    await migrate(sql);
    await sql.close();
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create({ dataDir: dir });
    const dump = await db.dumpDataDir('gzip');
    await db.close();
    return new Uint8Array(await dump.arrayBuffer());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Unpacks a `migratedPgliteDump` (a gzipped tar of files and directories) into the data directory `dir`,
 * natively. PGlite's own `loadDataDir` writes each file through its WebAssembly file system: on the busy
 * 2-core machine that was 15 s of a first start against 3.7 s to open an unpacked directory. The ~1,100
 * files are written `UNPACK_PARALLEL` at a time (one after another they took 1.5 s of a 3 s first start,
 * each write waiting its turn in the thread pool). Unpacked beside `dir` and renamed into place, so an
 * interrupted unpack leaves no half data directory.
 */
export async function unpackPgliteDump(gz: Uint8Array, dir: string): Promise<void> {
  const tar = gunzipSync(gz);
  const tmp = `${dir}.unpacking`;
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp, { recursive: true });
  const text = (block: Uint8Array, from: number, to: number) => {
    const field = block.subarray(from, to);
    const end = field.indexOf(0);
    return Buffer.from(end < 0 ? field : field.subarray(0, end)).toString('utf8');
  };
  const dirs = new Set<string>();
  const files: { target: string; data: Uint8Array }[] = [];
  let off = 0;
  while (off + 512 <= tar.length) {
    const header = tar.subarray(off, off + 512);
    if (header.every((b) => b === 0)) break;
    const prefix = text(header, 345, 500);
    const name = text(header, 0, 100);
    const size = Number.parseInt(text(header, 124, 136).trim() || '0', 8);
    const type = text(header, 156, 157) || '0';
    const target = path.resolve(tmp, `${prefix ? `${prefix}/` : ''}${name}`.replace(/^\/+/, ''));
    if (target !== tmp && !target.startsWith(`${tmp}${path.sep}`)) {
      throw new Error(`the PGlite template names a path outside its directory: ${name}`);
    }
    off += 512;
    if (type === '5') dirs.add(target);
    else if (type === '0') {
      dirs.add(path.dirname(target));
      files.push({ target, data: tar.subarray(off, off + size) });
    } else throw new Error(`the PGlite template holds an entry of tar type "${type}" (${name})`);
    off += Math.ceil(size / 512) * 512;
  }
  for (const d of dirs) await mkdir(d, { recursive: true });
  let next = 0;
  const writer = async () => {
    while (next < files.length) {
      const { target, data } = files[next++]!;
      await writeFile(target, data);
    }
  };
  await Promise.all(Array.from({ length: Math.min(UNPACK_PARALLEL, files.length) }, writer));
  await rename(tmp, dir);
}

/** Template files written at once by `unpackPgliteDump` (the thread pool's four threads, kept busy). */
const UNPACK_PARALLEL = 16;
