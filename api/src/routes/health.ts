/**
 * Health (docs/api.md §Health). `GET /api/health/live`: the process is up, nothing else checked (restart it
 * when this fails). `GET /api/health/ready`: it can serve its role now, naming each dependency and
 * whether the role needs it (take it out of the load balancer while this is 503). `GET /api/health`:
 * the summary of every store and the (embedded) broker, 503 when any is down.
 */
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Dependency, Readiness, RouteOptions } from './options.ts';

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

const DEFAULT_READINESS: Readiness = { role: 'all', storeRequired: true };

const healthRoutes: FastifyPluginAsync<RouteOptions> = async (app, opts) => {
  const readiness = opts.readiness ?? DEFAULT_READINESS;
  const loose = { type: 'object', additionalProperties: true } as const;

  app.get(
    '/health/live',
    {
      schema: {
        summary: 'Liveness: the process is up (no dependency checked)',
        tags: ['health'],
        response: { 200: loose },
      },
    },
    async () => ({ status: 'ok', version: app.config.appVersion, role: readiness.role }),
  );

  app.get(
    '/health/ready',
    {
      schema: {
        summary: 'Readiness: this process can serve its role; each dependency and whether the role needs it',
        tags: ['health'],
        response: { 200: loose, 503: loose },
      },
    },
    async (_request, reply) => {
      const [store, metadata] = await Promise.all([
        within(
          app.store.health().then((h) => ({ ...h, required: readiness.storeRequired })),
          (detail): Dependency => ({
            ok: false,
            engine: app.store.engine,
            detail,
            required: readiness.storeRequired,
          }),
        ),
        within(
          app.sql
            .query('select 1')
            .then((): Dependency => ({ ok: true, engine: app.sql.engine, required: true })),
          (detail): Dependency => ({ ok: false, engine: app.sql.engine, detail, required: true }),
        ),
      ]);
      const dependencies: Record<string, Dependency> = {
        metadata,
        store: store as Dependency,
        ...readiness.dependencies?.(),
      };
      const ready = Object.values(dependencies).every((d) => d.ok || !d.required);
      return reply.code(ready ? 200 : 503).send({
        status: ready ? 'ready' : 'not-ready',
        version: app.config.appVersion,
        role: readiness.role,
        dependencies,
      });
    },
  );

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

/** What the health routes read of a running ingest (its runtime, `@kilowatch/ingest`). */
export interface IngestProbe {
  /** Why the store refuses ingest's writes now, or null. */
  writeProblem(): string | null;
  deviceStates(): readonly unknown[];
  mqttConnected(): boolean;
}

/** Ingest's part of `/api/health`: not ok while the store refuses its writes, with the store's reason. */
export function ingestHealth(rt: IngestProbe): { ok: boolean; devices: number; detail?: string } {
  const problem = rt.writeProblem();
  return { ok: problem === null, devices: rt.deviceStates().length, ...(problem ? { detail: problem } : {}) };
}

/**
 * The health routes of an ingest process (`KW_ROLE=ingest`, no API app): liveness (the process is up),
 * readiness (it takes readings, which needs the broker and the store) and the summary.
 */
export function ingestHealthRoutes(
  http: FastifyInstance,
  parts: { store: TelemetryStore; ingest: IngestProbe; mqttUrl: string },
): void {
  const { store, ingest, mqttUrl } = parts;
  const storeHealth = () => within(store.health(), (detail) => ({ ok: false, engine: store.engine, detail }));
  http.get('/api/health/live', async () => ({ status: 'ok', role: 'ingest' }));
  http.get('/api/health/ready', async (_req, reply) => {
    const storeNow = await storeHealth();
    const dependencies = {
      mqtt: { ok: ingest.mqttConnected(), required: true, url: mqttUrl },
      store: { ...storeNow, required: true },
    };
    const ready = dependencies.mqtt.ok && dependencies.store.ok;
    return reply
      .code(ready ? 200 : 503)
      .send({ status: ready ? 'ready' : 'not-ready', role: 'ingest', dependencies });
  });
  http.get('/api/health', async (_req, reply) => {
    const ingestNow = ingestHealth(ingest);
    const storeNow = await storeHealth();
    if (!ingestNow.ok || !storeNow.ok) reply.code(503);
    return {
      status: ingestNow.ok && storeNow.ok ? 'ok' : 'degraded',
      store: storeNow,
      broker: { ok: true, url: mqttUrl },
      ingest: ingestNow,
    };
  });
}
