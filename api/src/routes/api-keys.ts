/**
 * Personal API keys (docs/api.md §Account): a signed-in user creates, lists and revokes named read-only keys.
 * These are account routes: a key itself never opens them (auth.ts), only a session does.
 */
import {
  API_KEYS_MAX,
  type ApiKey,
  ApiKeySchema,
  CreateApiKeyRequestSchema,
  CreatedApiKeySchema,
  IdParamsSchema,
  MESSAGES,
} from '@kilowatch/core';
import * as v from 'valibot';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { ApiKeyRecord } from '../plugins/app/api-keys-repository.ts';
import { API_KEY_PREFIX } from '../plugins/app/auth.ts';
import { newToken, tokenHash } from '../plugins/app/tokens.ts';
import { errorResponse, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['account'];
const security = [{ bearer: [] }];

function publicKey(k: ApiKeyRecord): ApiKey {
  return {
    id: k.id,
    name: k.name,
    createdAt: new Date(k.createdAt).toISOString(),
    lastUsedAt: k.lastUsedAt === null ? null : new Date(k.lastUsedAt).toISOString(),
  };
}

const apiKeyRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/account/api-keys',
    {
      schema: {
        summary: 'Personal API keys of the signed-in user (never the keys themselves)',
        tags,
        security,
        response: { 200: response(v.array(ApiKeySchema)), 401: errorResponse },
      },
    },
    async (req) => (await app.apiKeys.list(req.session.userId)).map(publicKey),
  );

  app.post(
    '/account/api-keys',
    {
      schema: {
        summary: 'Create a read-only API key; the key is in this answer only',
        tags,
        security,
        body: request(CreateApiKeyRequestSchema),
        response: {
          201: response(CreatedApiKeySchema),
          400: errorResponse,
          401: errorResponse,
          409: errorResponse,
        },
      },
    },
    async (req, reply) => {
      const { name } = req.body;
      await app.quotas.check(req, 'apiKeys');
      const key = `${API_KEY_PREFIX}${newToken()}`;
      const created = await app.apiKeys.create(req.session.userId, name, tokenHash(key), API_KEYS_MAX);
      if (!created) throw new ConflictError(MESSAGES.saveFailed, { name: [MESSAGES.saveFailed] });
      return reply.code(201).send({ id: created.id, name: created.name, key });
    },
  );

  app.delete(
    '/account/api-keys/:id',
    {
      schema: {
        summary: 'Revoke an API key; it stops working at once',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 204: noContent, 401: errorResponse, 404: errorResponse },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      if (!(await app.apiKeys.revoke(req.session.userId, id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );
};

export default apiKeyRoutes;
