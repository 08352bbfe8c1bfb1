/** API counters in Prometheus text format at GET /metrics, followed by other components' (ingest). */

import type { StoreMemory } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { within } from '../../routes/health.ts';

export default fp(
  async (app: FastifyInstance, opts: { extra?: () => string }) => {
    const responses = new Map<string, number>();
    // Requests turned away by an earlier hook (503 under pressure) never reach this one: count only ours.
    const started = new WeakSet<object>();
    let inFlight = 0;
    app.addHook('onRequest', async (request) => {
      started.add(request);
      inFlight++;
    });
    app.addHook('onResponse', async (request, reply) => {
      if (started.delete(request)) inFlight--;
      const route = request.routeOptions.url ?? 'unmatched';
      const key = `method="${request.method}",route="${route}",status="${reply.statusCode}"`;
      responses.set(key, (responses.get(key) ?? 0) + 1);
    });

    app.get(
      '/metrics',
      {
        schema: {
          summary: 'Prometheus metrics of the API and, in one process, of ingest',
          tags: ['health'],
          response: { 200: { type: 'string' } },
        },
      },
      async (_request, reply) => {
        const lines = [
          '# HELP kilowatch_api_responses_total HTTP responses by method, route and status.',
          '# TYPE kilowatch_api_responses_total counter',
          ...[...responses].map(([labels, n]) => `kilowatch_api_responses_total{${labels}} ${n}`),
          '# HELP kilowatch_api_requests_in_flight Requests being handled.',
          '# TYPE kilowatch_api_requests_in_flight gauge',
          `kilowatch_api_requests_in_flight ${inFlight}`,
        ];
        const gauge = (name: string, help: string, value: number, type = 'gauge') => [
          `# HELP ${name} ${help}`,
          `# TYPE ${name} ${type}`,
          `${name} ${value}`,
        ];
        // The hub and the alerts, when this process has them (not in an ingest-only one).
        const hub = app.hasDecorator('hub') ? app.hub.stats() : null;
        if (hub) {
          lines.push(
            ...gauge('kilowatch_hub_clients', 'WebSocket clients connected to this process.', hub.clients),
            ...gauge(
              'kilowatch_hub_messages_sent_total',
              'Hub messages sent to clients.',
              hub.sent,
              'counter',
            ),
            ...gauge(
              'kilowatch_hub_messages_coalesced_total',
              'Hub messages replaced by a newer one for a slow client.',
              hub.coalesced,
              'counter',
            ),
            '# HELP kilowatch_hub_sockets_shed_total Hub sockets closed for what they sent: too fast (rate, 1008) or too much waiting (inbox, 1013).',
            '# TYPE kilowatch_hub_sockets_shed_total counter',
            `kilowatch_hub_sockets_shed_total{reason="rate"} ${hub.shedForRate}`,
            `kilowatch_hub_sockets_shed_total{reason="inbox"} ${hub.shedForInbox}`,
            ...gauge(
              'kilowatch_hub_frames_malformed_total',
              'Hub frames that were no message the hub knows (counted, answered at most once per 10 s a socket).',
              hub.malformedFrames,
              'counter',
            ),
          );
        }
        const alerts = app.hasDecorator('alerts') ? app.alerts.stats() : null;
        if (alerts) {
          lines.push(
            ...gauge(
              'kilowatch_alerts_readings_evaluated_total',
              'Readings evaluated for alerts.',
              alerts.evaluated,
              'counter',
            ),
            ...gauge(
              'kilowatch_alerts_readings_stale_total',
              'Readings too old to alert on (backfills, buffered meters), left alone.',
              alerts.stale,
              'counter',
            ),
            ...gauge(
              'kilowatch_alerts_readings_skipped_total',
              'Readings skipped because too many waited while the metadata store was slow.',
              alerts.skipped,
              'counter',
            ),
            ...gauge(
              'kilowatch_alerts_devices',
              'Devices whose alert state this process holds.',
              alerts.devices,
            ),
          );
        }
        const hooks = app.hasDecorator('webhooks') ? app.webhooks.stats() : null;
        if (hooks) {
          lines.push(
            '# HELP kilowatch_webhook_deliveries_total Notification webhook deliveries by result (dropped: the queue was full).',
            '# TYPE kilowatch_webhook_deliveries_total counter',
            `kilowatch_webhook_deliveries_total{result="delivered"} ${hooks.delivered}`,
            `kilowatch_webhook_deliveries_total{result="failed"} ${hooks.failed}`,
            `kilowatch_webhook_deliveries_total{result="dropped"} ${hooks.dropped}`,
            ...gauge(
              'kilowatch_webhook_retries_total',
              'Notification webhook attempts retried.',
              hooks.retries,
              'counter',
            ),
            ...gauge(
              'kilowatch_webhook_pending',
              'Notification webhook deliveries waiting or in flight in this process.',
              hooks.pending,
            ),
          );
        }
        const pool = app.sql.poolStats();
        if (pool) {
          lines.push(
            ...gauge('kilowatch_db_pool_connections', 'PostgreSQL connections open in the pool.', pool.total),
            ...gauge('kilowatch_db_pool_idle', 'PostgreSQL connections idle in the pool.', pool.idle),
            ...gauge(
              'kilowatch_db_pool_waiting',
              'Queries waiting for a PostgreSQL connection.',
              pool.waiting,
            ),
            ...gauge('kilowatch_db_pool_max', 'Largest PostgreSQL pool size.', pool.max),
          );
        }
        // The process's memory, and the telemetry store's own count of its part when it runs in here.
        const mem = process.memoryUsage();
        lines.push(
          ...gauge('process_resident_memory_bytes', 'Resident memory of this process.', mem.rss),
          ...gauge('nodejs_heap_used_bytes', "JavaScript objects in V8's heap.", mem.heapUsed),
          ...gauge('nodejs_heap_total_bytes', "V8's heap, used and free.", mem.heapTotal),
          ...gauge(
            'nodejs_external_memory_bytes',
            'Memory outside the heap held by JavaScript objects (buffers, WebAssembly memory).',
            mem.external,
          ),
        );
        // A store too busy to answer within the health probes' time leaves its lines out, not the scrape.
        const counted = app.hasDecorator('store') ? app.store.memoryByTag?.() : undefined;
        const store = counted ? await within(counted, () => null) : null;
        if (store) {
          const tagged = (name: string, help: string, value: (m: StoreMemory) => number) => [
            `# HELP ${name} ${help}`,
            `# TYPE ${name} gauge`,
            ...store.map((m) => `${name}{tag="${m.tag}"} ${value(m)}`),
          ];
          lines.push(
            ...tagged(
              'kilowatch_store_memory_bytes',
              "The embedded telemetry store's memory by what holds it (DuckDB's duckdb_memory()).",
              (m) => m.memoryBytes,
            ),
            ...tagged(
              'kilowatch_store_temporary_bytes',
              "The embedded telemetry store's memory spilled to temporary files, by what holds it.",
              (m) => m.temporaryBytes,
            ),
          );
        }
        const limits = app.hasDecorator('store') ? app.store.memoryLimits?.() : null;
        if (limits) {
          lines.push(
            ...gauge(
              'kilowatch_store_memory_limit_bytes',
              "The embedded telemetry store's memory limit in force (lower while bulk work runs).",
              limits.inForceBytes,
            ),
            ...gauge(
              'kilowatch_store_bulk_memory_limit_given_up',
              '1 once the store ran out of memory under its bulk memory limit and keeps its whole limit.',
              limits.bulkLimitGivenUp ? 1 : 0,
            ),
          );
        }
        const extra = opts.extra?.();
        reply.type('text/plain; version=0.0.4');
        return `${lines.join('\n')}\n${extra ? `${extra.trimEnd()}\n` : ''}`;
      },
    );
  },
  { name: 'metrics' },
);
