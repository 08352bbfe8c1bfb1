/**
 * The live side of the API in one registration: the hub, the alert evaluator and the export queue. With
 * an in-process ingest, `live` is its bus and also feeds the alerts; with an external broker, `live` is a
 * `kilowatch/live/+` subscriber and `alertSource` the shared subscription (ALERTS_SHARED_TOPIC).
 */
import type { FastifyInstance } from 'fastify';
import alertsPlugin, { type AlertsOptions } from '../alerts/evaluator.ts';
import exportsPlugin, { type ExportOptions } from '../exports/queue.ts';
import hubPlugin, { type HubOptions } from './hub.ts';
import type { LiveSource } from './live-source.ts';

export interface LiveServicesOptions {
  hub?: Omit<HubOptions, 'live'>;
  alerts?: AlertsOptions;
  exports?: ExportOptions;
}

export async function registerLiveServices(
  app: FastifyInstance,
  live: LiveSource | undefined,
  options: LiveServicesOptions = {},
): Promise<void> {
  await app.register(hubPlugin, { ...options.hub, ...(live ? { live } : {}) });
  const alertSource = options.alerts?.alertSource ?? live;
  await app.register(alertsPlugin, {
    ...options.alerts,
    ...(alertSource ? { alertSource } : {}),
    ...(options.hub?.relay ? { relay: options.hub.relay } : {}),
  });
  await app.register(exportsPlugin, options.exports ?? {});
}
