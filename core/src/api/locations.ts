/** Location and tariff messages (docs/api.md §Locations and tariffs). */
import * as v from 'valibot';
import { SETTLEMENT_SCHEMES } from '../settlement.ts';
import { CLOCK_BASES, DAY_TYPES, TARIFF_GROUPS } from '../tariff/calendar.ts';
import {
  DateStringSchema,
  IdSchema,
  idText,
  numberIn,
  optionalText,
  requiredText,
  TimeZoneSchema,
} from './common.ts';
import { MESSAGES } from './messages.ts';

/** A location's prosumer settlement (docs/domain.md §Prosumer settlement). */
export const SettlementSettingsSchema = v.object({
  scheme: v.picklist(SETTLEMENT_SCHEMES),
  /** Installed power in kW: net-metering's banked share depends on it. */
  installedKw: v.nullable(v.number()),
  /** The first local day under the scheme: no credit is earned or drawn before it. */
  since: v.nullable(v.string()),
});
export type SettlementSettings = v.InferOutput<typeof SettlementSettingsSchema>;

export const NO_SETTLEMENT: SettlementSettings = { scheme: 'none', installedKw: null, since: null };

export const LocationSchema = v.object({
  id: IdSchema,
  name: v.string(),
  code: v.string(),
  address: v.string(),
  city: v.string(),
  timezone: v.string(),
  tariffId: v.nullable(IdSchema),
  settlement: SettlementSettingsSchema,
});
export type Location = v.InferOutput<typeof LocationSchema>;

export const SettlementRequestSchema = v.pipe(
  v.object({
    scheme: v.picklist(SETTLEMENT_SCHEMES, MESSAGES.invalidScheme),
    installedKw: v.optional(v.nullable(numberIn(0, 50, MESSAGES.installedPowerRequired)), null),
    since: v.optional(v.nullable(DateStringSchema), null),
  }),
  v.forward(
    v.check(
      (s) => s.scheme !== 'net-metering' || (s.installedKw !== null && s.installedKw > 0),
      MESSAGES.installedPowerRequired,
    ),
    ['installedKw'],
  ),
  v.forward(
    v.check((s) => s.scheme === 'none' || s.since !== null, MESSAGES.settlementSinceRequired),
    ['since'],
  ),
);

export const LocationRequestSchema = v.object({
  name: requiredText(100),
  code: optionalText(50),
  address: optionalText(200),
  city: optionalText(100),
  timezone: TimeZoneSchema,
  tariffId: v.optional(v.nullable(IdSchema), null),
  /** Left out: the stored settlement stays as it is. */
  settlement: v.optional(SettlementRequestSchema),
});
export type LocationRequest = v.InferInput<typeof LocationRequestSchema>;

const TIME_OF_DAY = /^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$/;

export const ZoneWindowSchema = v.object({
  /** `HH:mm` local (or CET) wall time; a window may wrap midnight (22:00–06:00). */
  from: v.pipe(v.string(MESSAGES.fieldEmpty), v.regex(TIME_OF_DAY, MESSAGES.fieldEmpty)),
  to: v.pipe(v.string(MESSAGES.fieldEmpty), v.regex(TIME_OF_DAY, MESSAGES.fieldEmpty)),
  zone: v.picklist([1, 2, 3], MESSAGES.validNumber),
});

/** Zone windows per day type; outside every window zone 1 applies. A day type left out falls back to the weekday's rules (holidays to the weekday they fall on). */
export const ZoneScheduleSchema = v.object(
  Object.fromEntries(DAY_TYPES.map((d) => [d, v.optional(v.array(ZoneWindowSchema))])) as Record<
    (typeof DAY_TYPES)[number],
    v.OptionalSchema<v.ArraySchema<typeof ZoneWindowSchema, undefined>, undefined>
  >,
);

export const TariffSchema = v.object({
  id: IdSchema,
  locationId: IdSchema,
  name: v.string(),
  group: v.picklist(TARIFF_GROUPS),
  operator: v.nullable(v.string()),
  zone1Price: v.number(),
  zone2Price: v.number(),
  zone3Price: v.number(),
  /** Fixed price per month. */
  fixedPrice: v.number(),
  currency: v.string(),
  validFrom: v.string(),
  validTo: v.nullable(v.string()),
  clockBasis: v.picklist(CLOCK_BASES),
  /** Zone windows overriding the group's defaults (operators whose hours differ), null for the defaults. */
  schedule: v.nullable(ZoneScheduleSchema),
  /** Tariff figures are simulated, not a basis for claims (docs/spec.md §1). */
  simulated: v.literal(true),
});
export type Tariff = v.InferOutput<typeof TariffSchema>;

const price = numberIn(0, 1_000_000);

export const TariffRequestSchema = v.pipe(
  v.object({
    name: requiredText(100),
    group: v.picklist(TARIFF_GROUPS, MESSAGES.fieldEmpty),
    operator: v.optional(v.nullable(v.pipe(v.string(MESSAGES.fieldEmpty), v.trim(), v.maxLength(50))), null),
    zone1Price: price,
    zone2Price: v.optional(price, 0),
    zone3Price: v.optional(price, 0),
    fixedPrice: v.optional(price, 0),
    currency: v.optional(
      v.pipe(v.string(MESSAGES.fieldEmpty), v.regex(/^[A-Z]{3}$/, MESSAGES.fieldEmpty)),
      'PLN',
    ),
    validFrom: DateStringSchema,
    validTo: v.optional(v.nullable(DateStringSchema), null),
    clockBasis: v.optional(v.picklist(CLOCK_BASES, MESSAGES.fieldEmpty), 'local'),
    schedule: v.optional(v.nullable(ZoneScheduleSchema), null),
  }),
  v.forward(
    v.check((t) => t.validTo === null || t.validTo > t.validFrom, MESSAGES.invalidDate),
    ['validTo'],
  ),
);
export type TariffRequest = v.InferInput<typeof TariffRequestSchema>;

export const TariffParamsSchema = v.object({
  id: idText(),
  tariffId: idText(),
});
