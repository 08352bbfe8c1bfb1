/** Repositories as factory functions over the metadata store, exposed with typed decorators. */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createDevicesRepository } from './devices-repository.ts';
import { createLocationsRepository } from './locations-repository.ts';
import { createPricesRepository } from './prices-repository.ts';

declare module 'fastify' {
  interface FastifyInstance {
    devices: ReturnType<typeof createDevicesRepository>;
    locations: ReturnType<typeof createLocationsRepository>;
    prices: ReturnType<typeof createPricesRepository>;
  }
}

export default fp(
  async (app: FastifyInstance) => {
    app.decorate('devices', createDevicesRepository(app.sql, app.clock.now));
    app.decorate('locations', createLocationsRepository(app.sql, app.clock.now));
    app.decorate('prices', createPricesRepository(app.sql));
  },
  { name: 'repositories', dependencies: ['metadata'] },
);
