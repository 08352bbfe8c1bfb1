/** Saved comparisons (docs/api.md §Telemetry): CRUD scoped to the user, and one series block per member. */
import {
  type ChartInterval,
  ComparisonDataQuerySchema,
  ComparisonDataSchema,
  type ComparisonRequest,
  ComparisonRequestSchema,
  ComparisonSchema,
  chooseInterval,
  IdParamsSchema,
  isQueryableParam,
  MESSAGES,
} from '@kilowatch/core';
import * as v from 'valibot';
import { createComparisonsRepository } from '../analytics/comparisons-repository.ts';
import { contextOf, parseRange } from '../analytics/context.ts';
import { resolveInterval, seriesForMany } from '../analytics/series.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import {
  errorResponse,
  longAnswersInTurns,
  noContent,
  numericColumnsSerializer,
  request,
  response,
  type TypedRoutes,
} from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['comparisons'];
const security = [{ bearer: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };
const params = request(IdParamsSchema);

const comparisonRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  const comparisons = createComparisonsRepository(app.sql, app.clock.now);

  /** Members may only name the user's own devices and known parameters. */
  async function checkMembers(userId: number, body: ComparisonRequest): Promise<void> {
    const own = new Set((await app.devices.list(userId)).map((d) => d.id));
    for (const m of body.members) {
      if (!own.has(m.deviceId)) throw new NotFoundError();
      if (!isQueryableParam(m.param)) {
        throw new ValidationError({ members: [MESSAGES.compareParameter] }, MESSAGES.compareParameter);
      }
    }
  }

  app.get(
    '/comparisons',
    {
      schema: {
        summary: 'Saved comparisons',
        tags,
        security,
        response: { 200: response(v.array(ComparisonSchema)), ...errors },
      },
    },
    async (req) => comparisons.list(req.session.userId),
  );

  app.post(
    '/comparisons',
    {
      schema: {
        summary: 'Save a comparison',
        tags,
        security,
        body: request(ComparisonRequestSchema),
        response: { 201: response(ComparisonSchema), ...errors },
      },
    },
    async (req, reply) => {
      const body = req.body;
      await checkMembers(req.session.userId, body);
      await app.quotas.check(req, 'comparisons');
      const id = await comparisons.create(req.session.userId, body);
      return reply.code(201).send(await comparisons.get(req.session.userId, id));
    },
  );

  app.get(
    '/comparisons/:id',
    {
      schema: {
        summary: 'One comparison',
        tags,
        security,
        params,
        response: { 200: response(ComparisonSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const c = await comparisons.get(req.session.userId, id);
      if (!c) throw new NotFoundError();
      return c;
    },
  );

  app.put(
    '/comparisons/:id',
    {
      schema: {
        summary: 'Change a comparison',
        tags,
        security,
        params,
        body: request(ComparisonRequestSchema),
        response: { 200: response(ComparisonSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const body = req.body;
      if (!(await comparisons.get(req.session.userId, id))) throw new NotFoundError();
      await checkMembers(req.session.userId, body);
      if (!(await comparisons.update(req.session.userId, id, body))) throw new NotFoundError();
      return comparisons.get(req.session.userId, id);
    },
  );

  app.delete(
    '/comparisons/:id',
    {
      schema: {
        summary: 'Delete a comparison',
        tags,
        security,
        params,
        response: { 204: noContent, ...errors },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      if (!(await comparisons.remove(req.session.userId, id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.get(
    '/comparisons/:id/data',
    {
      schema: {
        summary: 'One series block per member, on one shared interval',
        tags,
        security,
        params,
        querystring: request(ComparisonDataQuerySchema),
        response: { 200: response(ComparisonDataSchema), ...errors },
      },
      serializerCompiler: numericColumnsSerializer,
      preSerialization: longAnswersInTurns(null),
    },
    async (req) => {
      const { id } = req.params;
      const q = req.query;
      const c = await comparisons.get(req.session.userId, id);
      if (!c) throw new NotFoundError();
      const range = parseRange(q.from, q.to);
      const interval: ChartInterval = resolveInterval(
        range,
        q.interval ?? chooseInterval(range.from, range.to),
      );
      const devices = new Map((await app.devices.list(req.session.userId)).map((d) => [d.id, d]));
      const members = c.members.map((m) => {
        const d = devices.get(m.deviceId);
        if (!d) throw new NotFoundError();
        return { m, d };
      });
      // The members are read together: one pass over the store for all of them.
      const data = await seriesForMany(
        app.store,
        members.map(({ m, d }) => ({
          ctx: contextOf(d),
          req: {
            ...range,
            params: [m.param],
            interval,
            stats: q.stats ?? (['avg'] as const),
            ...(q.points !== undefined ? { points: q.points } : {}),
          },
        })),
        q.source,
      );
      const blocks = members.map(({ m, d }, i) => ({
        deviceId: m.deviceId,
        param: m.param,
        deviceName: d.friendlyName || d.name,
        data: data[i]!,
      }));
      return { interval, blocks };
    },
  );
};

export default comparisonRoutes;
