/** Claimed devices with their settings, limits and meter-value offsets, scoped to the owning user. */
import {
  DEFAULT_DAILY_ALERT_SETTINGS,
  DEFAULT_DETECTOR_ALERT_SETTINGS,
  DEFAULT_LIMITS,
  DEFAULT_NOTIFICATION_SETTINGS,
  DEVICE_TYPES,
  type DeviceRole,
  defaultRole,
  type Limits,
  type NotificationSettings,
  type Ref,
} from '@kilowatch/core';
import type { Queryable, Sql } from '../../db/sql.ts';
import { isUniqueViolation } from '../../db/sql.ts';

interface DeviceRow {
  id: number;
  device_key: string;
  mac: string;
  name: string;
  friendly_name: string;
  model: string;
  type_code: number;
  phases: number;
  location_id: number | null;
  location_name: string | null;
  location_timezone: string | null;
  tariff_id: number | null;
  tariff_name: string | null;
  default_tariff_id: number | null;
  default_tariff_name: string | null;
  billing_start: string;
  billing_months: number;
  registered_at: number;
  modified_at: number;
  shared_telemetry: boolean;
  role: DeviceRole;
}

export interface DeviceRecord {
  id: number;
  deviceKey: string;
  mac: string;
  name: string;
  friendlyName: string;
  model: string;
  typeCode: number;
  typeName: string;
  phases: 1 | 3;
  location: (Ref & { timezone: string }) | null;
  /** The device's own tariff, or its location's. */
  tariff: Ref | null;
  defaultTariff: Ref | null;
  billingStart: string;
  billingMonths: number;
  registeredAt: number;
  modifiedAt: number;
  /**
   * A demo workspace's view of a simulated meter: it reads the meter's telemetry but owns neither the
   * telemetry nor the meter's MQTT account (docs/architecture.md §The demo).
   */
  sharedTelemetry: boolean;
  /** Its part in its location's energy flows; a location has one `grid` device at most. */
  role: DeviceRole;
}

const TYPE_NAMES = new Map<number, string>(Object.values(DEVICE_TYPES).map((t) => [t.code, t.name]));

export function typeNameOf(typeCode: number): string {
  return TYPE_NAMES.get(typeCode) ?? `Type ${typeCode}`;
}

function ref(id: number | null, name: string | null): Ref | null {
  return id === null || name === null ? null : { id: Number(id), name };
}

function toDevice(r: DeviceRow): DeviceRecord {
  const defaultTariff = ref(r.default_tariff_id, r.default_tariff_name);
  return {
    id: Number(r.id),
    deviceKey: r.device_key,
    mac: r.mac,
    name: r.name,
    friendlyName: r.friendly_name,
    model: r.model,
    typeCode: Number(r.type_code),
    typeName: typeNameOf(Number(r.type_code)),
    phases: Number(r.phases) === 1 ? 1 : 3,
    location:
      r.location_id === null
        ? null
        : { id: Number(r.location_id), name: r.location_name ?? '', timezone: r.location_timezone ?? '' },
    tariff: ref(r.tariff_id, r.tariff_name) ?? defaultTariff,
    defaultTariff,
    billingStart: r.billing_start,
    billingMonths: Number(r.billing_months),
    registeredAt: Number(r.registered_at),
    modifiedAt: Number(r.modified_at),
    sharedTelemetry: r.shared_telemetry === true,
    role: r.role,
  };
}

const SELECT_DEVICE = `
select d.id, d.device_key, d.mac, d.name, d.friendly_name, d.model, d.type_code, d.phases,
  d.location_id, l.name as location_name, l.timezone as location_timezone,
  d.tariff_id, t.name as tariff_name, l.tariff_id as default_tariff_id, lt.name as default_tariff_name,
  d.billing_start, d.billing_months, d.registered_at, d.modified_at, d.shared_telemetry, d.role
from devices d
left join locations l on l.id = d.location_id
left join tariffs t on t.id = d.tariff_id
left join tariffs lt on lt.id = l.tariff_id`;

export interface NewDevice {
  deviceKey: string;
  /** The meter's MQTT account: its username and the hash of its password. */
  mqtt?: { username: string; passwordHash: string };
  /**
   * The stock Tasmota suffix (`stockSuffixOf`) the device holds, unique among all devices; null for a
   * device whose meter uses its device key as its Topic (the default: the demo's simulated meters).
   */
  stockSuffix?: string | null;
  mac: string;
  name: string;
  friendlyName: string;
  model: string;
  typeCode: number;
  phases: 1 | 3;
  locationId: number | null;
  billingStart: string;
  /** The role asked for; without one the type's, or `consumer` for a second grid meter in the location. */
  role?: DeviceRole;
}

export interface DeviceChanges {
  name: string;
  friendlyName: string;
  locationId: number | null;
  tariffId: number | null;
  billingStart: string;
  billingMonths: number;
  /** Kept when omitted. */
  role?: DeviceRole;
}

/**
 * The role a device takes in a location: `asked` stands unless it is `grid` and another device there
 * (not `self`) is the grid meter — then `grid-taken` when the role was asked for by name, `consumer` when
 * it only came with the type or the device (a grid meter moved). Locks the location's row, so two claims
 * into one location decide one after the other.
 */
async function roleIn(
  tx: Queryable,
  locationId: number | null,
  role: DeviceRole,
  named: boolean,
  self: number | null,
): Promise<DeviceRole | 'grid-taken'> {
  if (role !== 'grid' || locationId === null) return role;
  await tx.query('select id from locations where id = $1 for update', [locationId]);
  const { rows } = await tx.query(
    "select 1 from devices where location_id = $1 and role = 'grid' and ($2::integer is null or id <> $2)",
    [locationId, self],
  );
  if (rows.length === 0) return role;
  return named ? 'grid-taken' : 'consumer';
}

export interface MeterOffset {
  param: string;
  at: number;
  value: number;
  counterValue: number;
  offset: number;
}

/** A `notification_settings` row as both engines return it. */
export interface NotificationRow {
  enabled: boolean;
  voltage_drop: number;
  voltage_rise: number;
  total_consumption: number;
  disable_at_night: boolean;
  interval_minutes: number;
  mute_all: boolean;
  /** The detector alerts' columns (migration 440); a query that does not select them gets the defaults. */
  fuse_a?: number | null;
  overload_share?: number;
  overload_seconds?: number;
  imbalance_share?: number | null;
  offline?: boolean;
  offline_factor?: number;
  /** The daily detector alerts' and the email columns (migration 450). */
  base_load?: boolean;
  base_load_share?: number;
  unusual?: boolean;
  unusual_share?: number;
  solar?: boolean;
  solar_share?: number;
  email?: boolean;
}

export function notificationSettingsFromRow(r: NotificationRow): NotificationSettings {
  const d = DEFAULT_DETECTOR_ALERT_SETTINGS;
  const g = DEFAULT_DAILY_ALERT_SETTINGS;
  const orNull = (x: number | null | undefined, fallback: number | null) =>
    x === undefined ? fallback : x === null ? null : Number(x);
  return {
    enabled: r.enabled,
    voltageDrop: Number(r.voltage_drop),
    voltageRise: Number(r.voltage_rise),
    totalConsumption: Number(r.total_consumption),
    disableAtNight: r.disable_at_night,
    interval: Number(r.interval_minutes),
    muteAll: r.mute_all,
    fuseA: orNull(r.fuse_a, d.fuseA),
    overloadShare: Number(r.overload_share ?? d.overloadShare),
    overloadSeconds: Number(r.overload_seconds ?? d.overloadSeconds),
    imbalanceShare: orNull(r.imbalance_share, d.imbalanceShare),
    offline: r.offline ?? d.offline,
    offlineFactor: Number(r.offline_factor ?? d.offlineFactor),
    baseLoad: r.base_load ?? g.baseLoad,
    baseLoadShare: Number(r.base_load_share ?? g.baseLoadShare),
    unusual: r.unusual ?? g.unusual,
    unusualShare: Number(r.unusual_share ?? g.unusualShare),
    solar: r.solar ?? g.solar,
    solarShare: Number(r.solar_share ?? g.solarShare),
    email: r.email ?? g.email,
  };
}

/**
 * The detector alerts' settings as SQL parameters: fuse_a, overload_share, overload_seconds, imbalance_share,
 * offline, offline_factor, base_load, base_load_share, unusual, unusual_share, solar, solar_share, email.
 */
export function detectorValues(n: NotificationSettings): unknown[] {
  const d = DEFAULT_DETECTOR_ALERT_SETTINGS;
  const g = DEFAULT_DAILY_ALERT_SETTINGS;
  return [
    n.fuseA === undefined ? d.fuseA : n.fuseA,
    n.overloadShare ?? d.overloadShare,
    n.overloadSeconds ?? d.overloadSeconds,
    n.imbalanceShare === undefined ? d.imbalanceShare : n.imbalanceShare,
    n.offline ?? d.offline,
    n.offlineFactor ?? d.offlineFactor,
    n.baseLoad ?? g.baseLoad,
    n.baseLoadShare ?? g.baseLoadShare,
    n.unusual ?? g.unusual,
    n.unusualShare ?? g.unusualShare,
    n.solar ?? g.solar,
    n.solarShare ?? g.solarShare,
    n.email ?? g.email,
  ];
}

/** Notification settings as SQL parameters, in the column order of notificationSettingsFromRow. */
export function notificationValues(n: NotificationSettings): unknown[] {
  return [
    n.enabled,
    n.voltageDrop,
    n.voltageRise,
    n.totalConsumption,
    n.disableAtNight,
    n.interval,
    n.muteAll,
  ];
}

export function createDevicesRepository(sql: Sql, now: () => number) {
  return {
    async list(userId: number): Promise<DeviceRecord[]> {
      const { rows } = await sql.query<DeviceRow>(`${SELECT_DEVICE} where d.user_id = $1 order by d.id`, [
        userId,
      ]);
      return rows.map(toDevice);
    },

    async get(userId: number, id: number): Promise<DeviceRecord | null> {
      const { rows } = await sql.query<DeviceRow>(`${SELECT_DEVICE} where d.user_id = $1 and d.id = $2`, [
        userId,
        id,
      ]);
      return rows[0] ? toDevice(rows[0]) : null;
    },

    /**
     * The device's id; `claimed` when the meter is already claimed (by anyone), `stock-suffix` when another
     * device holds its stock Tasmota suffix. The unique indexes decide, so concurrent claims cannot race.
     */
    async claim(userId: number, d: NewDevice): Promise<number | 'claimed' | 'stock-suffix' | 'grid-taken'> {
      const t = now();
      try {
        return await sql.transaction(async (tx) => {
          const role = await roleIn(
            tx,
            d.locationId,
            d.role ?? defaultRole(d.typeCode),
            d.role !== undefined,
            null,
          );
          if (role === 'grid-taken') return role;
          const { rows } = await tx.query<{ id: number }>(
            `insert into devices (user_id, device_key, mac, name, friendly_name, model, type_code, phases, location_id,
               billing_start, billing_months, registered_at, modified_at, mqtt_username, mqtt_password_hash,
               mqtt_credentials_at, stock_suffix, role)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $11, $12, $13, $14, $15, $16) returning id`,
            [
              userId,
              d.deviceKey,
              d.mac,
              d.name,
              d.friendlyName,
              d.model,
              d.typeCode,
              d.phases,
              d.locationId,
              d.billingStart,
              t,
              d.mqtt?.username ?? null,
              d.mqtt?.passwordHash ?? null,
              d.mqtt ? t : null,
              d.stockSuffix ?? null,
              role,
            ],
          );
          const id = Number(rows[0]!.id);
          const n = DEFAULT_NOTIFICATION_SETTINGS;
          await tx.query(
            `insert into notification_settings (device_id, enabled, voltage_drop, voltage_rise, total_consumption,
               disable_at_night, interval_minutes, mute_all) values ($1, $2, $3, $4, $5, $6, $7, $8)`,
            [id, ...notificationValues(n)],
          );
          await tx.query('insert into device_limits (device_id, warning, critical) values ($1, $2, $3)', [
            id,
            DEFAULT_LIMITS.warning,
            DEFAULT_LIMITS.critical,
          ]);
          return id;
        });
      } catch (err) {
        if (isUniqueViolation(err)) {
          if (!d.stockSuffix) return 'claimed';
          // Which index refused: the meter itself claimed wins over its suffix.
          const { rows } = await sql.query(
            'select 1 from devices where device_key = $1 and not shared_telemetry',
            [d.deviceKey],
          );
          return rows.length > 0 ? 'claimed' : 'stock-suffix';
        }
        throw err;
      }
    },

    /** False when the device is not the user's; `grid-taken` when `c.role` is `grid` and the location has one. */
    async update(userId: number, id: number, c: DeviceChanges): Promise<boolean | 'grid-taken'> {
      return sql.transaction(async (tx) => {
        const { rows } = await tx.query<{ role: DeviceRole }>(
          'select role from devices where user_id = $1 and id = $2 for update',
          [userId, id],
        );
        if (!rows[0]) return false;
        const role = await roleIn(tx, c.locationId, c.role ?? rows[0].role, c.role !== undefined, id);
        if (role === 'grid-taken') return role;
        const r = await tx.query(
          `update devices set name = $3, friendly_name = $4, location_id = $5, tariff_id = $6, billing_start = $7,
             billing_months = $8, modified_at = $9, role = $10 where user_id = $1 and id = $2`,
          [
            userId,
            id,
            c.name,
            c.friendlyName,
            c.locationId,
            c.tariffId,
            c.billingStart,
            c.billingMonths,
            now(),
            role,
          ],
        );
        return r.rowCount > 0;
      });
    },

    /** Replaces a device's MQTT account (rotation); false when the device is not the user's. */
    async setMqttCredentials(
      userId: number,
      id: number,
      mqtt: { username: string; passwordHash: string },
    ): Promise<boolean> {
      const r = await sql.query(
        `update devices set mqtt_username = $3, mqtt_password_hash = $4, mqtt_credentials_at = $5
         where user_id = $1 and id = $2`,
        [userId, id, mqtt.username, mqtt.passwordHash, now()],
      );
      return r.rowCount > 0;
    },

    /** The same by device key, for the simulated meters of the embedded deployment. */
    async setMqttCredentialsByKey(deviceKey: string, mqtt: { username: string; passwordHash: string }) {
      const r = await sql.query(
        `update devices set mqtt_username = $2, mqtt_password_hash = $3, mqtt_credentials_at = $4
         where device_key = $1 and not shared_telemetry`,
        [deviceKey, mqtt.username, mqtt.passwordHash, now()],
      );
      return r.rowCount > 0;
    },

    /** The device an MQTT username belongs to, with its password hash (the broker's check). */
    async mqttAccount(
      username: string,
    ): Promise<{ deviceKey: string; passwordHash: string; stockTopics: boolean } | null> {
      const { rows } = await sql.query<{
        device_key: string;
        mqtt_password_hash: string;
        stock_suffix: string | null;
      }>('select device_key, mqtt_password_hash, stock_suffix from devices where mqtt_username = $1', [
        username,
      ]);
      const r = rows[0];
      return r
        ? {
            deviceKey: r.device_key,
            passwordHash: r.mqtt_password_hash,
            stockTopics: r.stock_suffix !== null,
          }
        : null;
    },

    /** Whether a device holds its stock Tasmota suffix (the role Mosquitto gives its meter). */
    async holdsStockSuffix(deviceKey: string): Promise<boolean> {
      const { rows } = await sql.query(
        'select 1 from devices where device_key = $1 and stock_suffix is not null',
        [deviceKey],
      );
      return rows.length > 0;
    },

    /** Every device's MQTT username and key (the Mosquitto account sync). */
    async mqttAccounts(): Promise<{ username: string; deviceKey: string }[]> {
      const { rows } = await sql.query<{ mqtt_username: string; device_key: string }>(
        'select mqtt_username, device_key from devices where mqtt_username is not null order by id',
      );
      return rows.map((r) => ({ username: r.mqtt_username, deviceKey: r.device_key }));
    },

    /** The devices that hold no stock Tasmota suffix (the broker account reconcile narrows their roles). */
    async keysWithoutStockSuffix(): Promise<string[]> {
      const { rows } = await sql.query<{ device_key: string }>(
        'select device_key from devices where stock_suffix is null and not shared_telemetry order by id',
      );
      return rows.map((r) => r.device_key);
    },

    /** Every claimed device's key (the broker account reconcile). */
    async deviceKeys(): Promise<string[]> {
      const { rows } = await sql.query<{ device_key: string }>('select device_key from devices order by id');
      return rows.map((r) => r.device_key);
    },

    async remove(userId: number, id: number): Promise<boolean> {
      const r = await sql.query('delete from devices where user_id = $1 and id = $2', [userId, id]);
      return r.rowCount > 0;
    },

    async notifications(userId: number, id: number): Promise<NotificationSettings | null> {
      const { rows } = await sql.query<NotificationRow>(
        `select n.* from notification_settings n join devices d on d.id = n.device_id where d.user_id = $1 and d.id = $2`,
        [userId, id],
      );
      const r = rows[0];
      return r ? notificationSettingsFromRow(r) : null;
    },

    /** Stores every field of `n`; a detector field it lacks is stored as its default (merge first). */
    async setNotifications(userId: number, id: number, n: NotificationSettings): Promise<boolean> {
      const r = await sql.query(
        `update notification_settings set enabled = $3, voltage_drop = $4, voltage_rise = $5, total_consumption = $6,
           disable_at_night = $7, interval_minutes = $8, mute_all = $9, fuse_a = $10, overload_share = $11,
           overload_seconds = $12, imbalance_share = $13, offline = $14, offline_factor = $15,
           base_load = $16, base_load_share = $17, unusual = $18, unusual_share = $19, solar = $20,
           solar_share = $21, email = $22
         where device_id = (select id from devices where user_id = $1 and id = $2)`,
        [userId, id, ...notificationValues(n), ...detectorValues(n)],
      );
      return r.rowCount > 0;
    },

    async limits(userId: number, id: number): Promise<Limits | null> {
      const { rows } = await sql.query<{ warning: number; critical: number }>(
        `select l.warning, l.critical from device_limits l join devices d on d.id = l.device_id
         where d.user_id = $1 and d.id = $2`,
        [userId, id],
      );
      return rows[0] ? { warning: Number(rows[0].warning), critical: Number(rows[0].critical) } : null;
    },

    async setLimits(userId: number, id: number, l: Limits): Promise<boolean> {
      const r = await sql.query(
        `update device_limits set warning = $3, critical = $4
         where device_id = (select id from devices where user_id = $1 and id = $2)`,
        [userId, id, l.warning, l.critical],
      );
      return r.rowCount > 0;
    },

    async addMeterOffset(deviceId: number, o: MeterOffset): Promise<void> {
      await sql.query(
        `insert into meter_offsets (device_id, param, at, value, counter_value, "offset", created_at)
         values ($1, $2, $3, $4, $5, $6, $7)`,
        [deviceId, o.param, o.at, o.value, o.counterValue, o.offset, now()],
      );
    },

    /** Offsets of a device in time order: from each `at` on, its offset applies to the counter. */
    async meterOffsets(deviceId: number): Promise<MeterOffset[]> {
      const { rows } = await sql.query<{
        param: string;
        at: number;
        value: number;
        counter_value: number;
        offset: number;
      }>(
        'select param, at, value, counter_value, "offset" from meter_offsets where device_id = $1 order by at, id',
        [deviceId],
      );
      return rows.map((r) => ({
        param: r.param,
        at: Number(r.at),
        value: Number(r.value),
        counterValue: Number(r.counter_value),
        offset: Number(r.offset),
      }));
    },
  };
}

export type DevicesRepository = ReturnType<typeof createDevicesRepository>;
