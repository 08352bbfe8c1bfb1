/** API counters in Prometheus text format at GET /metrics, followed by other components' (ingest). */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

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
        const extra = opts.extra?.();
        reply.type('text/plain; version=0.0.4');
        return `${lines.join('\n')}\n${extra ? `${extra.trimEnd()}\n` : ''}`;
      },
    );
  },
  { name: 'metrics' },
);
