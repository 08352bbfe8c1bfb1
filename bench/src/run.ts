/**
 * `pnpm bench <name> [args]` runs bench/src/<name>.ts. Each benchmark prints progress to stderr and one
 * JSON object as the last line of stdout, so results can be compared run to run.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3));

const [name, ...args] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  process.stderr.write(`usage: pnpm bench <${available.join('|')}> [args]\n`);
  process.exit(2);
}

const mod = (await import(join(here, `${name}.ts`))) as { default: (args: string[]) => Promise<unknown> };
const result = await mod.default(args);
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
