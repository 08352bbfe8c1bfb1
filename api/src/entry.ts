/**
 * The compiled server's entry (`api/dist/main.js`, what `pnpm start` and the image run). It reads the
 * configuration and answers on the port at once ("starting", starting.ts), then loads the server
 * (`server.js`, compiled from main.ts: Fastify, DuckDB, PGlite, the broker — seconds of module loading
 * on a small, busy machine), which takes the port over when it is ready.
 */
import { ConfigError } from '@kilowatch/core';
import { configFromEnv } from './config.ts';
import { answerWhileStarting, keepForHandOver } from './starting.ts';

try {
  const config = configFromEnv();
  if (config.port !== 0) keepForHandOver(await answerWhileStarting(config.port, config.host));
} catch (err) {
  // One line per wrong variable (or the port taken), then stop: nothing has started yet.
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
// Run from the sources (tsx) this is main.ts; compiled, server.js beside this file.
await import(new URL(import.meta.url.endsWith('.ts') ? './main.ts' : './server.js', import.meta.url).href);
