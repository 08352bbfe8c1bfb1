/** GET /api/health: store, metadata and (embedded) broker state. 503 when a dependency is down. */
import type { FastifyPluginAsync } from 'fastify';
import type { RouteOptions } from './options.ts';

const PROBE_MS = 3_000;

/** The probe's answer, or the fallback with the reason when it fails or says nothing within PROBE_MS. */
export async function within<T, F>(probe: Promise<T>, fallback: (detail: string) => F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback(`no answer within ${PROBE_MS / 1000} s`)), PROBE_MS);
  });
  try {
    return await Promise.race([
      probe.catch((err: unknown) => fallback(err instanceof Error ? err.message : String(err))),
      silent,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

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
      // Monitoring needs an answer even when a store hangs: each probe gets a few seconds.
      const [store, metadata, extras] = await Promise.all([
        within(app.store.health(), (detail) => ({ ok: false, engine: app.store.engine, detail })),
        within(
          app.sql.query('select 1').then(() => ({ ok: true, engine: app.sql.engine })),
          (detail) => ({ ok: false, engine: app.sql.engine, detail }),
        ),
        opts.health ? within(opts.health(), () => ({ ok: false })) : Promise.resolve({}),
      ]);
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
