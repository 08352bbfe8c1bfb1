/** Devices (docs/api.md §Devices): claim, list, overview, edit, settings, limits, meter value, delete. */
import {
  ClaimDeviceRequestSchema,
  ClaimedDeviceSchema,
  DEFAULT_TIMEZONE,
  type Device,
  DeviceConnectionSchema,
  type DeviceOverview,
  DeviceOverviewSchema,
  DeviceSchema,
  detailsPathFor,
  deviceKeyFromMac,
  IdParamsSchema,
  LimitsSchema,
  localDateString,
  MESSAGES,
  MeterValueRequestSchema,
  MeterValueSchema,
  MqttCredentialsSchema,
  meterTopics,
  NotificationSettingsSchema,
  stockSuffixOf,
  UpdateDeviceRequestSchema,
} from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import * as v from 'valibot';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { DeviceRecord } from '../plugins/app/devices-repository.ts';
import { hashMeterPassword, newMeterPassword } from '../plugins/app/meter-credentials.ts';
import type { LiveStatus } from '../plugins/app/telemetry.ts';
import { errorResponse, noContent, request, response, type TypedRoutes } from '../schema.ts';
import type { RouteOptions } from './options.ts';

const tags = ['devices'];
const security = [{ bearer: [] }];
const params = request(IdParamsSchema);
const errors = { 400: errorResponse, 401: errorResponse, 404: errorResponse };

/** `AA:BB:CC:DD:EE:FF` from a device key. */
export function macOf(deviceKey: string): string {
  return deviceKey.toUpperCase().match(/../g)!.join(':');
}

function toDevice(d: DeviceRecord, live: LiveStatus): Device {
  return {
    id: d.id,
    name: d.name,
    friendlyName: d.friendlyName,
    model: d.model,
    modelName: d.model || d.typeName,
    typeCode: d.typeCode,
    typeName: d.typeName,
    mac: d.mac,
    deviceKey: d.deviceKey,
    phases: d.phases,
    detailsPath: detailsPathFor(d.id, d.typeCode, d.phases),
    status: live.status,
    lastSeen: live.lastSeen,
    rssi: live.rssi,
    location: d.location ? { id: d.location.id, name: d.location.name } : null,
    tariff: d.tariff,
    role: d.role,
  };
}

/** The fields of a request body that were sent (an optional field left out is undefined, not a value). */
function definedFields<T extends object>(body: T): Partial<T> {
  return Object.fromEntries(Object.entries(body).filter(([, x]) => x !== undefined)) as Partial<T>;
}

/** Lookback windows for the counter value at an instant: near first, so a busy meter costs one page. */
const LOOKBACK_MS = [3_600_000, 86_400_000, 31 * 86_400_000];

/** The last stored value of `param` at or before `at`, or null when none in the last 31 days. */
async function counterValueAt(
  app: FastifyInstance,
  deviceKey: string,
  param: string,
  at: number,
): Promise<number | null> {
  let to = at + 1;
  for (const span of LOOKBACK_MS) {
    const from = at + 1 - span;
    let cursor: string | null = null;
    let last: number | null = null;
    for (let page = 0; page < 1000; page++) {
      const res = await app.store.readRaw({ deviceKey, from, to, params: [param], cursor, limit: 10_000 });
      for (const row of res.items) {
        const value = row.values[param];
        if (value !== undefined) last = value;
      }
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    if (last !== null) return last;
    to = from;
  }
  return null;
}

/** A meter's MQTT account: its username is its device key, its password new and random. */
function newMeterCredentials(deviceKey: string) {
  const password = newMeterPassword();
  return { username: deviceKey, password, passwordHash: hashMeterPassword(password) };
}

const deviceRoutes: TypedRoutes<RouteOptions> = async (app) => {
  const { devices, locations } = app;
  app.addHook('onRequest', app.authenticate);

  async function overview(userId: number, id: number): Promise<DeviceOverview> {
    const d = await devices.get(userId, id);
    if (!d) throw new NotFoundError();
    const notifications = await devices.notifications(userId, id);
    if (!notifications) throw new NotFoundError();
    return {
      ...toDevice(d, await app.deviceStatus(d.deviceKey)),
      registeredAt: new Date(d.registeredAt).toISOString(),
      modifiedAt: new Date(d.modifiedAt).toISOString(),
      billingStart: d.billingStart,
      billingMonths: d.billingMonths,
      defaultTariff: d.defaultTariff,
      notifications,
    };
  }

  async function ownLocation(userId: number, locationId: number | null) {
    if (locationId === null) return null;
    const location = await locations.get(userId, locationId);
    if (!location) throw new NotFoundError();
    return location;
  }

  app.get(
    '/devices',
    {
      schema: {
        summary: 'Devices with status and last seen',
        tags,
        security,
        response: { 200: response(v.array(DeviceSchema)), 401: errorResponse },
      },
    },
    async (req) => {
      const list = await devices.list(req.session.userId);
      return Promise.all(list.map(async (d) => toDevice(d, await app.deviceStatus(d.deviceKey))));
    },
  );

  app.post(
    '/devices',
    {
      schema: {
        summary: 'Claim a meter by its MAC',
        tags,
        security,
        body: request(ClaimDeviceRequestSchema),
        response: { 201: response(ClaimedDeviceSchema), 409: errorResponse, ...errors },
      },
    },
    async (req, reply) => {
      const body = req.body;
      const userId = req.session.userId;
      await app.quotas.check(req, 'devices');
      const location = await ownLocation(userId, body.locationId);
      const deviceKey = deviceKeyFromMac(body.mac)!;
      const credentials = newMeterCredentials(deviceKey);
      const stockTopics = body.stockTopics;
      const id = await devices.claim(userId, {
        deviceKey,
        mqtt: { username: credentials.username, passwordHash: credentials.passwordHash },
        stockSuffix: stockTopics ? stockSuffixOf(deviceKey) : null,
        mac: macOf(deviceKey),
        name: body.name,
        friendlyName: body.friendlyName,
        model: body.model,
        typeCode: body.typeCode,
        phases: body.phases,
        locationId: location?.id ?? null,
        billingStart: localDateString(app.clock.now(), location?.timezone ?? DEFAULT_TIMEZONE),
        role: body.role,
      });
      if (id === 'grid-taken') throw new ConflictError(MESSAGES.gridTaken, { role: [MESSAGES.gridTaken] });
      if (id === 'claimed')
        throw new ConflictError(MESSAGES.alreadyClaimed, { mac: [MESSAGES.alreadyClaimed] });
      // Another account's meter answers to the same stock Tasmota topic and client id.
      if (id === 'stock-suffix')
        throw new ConflictError(MESSAGES.stockTopicTaken, { mac: [MESSAGES.stockTopicTaken] });
      // Its readings are evaluated for alerts from now on, not once a "no such device" is forgotten.
      app.alerts.reload(deviceKey);
      const d = (await devices.get(userId, id))!;
      const { username, password } = credentials;
      await app.meterAccess.issued(deviceKey, { username, password, stockTopics });
      const where = app.config.mqttPublic;
      return reply.code(201).send({
        ...toDevice(d, await app.deviceStatus(d.deviceKey)),
        mqtt: {
          host: where.host ?? req.hostname.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1'),
          port: where.port,
          tls: where.tls,
          username,
          password,
          topics: meterTopics(deviceKey, d.model, stockTopics),
        },
      });
    },
  );

  app.post(
    '/devices/:id/mqtt-credentials',
    {
      schema: {
        summary: "Rotate a meter's MQTT password; the old one stops working at once",
        tags,
        security,
        params,
        response: { 200: response(MqttCredentialsSchema), 409: errorResponse, ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const d = await devices.get(req.session.userId, id);
      if (!d) throw new NotFoundError();
      // A demo workspace's simulated meter: its account belongs to the simulator, not to the visitor.
      if (d.sharedTelemetry) throw new ConflictError(MESSAGES.sharedMeter);
      const credentials = newMeterCredentials(d.deviceKey);
      const { username, password, passwordHash } = credentials;
      if (!(await devices.setMqttCredentials(req.session.userId, id, { username, passwordHash })))
        throw new NotFoundError();
      const stockTopics = await devices.holdsStockSuffix(d.deviceKey);
      await app.meterAccess.issued(d.deviceKey, { username, password, stockTopics });
      return { username, password };
    },
  );

  app.get(
    '/devices/:id/connection',
    {
      schema: {
        summary: 'Whether the meter has connected, and why the broker or ingest last refused it',
        tags,
        security,
        params,
        response: { 200: response(DeviceConnectionSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const d = await devices.get(req.session.userId, id);
      if (!d) throw new NotFoundError();
      const [state, latest, stored] = await Promise.all([
        app.meterAccess.connection(d.deviceKey),
        app.store.latest(d.deviceKey),
        devices.mqttAccount(d.deviceKey),
      ]);
      // A device claimed before meters had accounts has none until its owner rotates the password (a
      // broker the API keeps in step reports its own view instead).
      const account =
        state?.account ??
        (stored
          ? undefined
          : {
              state: 'rotate' as const,
              detail: 'this meter has no MQTT account yet: rotate its password to create one',
            });
      // Without a broker that reports connections, a recent reading is the proof of one.
      const status = state?.connected !== undefined ? null : await app.deviceStatus(d.deviceKey);
      return {
        connected: state?.connected ?? status?.status !== 'offline',
        lastConnectedAt: state?.lastConnectedAt ?? null,
        lastReadingAt: latest?.ts ?? null,
        ...(state?.lastRejection ? { lastRejection: state.lastRejection } : {}),
        ...(account ? { account } : {}),
      };
    },
  );

  app.get(
    '/devices/:id',
    {
      schema: {
        summary: 'Device overview',
        tags,
        security,
        params,
        response: { 200: response(DeviceOverviewSchema), ...errors },
      },
    },
    async (req) => overview(req.session.userId, req.params.id),
  );

  app.put(
    '/devices/:id',
    {
      schema: {
        summary: 'Edit a device',
        tags,
        security,
        params,
        body: request(UpdateDeviceRequestSchema),
        response: { 200: response(DeviceOverviewSchema), 409: errorResponse, ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const userId = req.session.userId;
      const body = req.body;
      const d = await devices.get(userId, id);
      if (!d) throw new NotFoundError();
      await ownLocation(userId, body.locationId);
      if (body.tariffId !== null && !(await locations.getTariff(userId, body.tariffId)))
        throw new NotFoundError();
      if ((await devices.update(userId, id, body)) === 'grid-taken')
        throw new ConflictError(MESSAGES.gridTaken, { role: [MESSAGES.gridTaken] });
      // A new location may bring a new zone for the night silence and the day's consumption.
      app.alerts.reload(d.deviceKey);
      return overview(userId, id);
    },
  );

  app.delete(
    '/devices/:id',
    {
      schema: {
        summary: 'Delete a device and its telemetry',
        tags,
        security,
        params,
        response: { 204: noContent, ...errors },
      },
    },
    async (req, reply) => {
      const { id } = req.params;
      const d = await devices.get(req.session.userId, id);
      if (!d) throw new NotFoundError();
      if (d.sharedTelemetry) {
        // A demo workspace's simulated meter: the workspace lets go of it; the meter, its account and
        // its telemetry stay for every other visitor.
        await devices.remove(req.session.userId, id);
        app.alerts.reload(d.deviceKey);
        return reply.code(204).send();
      }
      // Telemetry first: if that fails the device stays listed and the delete can be retried.
      await app.store.deleteDevice(d.deviceKey);
      await devices.remove(req.session.userId, id);
      await app.meterAccess.revoked(d.deviceKey, d.deviceKey);
      app.alerts.reload(d.deviceKey);
      return reply.code(204).send();
    },
  );

  app.get(
    '/devices/:id/notifications',
    {
      schema: {
        summary: 'Notification settings',
        tags,
        security,
        params,
        response: { 200: response(NotificationSettingsSchema), ...errors },
      },
    },
    async (req) => {
      const n = await devices.notifications(req.session.userId, req.params.id);
      if (!n) throw new NotFoundError();
      return n;
    },
  );

  app.put(
    '/devices/:id/notifications',
    {
      schema: {
        summary: 'Change notification settings',
        tags,
        security,
        params,
        body: request(NotificationSettingsSchema),
        response: { 200: response(NotificationSettingsSchema), ...errors },
      },
    },
    async (req) => {
      const { id } = req.params;
      const d = await devices.get(req.session.userId, id);
      const stored = d ? await devices.notifications(req.session.userId, id) : null;
      if (!d || !stored) throw new NotFoundError();
      // The detector fields are optional: one a client does not send keeps its stored value.
      const body = { ...stored, ...definedFields(req.body) };
      if (!(await devices.setNotifications(req.session.userId, id, body))) throw new NotFoundError();
      // Muting takes effect at the next reading, in every API process.
      app.alerts.reload(d.deviceKey);
      return body;
    },
  );

  app.get(
    '/devices/:id/limits',
    {
      schema: {
        summary: 'Voltage limit bands in % of 230 V',
        tags,
        security,
        params,
        response: { 200: response(LimitsSchema), ...errors },
      },
    },
    async (req) => {
      const l = await devices.limits(req.session.userId, req.params.id);
      if (!l) throw new NotFoundError();
      return l;
    },
  );

  app.put(
    '/devices/:id/limits',
    {
      schema: {
        summary: 'Change the voltage limit bands',
        tags,
        security,
        params,
        body: request(LimitsSchema),
        response: { 200: response(LimitsSchema), ...errors },
      },
      config: { validationMessage: MESSAGES.limitsFailed },
    },
    async (req) => {
      const { id } = req.params;
      const body = req.body;
      if (!(await devices.setLimits(req.session.userId, id, body))) throw new NotFoundError();
      return body;
    },
  );

  app.post(
    '/devices/:id/meter-value',
    {
      schema: {
        summary: 'Record the register shown on the physical meter; later totals match it',
        tags,
        security,
        params,
        body: request(MeterValueRequestSchema),
        response: { 200: response(MeterValueSchema), ...errors },
      },
      config: { validationMessage: MESSAGES.meterValueFailed },
    },
    async (req) => {
      const { id } = req.params;
      const body = req.body;
      const d = await devices.get(req.session.userId, id);
      if (!d) throw new NotFoundError();
      const at = Date.parse(body.at);
      const counterValue = await counterValueAt(app, d.deviceKey, body.param, at);
      if (counterValue === null) {
        throw new ValidationError({ at: [MESSAGES.meterValueFailed] }, MESSAGES.meterValueFailed);
      }
      const offset = body.value - counterValue;
      await devices.addMeterOffset(d.id, { param: body.param, at, value: body.value, counterValue, offset });
      return { param: body.param, value: body.value, at: new Date(at).toISOString(), offset };
    },
  );
};

export default deviceRoutes;
