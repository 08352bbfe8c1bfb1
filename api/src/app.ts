/**
 * The Kilowatch API, built by a function so tests can `inject` into the real app: external plugins, then
 * app plugins (config, metadata store, auth, repositories), then routes under /api. The server entry
 * (main.ts) only listens.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import { MESSAGES } from '@kilowatch/core';
import { StoreError, type TelemetryStore } from '@kilowatch/tsdb';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
} from 'fastify';
import { type AppConfig, defaultConfig } from './config.ts';
import type { Sql } from './db/sql.ts';
import { ApiError, UnavailableError, ValidationError } from './errors.ts';
import { registerGrafana } from './grafana.ts';
import type { LiveSource } from './hub/live-source.ts';
import { type LiveServicesOptions, registerLiveServices } from './hub/services.ts';
import importsPlugin from './imports/service.ts';
import authPlugin from './plugins/app/auth.ts';
import configPlugin from './plugins/app/config.ts';
import demoWorkspacesPlugin from './plugins/app/demo-workspaces.ts';
import heavyReadsPlugin, { type WaitTimer } from './plugins/app/heavy-reads.ts';
import type { Mailer } from './plugins/app/mailer.ts';
import mailerPlugin from './plugins/app/mailer.ts';
import metadataPlugin from './plugins/app/metadata.ts';
import meterAccessPlugin, { type MeterAccess } from './plugins/app/meter-access.ts';
import metricsPlugin from './plugins/app/metrics.ts';
import quotasPlugin from './plugins/app/quotas.ts';
import repositoriesPlugin from './plugins/app/repositories.ts';
import telemetryPlugin, { type DeviceStateSource } from './plugins/app/telemetry.ts';
import throttlePlugin from './plugins/app/throttle.ts';
import { BUSY_RETRY_AFTER_S, registerExternalPlugins } from './plugins/external.ts';
import type { PressureOptions } from './plugins/pressure.ts';
import { apiRoutes } from './routes/index.ts';
import type { HealthExtras, Readiness } from './routes/options.ts';
import { valibotValidatorCompiler } from './schema.ts';

export interface BuildAppOptions {
  config?: Partial<AppConfig>;
  /** Metadata store; opened from the config (PGlite or DATABASE_URL) when omitted, and closed with the app. */
  sql?: Sql;
  store: TelemetryStore;
  /** Live device states from an in-process ingest runtime. */
  deviceStates?: DeviceStateSource;
  /** Prometheus text of other components (ingest), appended to GET /metrics. */
  metricsText?: () => string;
  health?: HealthExtras;
  /** What this process's role needs to be ready (`/api/health/ready`); default: everything (role all). */
  readiness?: Readiness;
  mailer?: Mailer;
  now?: () => number;
  logger?: FastifyServerOptions['logger'];
  pressure?: PressureOptions;
  /** Committed live readings and device status for the hub and the alerts (embedded: the ingest bus). */
  live?: LiveSource;
  liveServices?: LiveServicesOptions;
  /** Time budget of each telemetry read a request waits on (default `QUERY_BUDGET_MS`). */
  queryBudgetMs?: number;
  /** Whether a meter's history is still being written (the embedded demo's first minute). */
  historyLoading?: (deviceKey: string) => boolean;
  /** The broker side of meters' MQTT accounts; none → credentials are only stored. */
  meterAccess?: MeterAccess;
  /** The longest heavy reads wait at one turn for other requests (plugins/app/heavy-reads.ts). */
  lightFirstMaxMs?: number;
  /** Starts a heavy read's wait budget (default `setTimeout`; tests fire it themselves). */
  heavyWaitTimer?: WaitTimer;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, for the docs check and diagnostics. */
    routeTable: { method: string; url: string; hidden: boolean }[];
    /** Whether a meter's history is still being written: its totals would count only part of it. */
    historyLoading: (deviceKey: string) => boolean;
  }
  interface FastifyContextConfig {
    /** Message of a 400 from this route's validation (login answers "Try again!"). */
    validationMessage?: string;
  }
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const config: AppConfig = { ...defaultConfig(), ...options.config };
  const app = Fastify({
    logger: options.logger ?? false,
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    ajv: { customOptions: { coerceTypes: false } },
    // The first start of the embedded deployment creates its PGlite database inside the metadata
    // plugin: seconds on a quiet PC, over a minute on a busy or small board (Fastify's default is 10 s).
    pluginTimeout: 180_000,
    // A URL the router cannot read (`GET /%`) gets the contract's error shape too, not Fastify's own.
    frameworkErrors: (_error, _request, reply) => {
      const r = reply as unknown as FastifyReply;
      r.header('X-App-Version', config.appVersion);
      r.code(400).send({ message: MESSAGES.malformed });
    },
  });
  app.setValidatorCompiler(valibotValidatorCompiler);
  const routeTable: { method: string; url: string; hidden: boolean }[] = [];
  app.decorate('routeTable', routeTable);
  app.decorate('historyLoading', options.historyLoading ?? (() => false));
  app.addHook('onRoute', (route) => {
    const hidden = (route.schema as { hide?: boolean } | undefined)?.hide === true;
    for (const method of [route.method].flat()) routeTable.push({ method, url: route.url, hidden });
  });

  app.addHook('onRequest', async (_request, reply) => {
    reply.header('X-App-Version', config.appVersion);
  });

  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error instanceof UnavailableError) request.log.warn({ err: error.cause }, error.detail);
      if (error.headers) reply.headers(error.headers);
      const message =
        error instanceof ValidationError
          ? (request.routeOptions.config.validationMessage ?? error.message)
          : error.message;
      return reply
        .code(error.statusCode)
        .send(error.errors ? { message, errors: error.errors } : { message });
    }
    // The telemetry store down, hung or misconfigured is not the request's fault and not a bug here: the
    // client is told to come back (it retries a 503 with Retry-After), the log says why.
    if (error instanceof StoreError && (error.kind === 'unavailable' || error.kind === 'configuration')) {
      request.log.warn({ err: error }, 'telemetry store unavailable');
      return reply
        .code(503)
        .header('retry-after', String(BUSY_RETRY_AFTER_S))
        .send({ message: MESSAGES.busy });
    }
    const status = error.statusCode ?? 500;
    if (status === 413) return reply.code(413).send({ message: MESSAGES.tooLarge });
    if (status === 429) return reply.code(429).send({ message: MESSAGES.tooManyRequests });
    if (status === 503) return reply.code(503).send({ message: MESSAGES.busy });
    if (status >= 400 && status < 500) {
      request.log.info({ code: error.code }, 'rejected request');
      return reply.code(status).send({ message: MESSAGES.malformed });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.code(500).send({ message: MESSAGES.internal });
  });

  app.setNotFoundHandler((_request, reply) => reply.code(404).send({ message: MESSAGES.notFound }));

  await app.register(configPlugin, { config, now: options.now });
  // First, so that every route after it is marked and every request counted.
  await app.register(heavyReadsPlugin, {
    heavyReads: config.heavyReads,
    heavyQueue: config.heavyQueue,
    heavyPerUser: config.heavyPerUser,
    heavyWaitMs: config.heavyWaitMs,
    ...(options.heavyWaitTimer !== undefined ? { waitTimer: options.heavyWaitTimer } : {}),
    ...(options.lightFirstMaxMs !== undefined ? { lightFirstMaxMs: options.lightFirstMaxMs } : {}),
  });
  await registerExternalPlugins(app, options.pressure);
  await app.register(metadataPlugin, { sql: options.sql });
  await app.register(telemetryPlugin, {
    store: options.store,
    states: options.deviceStates,
    ...(options.queryBudgetMs !== undefined ? { queryBudgetMs: options.queryBudgetMs } : {}),
  });
  await app.register(mailerPlugin, { mailer: options.mailer });
  await app.register(throttlePlugin);
  await app.register(authPlugin);
  await app.register(repositoriesPlugin);
  await app.register(quotasPlugin);
  await app.register(importsPlugin);
  await app.register(meterAccessPlugin, { meterAccess: options.meterAccess });
  await app.register(metricsPlugin, { extra: options.metricsText });
  await registerLiveServices(app, options.live, options.liveServices);
  await app.register(demoWorkspacesPlugin);

  await app.register(
    async (api) => {
      for (const route of apiRoutes)
        await api.register(route, {
          health: options.health,
          ...(options.readiness ? { readiness: options.readiness } : {}),
        });
    },
    { prefix: '/api' },
  );
  await registerGrafana(app);

  if (config.webDist && existsSync(path.join(config.webDist, 'index.html'))) {
    await serveWebClient(app, config.webDist);
  }
  return app;
}

/**
 * The built client, with SPA fallback to index.html for every non-/api GET. Files under `assets/` carry
 * a content hash in their name, so browsers keep them for a year without asking again; everything else
 * (index.html above all) is revalidated on every load, so a new release is picked up at once.
 */
async function serveWebClient(app: FastifyInstance, root: string): Promise<void> {
  const assets = path.join(root, 'assets') + path.sep;
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    index: ['index.html'],
    cacheControl: false,
    setHeaders: (res, file) => {
      res.header(
        'cache-control',
        file.startsWith(assets) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
    },
  });
  app.get('/*', { schema: { hide: true } }, (request, reply) => {
    const url = request.url.split('?')[0] ?? '/';
    if (url.startsWith('/api/') || url === '/api')
      return reply.code(404).send({ message: MESSAGES.notFound });
    const file = path.join(root, decodeURIComponent(url));
    if (file.startsWith(root + path.sep) && existsSync(file) && !file.endsWith(path.sep)) {
      return reply.sendFile(path.relative(root, file));
    }
    return reply.sendFile('index.html');
  });
}
