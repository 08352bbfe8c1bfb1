/** GET /api/health: store, metadata and (embedded) broker state. 503 when a dependency is down. */
import type { FastifyPluginAsync } from 'fastify';
import type { RouteOptions } from './options.ts';

const healthRoutes: FastifyPluginAsync<RouteOptions> = async (app, opts) => {
  app.get(
    '/health',
    {
      schema: {
        summary: 'Health of the API and its stores',
        tags: ['health'],
        response: {
          200: { type: 'object', additionalProperties: true },
          503: { type: 'object', additionalProperties: true },
        },
      },
    },
    async (_request, reply) => {
      const store = await app.store
        .health()
        .catch((err: Error) => ({ ok: false, engine: app.store.engine, detail: err.message }));
      const metadata = await app.sql
        .query('select 1')
        .then(() => ({ ok: true, engine: app.sql.engine }))
        .catch(() => ({ ok: false, engine: app.sql.engine }));
      const extras = opts.health ? await opts.health().catch(() => ({ ok: false })) : {};
      const ok =
        store.ok && metadata.ok && Object.values(extras).every((e) => (e as { ok?: boolean })?.ok !== false);
      return reply.code(ok ? 200 : 503).send({
        status: ok ? 'ok' : 'degraded',
        version: app.config.appVersion,
        store,
        metadata,
        load: app.memoryUsage(),
        ...extras,
      });
    },
  );
};

export default healthRoutes;
