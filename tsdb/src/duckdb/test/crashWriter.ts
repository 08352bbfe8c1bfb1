/**
 * Child process of the store's crash test: writes the batches of `crashBatches` to the DuckDB file named
 * on the command line, one commit each, then dies by SIGKILL without closing the store (no snapshot,
 * no checkpoint): only what the commits made durable survives.
 */
import { createDuckDbStore } from '../../index.ts';
import { crashBatches } from './crashBatches.ts';

const store = await createDuckDbStore({ path: process.argv[2]! });
for (const batch of crashBatches) await store.write(batch);
process.stdout.write('written\n');
process.kill(process.pid, 'SIGKILL');
