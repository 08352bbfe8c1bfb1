/**
 * The first step of every analytics answer: the user's device (404 when unknown or someone else's), its
 * store key and its location's zone, and the requested range checked.
 */
import { DEFAULT_TIMEZONE, EARLIEST_QUERY_MS, LATEST_QUERY_MS, MESSAGES } from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import { ApiError, NotFoundError, ValidationError } from '../errors.ts';
import type { DeviceRecord } from '../plugins/app/devices-repository.ts';

export interface DeviceContext {
  device: DeviceRecord;
  deviceKey: string;
  /** The device location's zone (docs/domain.md §Time), Europe/Warsaw without a location. */
  tz: string;
}

export function contextOf(device: DeviceRecord): DeviceContext {
  return { device, deviceKey: device.deviceKey, tz: device.location?.timezone || DEFAULT_TIMEZONE };
}

export async function deviceContext(
  app: FastifyInstance,
  userId: number,
  id: number,
): Promise<DeviceContext> {
  const device = await app.devices.get(userId, id);
  if (!device) throw new NotFoundError();
  return contextOf(device);
}

export interface Range {
  from: number;
  to: number;
}

/**
 * `from`/`to` as epoch ms; an empty or reversed range is a missing range. Every route checks its range
 * here before any work: an instant before 1970 or from 2100 on is refused as too long a range (core's
 * `EARLIEST_QUERY_MS`, `LATEST_QUERY_MS`), so no route ever walks the days of ten thousand years.
 */
export function parseRange(from: string, to: string): Range {
  const f = Date.parse(from);
  const t = Date.parse(to);
  if (!Number.isFinite(f) || !Number.isFinite(t) || t <= f) {
    throw new ValidationError({ to: [MESSAGES.dateRangeRequired] }, MESSAGES.dateRangeRequired);
  }
  if (f < EARLIEST_QUERY_MS) throw rangeTooLong('from');
  if (t > LATEST_QUERY_MS) throw rangeTooLong('to');
  return { from: f, to: t };
}

/** 400 "Data range is too long." (docs/api.md §Conventions). */
export function rangeTooLong(field: 'from' | 'to' = 'to'): ApiError {
  return new ApiError(400, MESSAGES.rangeTooLong, { [field]: [MESSAGES.rangeTooLong] });
}
