/** Alert history (docs/api.md §Exports and notifications): newest first, paged by cursor; mark one or all read. */
import { IdParamsSchema, NotificationsPageSchema, NotificationsQuerySchema } from '@kilowatch/core';
import { NotFoundError } from '../errors.ts';
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
};

export default notificationRoutes;
