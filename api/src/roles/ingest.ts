/**
 * The ingest role (`KW_ROLE=ingest`): the MQTT bridge into the telemetry store, with its metrics and
 * health routes on a bare HTTP server (no API app, no metadata besides the rollup lock).
 */
import { type IngestRuntime, startIngest } from '@kilowatch/ingest';
import Fastify, { type FastifyInstance } from 'fastify';
import { createPostgresSql } from '../db/sql.ts';
import { ingestHealthRoutes } from '../routes/health.ts';
import { ingestOptions, type RoleContext, tasmotaDeviceIn } from './context.ts';

export async function startIngestRole(
  ctx: RoleContext,
): Promise<{ http: FastifyInstance; runtime: IngestRuntime }> {
  const { config, stops } = ctx;
  const url = await ctx.mqttUrl();
  const http = Fastify({ logger: ctx.logger });
  // Ingest processes take turns refreshing rollups under a PostgreSQL advisory lock: each dirty range
  // once, and still after one of them dies. Without DATABASE_URL this one refreshes on its own.
  const rollupSql = config.databaseUrl
    ? await createPostgresSql({ connectionString: config.databaseUrl, max: 2 })
    : undefined;
  if (rollupSql) stops.unshift(() => rollupSql.close());
  // The ingest processes alive, so that a graceful stop leaves the shared group unless it is the last.
  const members = rollupSql ? await rollupSql.member('ingest') : undefined;
  const runtime = await startIngest(
    ingestOptions(ctx, url, {
      ...(rollupSql ? { rollupLock: (fn) => rollupSql.exclusive('rollups', fn, { wait: false }) } : {}),
      ...(members ? { leaveGroup: async () => !(await members.leave()) } : {}),
      ...(rollupSql && !ctx.broker() ? { tasmotaDevice: tasmotaDeviceIn(rollupSql) } : {}),
      logger: http.log,
    }),
  );
  stops.unshift(() => runtime.stop());
  http.get('/metrics', async (_req, reply) =>
    reply.type('text/plain; version=0.0.4').send(runtime.metricsText()),
  );
  ingestHealthRoutes(http, { store: ctx.store, ingest: runtime, mqttUrl: url });
  return { http, runtime };
}
