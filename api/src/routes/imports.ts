/**
 * History imports (docs/api.md §History import): a file as the request body, streamed into the parser
 * and written as it arrives; its job's record to follow, its row errors as CSV, and its undo.
 */
import type { Readable } from 'node:stream';
import {
  HistoryImportError,
  type HistoryImportOptions,
  HistoryParser,
  IdParamsSchema,
  ImportAcceptedSchema,
  ImportJobSchema,
  type ImportQuery,
  ImportQuerySchema,
  MESSAGES,
} from '@kilowatch/core';
import * as v from 'valibot';
import { ApiError, ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { ERRORS_KEPT, tooLargeMessage } from '../imports/service.ts';
import { errorResponse, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['imports'];
const security = [{ bearer: [] }];
const params = request(IdParamsSchema);
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };

/** The parser's options from the query: the mapping is JSON text, the zone and precision may stand beside it. */
function optionsOf(q: ImportQuery, deviceKey: string): HistoryImportOptions {
  const common = { deviceKey, ...(q.encoding !== undefined ? { encoding: q.encoding } : {}) };
  if (q.format === 'kilowatch')
    return {
      ...common,
      format: 'kilowatch',
      ...(q.sourceDevice !== undefined ? { sourceDevice: q.sourceDevice } : {}),
    };
  if (q.mapping === undefined) {
    const message = q.format === 'csv' ? MESSAGES.importCsvMapping : MESSAGES.importLineProtocolMapping;
    throw new ValidationError({ mapping: [message] }, message);
  }
  let mapping: Record<string, unknown>;
  try {
    mapping = JSON.parse(q.mapping) as Record<string, unknown>;
  } catch (e) {
    const message = `The mapping is not JSON: ${(e as Error).message}`;
    throw new ValidationError({ mapping: [message] }, message);
  }
  if (mapping === null || typeof mapping !== 'object' || Array.isArray(mapping)) {
    const message = MESSAGES.importMappingObject;
    throw new ValidationError({ mapping: [message] }, message);
  }
  if (q.zone !== undefined && mapping.zone === undefined && mapping.offset === undefined)
    mapping = { ...mapping, zone: q.zone };
  if (q.format === 'csv') return { ...common, format: 'csv', mapping: mapping as never };
  if (q.precision !== undefined && mapping.precision === undefined)
    mapping = { ...mapping, precision: q.precision };
  return { ...common, format: 'line-protocol', mapping: mapping as never };
}

function optionProblems(e: HistoryImportError): ValidationError {
  const message = `The import cannot start: ${e.problems.join('; ')}.`;
  return new ValidationError({ mapping: [...e.problems] }, message);
}

const csvCell = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

function isStream(body: unknown): body is Readable {
  return (
    body !== null &&
    typeof body === 'object' &&
    typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function' &&
    typeof (body as { pipe?: unknown }).pipe === 'function'
  );
}

const importRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);
  // The file is handed on as the stream it arrives in (only in this plugin's routes): the job reads it
  // chunk by chunk, never whole. Fastify's body limit does not apply to it; the import's own does.
  app.removeContentTypeParser(['text/plain']);
  app.addContentTypeParser(['text/csv', 'text/plain'], (_req, payload, done) => done(null, payload));

  app.post(
    '/devices/:id/imports',
    {
      schema: {
        summary: "Import a device's history from a file (the body: text/csv or text/plain)",
        tags,
        security,
        params,
        querystring: request(ImportQuerySchema),
        response: { 202: response(ImportAcceptedSchema), 409: errorResponse, 413: errorResponse, ...errors },
      },
      // Refused before a byte of the body is read.
      preParsing: async (req) => {
        const length = Number(req.headers['content-length']);
        if (Number.isFinite(length) && length > app.imports.maxBytes)
          throw new ApiError(413, tooLargeMessage(app.imports.maxBytes));
      },
    },
    async (req, reply) => {
      const userId = req.session.userId;
      const device = await app.devices.get(userId, req.params.id);
      if (!device) throw new NotFoundError();
      if (device.sharedTelemetry) throw new ConflictError(MESSAGES.importSharedMeter);
      const q = req.query;
      const onConflict = q.onConflict ?? 'keep';
      if (onConflict !== 'keep' && onConflict !== 'replace') {
        const message = MESSAGES.importOnConflict;
        throw new ValidationError({ onConflict: [message] }, message);
      }
      const options = optionsOf(q, device.deviceKey);
      try {
        new HistoryParser(options);
      } catch (e) {
        if (e instanceof HistoryImportError) throw optionProblems(e);
        throw e;
      }
      const body = req.body as unknown;
      if (!isStream(body)) throw new ApiError(400, MESSAGES.importNoBody);
      const run = await app.imports.begin(userId, device, q.format, options, onConflict);
      if ('refused' in run)
        throw new ConflictError(
          run.refused === 'running' ? MESSAGES.importRunning : MESSAGES.importDemoRunning,
        );
      let stop: Awaited<ReturnType<typeof run.consume>>;
      try {
        stop = await run.consume(body, app.imports.maxBytes);
      } catch (e) {
        await app.imports.fail(run, MESSAGES.importStoreFailed);
        throw e;
      }
      if (stop?.kind === 'too-large') {
        const message = tooLargeMessage(stop.limit);
        await app.imports.fail(run, message);
        body.destroy();
        throw new ApiError(413, message);
      }
      if (stop?.kind === 'format') {
        const where = stop.line !== undefined ? `line ${stop.line}: ` : '';
        const message = `The file cannot be imported: ${where}${stop.problems.join('; ')}.`;
        await app.imports.fail(run, message);
        throw new ValidationError({ file: [...stop.problems] }, message);
      }
      // Everything is written; the rollups of the range follow in the background, then it is done.
      void app.imports.complete(run);
      return reply.code(202).send({ id: run.id });
    },
  );

  app.get(
    '/devices/:id/imports',
    {
      schema: {
        summary: "A device's imports, newest first (at most 100)",
        tags,
        security,
        params,
        response: { 200: response(v.array(ImportJobSchema)), ...errors },
      },
    },
    async (req) => {
      const device = await app.devices.get(req.session.userId, req.params.id);
      if (!device) throw new NotFoundError();
      return app.imports.list(req.session.userId, device.id);
    },
  );

  app.get(
    '/imports/:id',
    {
      schema: {
        summary: 'One import: its state, counts, range and first row errors',
        tags,
        security,
        params,
        response: { 200: response(ImportJobSchema), ...errors },
      },
    },
    async (req) => {
      const job = await app.imports.get(req.session.userId, req.params.id);
      if (!job) throw new NotFoundError();
      return job;
    },
  );

  app.get(
    '/imports/:id/errors.csv',
    {
      schema: {
        summary: `An import's row errors as CSV (line, column, reason; the first ${ERRORS_KEPT})`,
        tags,
        security,
        params,
        response: { 200: { description: 'CSV', type: 'string' }, ...errors },
      },
    },
    async (req, reply) => {
      const rows = await app.imports.errors(req.session.userId, req.params.id);
      if (!rows) throw new NotFoundError();
      const text = [
        'line,column,reason',
        ...rows.map((e) => `${e.line},${csvCell(e.column ?? '')},${csvCell(e.reason)}`),
      ]
        .map((l) => `${l}\r\n`)
        .join('');
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="import-${req.params.id}-errors.csv"`)
        .send(text);
    },
  );

  app.delete(
    '/imports/:id',
    {
      schema: {
        summary:
          'Undo an import: the readings it replaced are put back, those it added removed, the rollups of their range recomputed',
        tags,
        security,
        params,
        response: { 200: response(ImportJobSchema), 409: errorResponse, ...errors },
      },
    },
    async (req) => {
      const outcome = await app.imports.undo(req.session.userId, req.params.id);
      if (outcome === 'missing') throw new NotFoundError();
      if ('refused' in outcome) throw new ApiError(outcome.status, outcome.refused);
      return outcome;
    },
  );
};

export default importRoutes;
