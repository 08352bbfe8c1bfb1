// Starts the decode thread: Kilowatch runs its TypeScript sources directly (tsx), and a worker thread
// needs the loader registered in its own thread before it imports them.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
