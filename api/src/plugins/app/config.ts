/** Configuration and the clock, decorated first so every other plugin reads them. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../../config.ts';

export interface Clock {
  now(): number;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
    clock: Clock;
  }
}

export default fp(
  async (app: FastifyInstance, opts: { config: AppConfig; now?: () => number }) => {
    app.decorate('config', opts.config);
    const now = opts.now ?? Date.now;
    app.decorate('clock', { now: () => now() });
  },
  { name: 'config' },
);
