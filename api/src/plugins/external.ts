/** Third-party plugins (security headers, CORS, OpenAPI) and overload protection (pressure.ts). */
import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { MESSAGES } from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { type PressureOptions, registerPressure } from './pressure.ts';

/** Seconds a client is asked to wait when the server sheds load. */
export const BUSY_RETRY_AFTER_S = 10;

export async function registerExternalPlugins(
  app: FastifyInstance,
  pressure: PressureOptions = {},
): Promise<void> {
  const { config } = app;
  // Helmet's default policy, except that `upgrade-insecure-requests` is sent only when Kilowatch is
  // served over HTTPS: on a LAN it is reached as http://kilowatch.local:8080, where that directive makes
  // the browser fetch every script and style over https and the page stays blank.
  const https = config.publicUrl.startsWith('https:');
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: {
      useDefaults: true,
      directives: { upgradeInsecureRequests: https ? [] : null },
    },
    ...(https ? {} : { strictTransportSecurity: false }),
  });
  await app.register(cors, {
    // Only the listed origins may call with credentials; none listed → same origin only.
    origin: config.allowedOrigins.length > 0 ? config.allowedOrigins : false,
    credentials: true,
    exposedHeaders: ['X-App-Version', 'Retry-After'],
  });
  registerPressure(app, { maxEventLoopDelay: config.maxEventLoopDelayMs, ...pressure }, (url) => {
    // Monitoring must see the server even while it sheds load, and the built client's static files are
    // cheap: only API work is shed.
    if (url === '/api/health' || url === '/api/health/live' || url === '/metrics' || !url.startsWith('/api/'))
      return;
    throw new ApiError(503, MESSAGES.busy, undefined, { 'retry-after': String(BUSY_RETRY_AFTER_S) });
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Kilowatch API',
        description: 'Electricity telemetry: accounts, devices, locations, tariffs (docs/api.md).',
        version: config.appVersion,
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true });
}
