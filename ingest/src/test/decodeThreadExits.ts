/** A decode thread that starts, then exits on its first chunk (as a thread that crashed would). */
import { parentPort } from 'node:worker_threads';

parentPort?.on('message', () => process.exit(3));
parentPort?.postMessage({ ready: true });
