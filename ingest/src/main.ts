/** `pnpm --filter @kilowatch/ingest start`: broker + ingest + simulator on their own (no HTTP API). */
import { loadConfig } from './config.ts';
import { startTelemetry } from './telemetry.ts';

const config = loadConfig(process.env);
const telemetry = await startTelemetry(config);
console.log(`dead letters: ${config.deadLetterDir}; Ctrl-C stops`);

let stopping = false;
const shutdown = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: flushing and stopping`);
  await telemetry.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
