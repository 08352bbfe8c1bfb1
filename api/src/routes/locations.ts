/** Locations and their versioned tariffs (docs/api.md §Locations and tariffs). */
import {
  IdParamsSchema,
  LocationRequestSchema,
  LocationSchema,
  TariffParamsSchema,
  TariffRequestSchema,
  TariffSchema,
} from '@kilowatch/core';
import * as v from 'valibot';
import { NotFoundError } from '../errors.ts';
import { errorResponse, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['locations'];
const security = [{ bearer: [] }];
const params = request(IdParamsSchema);
const tariffParams = request(TariffParamsSchema);
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };

const locationRoutes: TypedRoutes<RouteOptions> = async (app) => {
  const { locations } = app;
  app.addHook('onRequest', app.authenticate);

  async function ownLocation(userId: number, id: number) {
    const location = await locations.get(userId, id);
    if (!location) throw new NotFoundError();
    return location;
  }

  app.get(
    '/locations',
    {
      schema: {
        summary: 'Locations',
        tags,
        security,
        response: { 200: response(v.array(LocationSchema)), 401: errorResponse },
      },
    },
    async (req) => locations.list(req.session.userId),
  );

  app.post(
    '/locations',
    {
      schema: {
        summary: 'Add a location',
        tags,
        security,
        body: request(LocationRequestSchema),
        response: { 201: response(LocationSchema), ...errors },
      },
    },
    async (req, reply) => {
      const body = req.body;
      // A new location has no tariffs yet, so it can name none.
      if (body.tariffId !== null) throw new NotFoundError();
      await app.quotas.check(req, 'locations');
      return reply.code(201).send(await locations.create(req.session.userId, body));
    },
  );

  app.get(
    '/locations/:id',
    {
      schema: {
        summary: 'A location',
        tags,
        security,
        params,
        response: { 200: response(LocationSchema), ...errors },
      },
    },
    async (req) => ownLocation(req.session.userId, req.params.id),
  );

  app.put(
    '/locations/:id',
    {
      schema: {
        summary: 'Edit a location; its tariff must be one of its own',
        tags,
        security,
        params,
        body: request(LocationRequestSchema),
        response: { 200: response(LocationSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const userId = req.session.userId;
      const body = req.body;
      await ownLocation(userId, id);
      if (body.tariffId !== null && !(await locations.getTariff(userId, body.tariffId, id)))
        throw new NotFoundError();
      const updated = await locations.update(userId, id, body);
      if (!updated) throw new NotFoundError();
      return updated;
    },
  );

  app.delete(
    '/locations/:id',
    {
      schema: {
        summary: 'Delete a location and its tariffs',
        tags,
        security,
        params,
        response: { 204: noContent, ...errors },
      },
    },
    async (req, reply) => {
      if (!(await locations.remove(req.session.userId, req.params.id))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );

  app.get(
    '/locations/:id/tariffs',
    {
      schema: {
        summary: 'Tariff versions of a location',
        tags,
        security,
        params,
        response: { 200: response(v.array(TariffSchema)), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      await ownLocation(req.session.userId, id);
      return locations.listTariffs(req.session.userId, id);
    },
  );

  app.post(
    '/locations/:id/tariffs',
    {
      schema: {
        summary: 'Add a tariff version',
        tags,
        security,
        params,
        body: request(TariffRequestSchema),
        response: { 201: response(TariffSchema), ...errors },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      await ownLocation(req.session.userId, id);
      await app.quotas.check(req, 'tariffs');
      return reply.code(201).send(await locations.createTariff(req.session.userId, id, req.body));
    },
  );

  app.get(
    '/locations/:id/tariffs/:tariffId',
    {
      schema: {
        summary: 'A tariff version',
        tags,
        security,
        params: tariffParams,
        response: { 200: response(TariffSchema), ...errors },
      },
    },
    async (req) => {
      const { id, tariffId } = req.params;
      const tariff = await locations.getTariff(req.session.userId, tariffId, id);
      if (!tariff) throw new NotFoundError();
      return tariff;
    },
  );

  app.put(
    '/locations/:id/tariffs/:tariffId',
    {
      schema: {
        summary: 'Edit a tariff version',
        tags,
        security,
        params: tariffParams,
        body: request(TariffRequestSchema),
        response: { 200: response(TariffSchema), ...errors },
      },
    },
    async (req) => {
      const { id, tariffId } = req.params;
      const tariff = await locations.updateTariff(req.session.userId, id, tariffId, req.body);
      if (!tariff) throw new NotFoundError();
      return tariff;
    },
  );

  app.delete(
    '/locations/:id/tariffs/:tariffId',
    {
      schema: {
        summary: 'Delete a tariff version',
        tags,
        security,
        params: tariffParams,
        response: { 204: noContent, ...errors },
      },
    },
    async (req, reply) => {
      const { id, tariffId } = req.params;
      if (!(await locations.removeTariff(req.session.userId, id, tariffId))) throw new NotFoundError();
      return reply.code(204).send();
    },
  );
};

export default locationRoutes;
