/** The consumption table: energy per bucket for several of the user's devices (docs/api.md §Telemetry). */
import {
  ConsumptionQuerySchema,
  ConsumptionSchema,
  calendarBucketCountAtMost,
  HOUR_MS,
} from '@kilowatch/core';
import type * as v from 'valibot';
import { contextOf, parseRange, rangeTooLong } from '../analytics/context.ts';
import { energySeries } from '../analytics/energy.ts';
import { tidyAnswers } from '../analytics/tidy.ts';
import { NotFoundError } from '../errors.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

/** Devices of one consumption table read concurrently. */
const READ_AHEAD = 4;
/** Rows of one table (devices × buckets): the 100,000 points of a series, across the devices. */
const MAX_ROWS = 100_000;

const analyticsRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  tidyAnswers(app);

  app.get(
    '/analytics/consumption',
    {
      schema: {
        summary: 'Import, export and balance per bucket for several devices',
        tags: ['telemetry'],
        security: [{ bearer: [] }],
        querystring: request(ConsumptionQuerySchema),
        response: {
          200: response(ConsumptionSchema),
          400: errorResponse,
          401: errorResponse,
          404: errorResponse,
        },
      },
    },
    async (req) => {
      const q = req.query;
      const range = parseRange(q.from, q.to);
      const buckets =
        q.interval === '1h'
          ? Math.ceil((range.to - range.from) / HOUR_MS) + 1
          : calendarBucketCountAtMost(range.from, range.to, q.interval === '1d' ? 'day' : 'month');
      if (buckets * q.deviceIds.length > MAX_ROWS) throw rangeTooLong();
      const own = new Map((await app.devices.list(req.session.userId)).map((d) => [d.id, d]));
      const devices = q.deviceIds.map((id) => {
        const d = own.get(id);
        if (!d) throw new NotFoundError();
        return d;
      });
      // Up to `READ_AHEAD` devices are read at a time: each one's store queries overlap the others' sums,
      // and a table of 100 devices does not put 100 reads on the store at once.
      const contexts = devices.map(contextOf);
      const answers: Awaited<ReturnType<typeof energySeries>>[] = new Array(devices.length);
      let next = 0;
      const reader = async () => {
        for (let k = next++; k < devices.length; k = next++)
          answers[k] = await energySeries(app.store, contexts[k]!, range, q.interval, q.source);
      };
      await Promise.all(Array.from({ length: Math.min(READ_AHEAD, devices.length) }, reader));
      const rows: v.InferOutput<typeof ConsumptionSchema>['rows'] = [];
      for (const [k, d] of devices.entries()) {
        const e = answers[k]!;
        const ctx = contexts[k]!;
        for (let i = 0; i < e.t.length; i++) {
          rows.push({
            deviceId: d.id,
            bucket: e.t[i]!,
            tz: ctx.tz,
            import: e.import[i] ?? null,
            export: e.export[i] ?? null,
            balance: e.balance[i] ?? null,
          });
        }
      }
      return { interval: q.interval, unit: 'kWh' as const, rows };
    },
  );
};

export default analyticsRoutes;
