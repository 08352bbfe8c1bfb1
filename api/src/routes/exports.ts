/** Exports (docs/api.md §Exports and notifications): queue a CSV or PDF, follow it, download it by POST. */
import { createReadStream } from 'node:fs';
import {
  ExportAcceptedSchema,
  ExportJobSchema,
  ExportRequestSchema,
  IdParamsSchema,
  isStoredParam,
  MESSAGES,
} from '@kilowatch/core';
import * as v from 'valibot';
import { parseRange, rangeTooLong } from '../analytics/context.ts';
import { ApiError, NotFoundError, ValidationError } from '../errors.ts';
import { errorResponse, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['exports'];
const security = [{ bearer: [] }];
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };
const RETRY_AFTER_S = 30;

const exportRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.post(
    '/exports',
    {
      schema: {
        summary: 'Queue an export (CSV or PDF; several devices → one zip)',
        tags,
        security,
        body: request(ExportRequestSchema),
        response: { 202: response(ExportAcceptedSchema), 409: errorResponse, 503: errorResponse, ...errors },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const range = parseRange(body.from, body.to);
      if (range.to - range.from > app.exports.settings.maxRangeMs) throw rangeTooLong();
      if (body.params !== 'all' && !body.params.every(isStoredParam)) {
        throw new ValidationError({ params: [MESSAGES.selectParameter] }, MESSAGES.selectParameter);
      }
      const own = new Set((await app.devices.list(req.session.userId)).map((d) => d.id));
      if (!body.deviceIds.every((id) => own.has(id))) throw new NotFoundError();
      const job = await app.exports.enqueue(
        req.session.userId,
        {
          deviceIds: [...new Set(body.deviceIds)],
          params: body.params,
          from: range.from,
          to: range.to,
          format: body.format,
        },
        body.fileName,
      );
      if ('refused' in job) {
        // The user's own files fill their space: theirs to free (delete or let expire), so 409.
        if (job.refused === 'user-space') throw new ApiError(409, MESSAGES.exportSpaceUser);
        throw new ApiError(
          503,
          job.refused === 'server-space' ? MESSAGES.exportSpaceServer : MESSAGES.exportUnavailable,
          undefined,
          { 'retry-after': String(RETRY_AFTER_S) },
        );
      }
      return reply.code(202).send({ id: job.id, status: 'queued' as const });
    },
  );

  app.get(
    '/exports',
    {
      schema: {
        summary: 'Export jobs, newest first',
        tags,
        security,
        response: { 200: response(v.array(ExportJobSchema)), ...errors },
      },
    },
    async (req) => app.exports.list(req.session.userId),
  );

  app.get(
    '/exports/:id',
    {
      schema: {
        summary: 'One export job',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 200: response(ExportJobSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const job = await app.exports.get(req.session.userId, id);
      if (!job) throw new NotFoundError();
      return job;
    },
  );

  app.delete(
    '/exports/:id',
    {
      schema: {
        summary: 'Delete an export job and its file (not while it runs)',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 204: noContent, 409: errorResponse, ...errors },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const outcome = await app.exports.remove(req.session.userId, id);
      if (outcome === 'missing') throw new NotFoundError();
      if (outcome === 'running') throw new ApiError(409, MESSAGES.exportRunning);
      return reply.code(204).send();
    },
  );

  app.post(
    '/exports/:id/download',
    {
      schema: {
        summary: 'Download a finished export',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 200: { description: 'The file', type: 'string', format: 'binary' }, ...errors },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const file = await app.exports.file(req.session.userId, id);
      if (!file) throw new NotFoundError();
      const type = file.zip
        ? 'application/zip'
        : file.format === 'pdf'
          ? 'application/pdf'
          : 'text/csv; charset=utf-8';
      return reply
        .header('content-type', type)
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .header('cache-control', 'no-store')
        .send(createReadStream(file.path));
    },
  );
};

export default exportRoutes;
