/**
 * Alert history (docs/api.md §Exports and notifications): newest first, paged by cursor; mark one or all
 * read. And the account's notification webhook (its address; the signing secret shown once).
 */
import {
  IdParamsSchema,
  MESSAGES,
  NotificationsPageSchema,
  NotificationsQuerySchema,
  WebhookRequestSchema,
  WebhookSchema,
} from '@kilowatch/core';
import { isLoopbackUrl, type WebhookRecord } from '../alerts/webhooks.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { errorResponse, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['notifications'];
const security = [{ bearer: [] }];

const notificationRoutes: TypedRoutes<RouteOptions> = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/notifications',
    {
      schema: {
        summary: 'Alert history, newest first',
        tags,
        security,
        querystring: request(NotificationsQuerySchema),
        response: { 200: response(NotificationsPageSchema), 400: errorResponse, 401: errorResponse },
      },
    },
    async (req) => {
      const q = req.query;
      return app.notifications.page(req.session.userId, q.cursor, q.limit);
    },
  );

  app.post(
    '/notifications/read',
    {
      schema: {
        summary: "Mark all of the user's notifications as read",
        tags,
        security,
        response: { 204: noContent, 401: errorResponse },
      },
    },
    async (req, reply) => {
      await app.notifications.markAllRead(req.session.userId);
      return reply.code(204).send();
    },
  );

  app.post(
    '/notifications/:id/read',
    {
      schema: {
        summary: 'Mark a notification as read',
        tags,
        security,
        params: request(IdParamsSchema),
        response: { 204: noContent, 401: errorResponse, 404: errorResponse },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      if (!(await app.notifications.markRead(req.session.userId, id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  const publicWebhook = (r: WebhookRecord | null, secret?: string) => ({
    url: r?.url ?? null,
    ...(secret !== undefined ? { secret } : {}),
    secretCreatedAt: r ? new Date(r.secretCreatedAt).toISOString() : null,
  });

  app.get(
    '/account/webhook',
    {
      schema: {
        summary: "The account's notification webhook (never its secret)",
        tags,
        security,
        response: { 200: response(WebhookSchema), 401: errorResponse },
      },
    },
    async (req) => publicWebhook(await app.webhooks.get(req.session.userId)),
  );

  app.put(
    '/account/webhook',
    {
      schema: {
        summary:
          'Set (or, with url null, remove) the notification webhook; a new secret is in this answer only',
        tags,
        security,
        body: request(WebhookRequestSchema),
        response: { 200: response(WebhookSchema), 400: errorResponse, 401: errorResponse },
      },
    },
    async (req) => {
      const { userId } = req.session;
      const { url, rotateSecret } = req.body;
      if (url === null) {
        await app.webhooks.remove(userId);
        return publicWebhook(null);
      }
      if (isLoopbackUrl(url) && !app.webhooks.allowLoopback) {
        throw new ValidationError({ url: [MESSAGES.saveFailed] });
      }
      const { record, newSecret } = await app.webhooks.set(
        userId,
        url,
        rotateSecret === true,
        app.clock.now(),
      );
      return publicWebhook(record, newSecret ? record.secret : undefined);
    },
  );
};

export default notificationRoutes;
