/**
 * Child process of the journal crash test: writes until the store starts a checkpoint, writes one more
 * batch (acknowledged from the journal while the checkpoint runs), prints what the journal held, and dies
 * by SIGKILL without closing the store.
 */
import { statSync } from 'node:fs';
import { createDuckDbStore } from '../../index.ts';
import { bigBatch, JOURNAL_DEVICE, marked } from './journalBatches.ts';

const path = process.argv[2]!;
const store = await createDuckDbStore({ path });
for (let b = 0; b < 40 && !store.writeStats().checkpointing; b++) await store.write(bigBatch(b));
await store.write(marked);
const stats = store.writeStats();
const size = statSync(`${path}.journal`).size;
process.stdout.write(`${JSON.stringify({ ...stats, journalBytes: size, device: JOURNAL_DEVICE })}\n`);
process.kill(process.pid, 'SIGKILL');
