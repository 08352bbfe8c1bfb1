/** Locations and their tariffs, every query scoped to the owning user. */
import {
  type Location,
  type LocationRequest,
  NO_SETTLEMENT,
  type SettlementScheme,
  type SettlementSettings,
  type Tariff,
  type TariffRequest,
  type ZoneSchedule,
} from '@kilowatch/core';
import type { Sql } from '../../db/sql.ts';

interface LocationRow {
  id: number;
  name: string;
  code: string;
  address: string;
  city: string;
  timezone: string;
  tariff_id: number | null;
  settlement_scheme: string;
  settlement_kw: number | null;
  settlement_since: string | null;
}

interface TariffRow {
  id: number;
  location_id: number;
  name: string;
  tariff_group: string;
  operator: string | null;
  zone1_price: number;
  zone2_price: number;
  zone3_price: number;
  fixed_price: number;
  currency: string;
  valid_from: string;
  valid_to: string | null;
  clock_basis: string;
  schedule: ZoneSchedule | string | null;
}

function toLocation(r: LocationRow): Location {
  return {
    id: Number(r.id),
    name: r.name,
    code: r.code,
    address: r.address,
    city: r.city,
    timezone: r.timezone,
    tariffId: r.tariff_id === null ? null : Number(r.tariff_id),
    settlement: {
      scheme: r.settlement_scheme as SettlementScheme,
      installedKw: r.settlement_kw === null ? null : Number(r.settlement_kw),
      since: r.settlement_since,
    },
  };
}

function toTariff(r: TariffRow): Tariff {
  return {
    id: Number(r.id),
    locationId: Number(r.location_id),
    name: r.name,
    group: r.tariff_group as Tariff['group'],
    operator: r.operator,
    zone1Price: Number(r.zone1_price),
    zone2Price: Number(r.zone2_price),
    zone3Price: Number(r.zone3_price),
    fixedPrice: Number(r.fixed_price),
    currency: r.currency,
    validFrom: r.valid_from,
    validTo: r.valid_to,
    clockBasis: r.clock_basis as Tariff['clockBasis'],
    schedule: typeof r.schedule === 'string' ? (JSON.parse(r.schedule) as ZoneSchedule) : r.schedule,
    simulated: true,
  };
}

export type LocationInput = Required<Omit<LocationRequest, 'tariffId' | 'settlement'>> & {
  tariffId: number | null;
  /** Left out on an update: the stored settlement stays. */
  settlement?: SettlementSettings | undefined;
};
export type TariffInput = Required<TariffRequest> & { operator: string | null; validTo: string | null };

const LOCATION_COLUMNS =
  'id, name, code, address, city, timezone, tariff_id, settlement_scheme, settlement_kw, settlement_since';
const TARIFF_COLUMNS =
  'id, location_id, name, tariff_group, operator, zone1_price, zone2_price, zone3_price, fixed_price, currency, valid_from, valid_to, clock_basis, schedule';

/** A tariff's columns from name to schedule, in the order both the insert and the update list them. */
function tariffValues(t: TariffInput): unknown[] {
  return [
    t.name,
    t.group,
    t.operator,
    t.zone1Price,
    t.zone2Price,
    t.zone3Price,
    t.fixedPrice,
    t.currency,
    t.validFrom,
    t.validTo,
    t.clockBasis,
    t.schedule === null ? null : JSON.stringify(t.schedule),
  ];
}

/** The settlement's three columns; none when left out (a new location). Net-metering alone keeps the power. */
function settlementValues(s: SettlementSettings | undefined): [string, number | null, string | null] {
  const v = s ?? NO_SETTLEMENT;
  return [v.scheme, v.scheme === 'net-metering' ? v.installedKw : null, v.scheme === 'none' ? null : v.since];
}

export function createLocationsRepository(sql: Sql, now: () => number) {
  return {
    async list(userId: number): Promise<Location[]> {
      const { rows } = await sql.query<LocationRow>(
        `select ${LOCATION_COLUMNS} from locations where user_id = $1 order by id`,
        [userId],
      );
      return rows.map(toLocation);
    },

    async get(userId: number, id: number): Promise<Location | null> {
      const { rows } = await sql.query<LocationRow>(
        `select ${LOCATION_COLUMNS} from locations where user_id = $1 and id = $2`,
        [userId, id],
      );
      return rows[0] ? toLocation(rows[0]) : null;
    },

    async create(userId: number, l: LocationInput): Promise<Location> {
      const { rows } = await sql.query<LocationRow>(
        `insert into locations (user_id, name, code, address, city, timezone, tariff_id, created_at, updated_at,
           settlement_scheme, settlement_kw, settlement_since)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11) returning ${LOCATION_COLUMNS}`,
        [
          userId,
          l.name,
          l.code,
          l.address,
          l.city,
          l.timezone,
          l.tariffId,
          now(),
          ...settlementValues(l.settlement),
        ],
      );
      return toLocation(rows[0]!);
    },

    async update(userId: number, id: number, l: LocationInput): Promise<Location | null> {
      const { rows } = await sql.query<LocationRow>(
        `update locations set name = $3, code = $4, address = $5, city = $6, timezone = $7, tariff_id = $8, updated_at = $9,
           settlement_scheme = case when $10::boolean then $11 else settlement_scheme end,
           settlement_kw = case when $10::boolean then $12::double precision else settlement_kw end,
           settlement_since = case when $10::boolean then $13 else settlement_since end
         where user_id = $1 and id = $2 returning ${LOCATION_COLUMNS}`,
        [
          userId,
          id,
          l.name,
          l.code,
          l.address,
          l.city,
          l.timezone,
          l.tariffId,
          now(),
          l.settlement !== undefined,
          ...settlementValues(l.settlement),
        ],
      );
      return rows[0] ? toLocation(rows[0]) : null;
    },

    async remove(userId: number, id: number): Promise<boolean> {
      const r = await sql.query('delete from locations where user_id = $1 and id = $2', [userId, id]);
      return r.rowCount > 0;
    },

    async listTariffs(userId: number, locationId: number): Promise<Tariff[]> {
      const { rows } = await sql.query<TariffRow>(
        `select ${TARIFF_COLUMNS} from tariffs where user_id = $1 and location_id = $2 order by valid_from, id`,
        [userId, locationId],
      );
      return rows.map(toTariff);
    },

    /** A tariff of the user's; with `locationId`, only if it belongs to that location. */
    async getTariff(userId: number, tariffId: number, locationId?: number): Promise<Tariff | null> {
      const { rows } = await sql.query<TariffRow>(
        `select ${TARIFF_COLUMNS} from tariffs where user_id = $1 and id = $2 and ($3::integer is null or location_id = $3)`,
        [userId, tariffId, locationId ?? null],
      );
      return rows[0] ? toTariff(rows[0]) : null;
    },

    async createTariff(userId: number, locationId: number, t: TariffInput): Promise<Tariff> {
      const { rows } = await sql.query<TariffRow>(
        `insert into tariffs (location_id, user_id, name, tariff_group, operator, zone1_price, zone2_price, zone3_price,
           fixed_price, currency, valid_from, valid_to, clock_basis, schedule, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15) returning ${TARIFF_COLUMNS}`,
        [locationId, userId, ...tariffValues(t), now()],
      );
      return toTariff(rows[0]!);
    },

    async updateTariff(
      userId: number,
      locationId: number,
      tariffId: number,
      t: TariffInput,
    ): Promise<Tariff | null> {
      const { rows } = await sql.query<TariffRow>(
        `update tariffs set name = $4, tariff_group = $5, operator = $6, zone1_price = $7, zone2_price = $8,
           zone3_price = $9, fixed_price = $10, currency = $11, valid_from = $12, valid_to = $13, clock_basis = $14,
           schedule = $15, updated_at = $16
         where user_id = $1 and location_id = $2 and id = $3 returning ${TARIFF_COLUMNS}`,
        [userId, locationId, tariffId, ...tariffValues(t), now()],
      );
      return rows[0] ? toTariff(rows[0]) : null;
    },

    async removeTariff(userId: number, locationId: number, tariffId: number): Promise<boolean> {
      const r = await sql.query('delete from tariffs where user_id = $1 and location_id = $2 and id = $3', [
        userId,
        locationId,
        tariffId,
      ]);
      return r.rowCount > 0;
    },
  };
}

export type LocationsRepository = ReturnType<typeof createLocationsRepository>;
