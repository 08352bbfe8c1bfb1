/**
 * Response shapes of docs/api.md, parsed with valibot at the boundary. They mirror the contract until the
 * shared schemas in @kilowatch/core land; types are inferred from these schemas, never written twice.
 */
import * as v from 'valibot';

export const UserSchema = v.object({
  id: v.union([v.string(), v.number()]),
  email: v.string(),
  fullName: v.optional(v.nullable(v.string()), ''),
  country: v.optional(v.nullable(v.string()), ''),
  timezone: v.optional(v.nullable(v.string()), ''),
  language: v.optional(v.nullable(v.string()), 'en'),
});
export type User = v.InferOutput<typeof UserSchema>;

export const AuthDataSchema = v.object({
  token: v.string(),
  refreshToken: v.optional(v.string()),
  expiresAt: v.optional(v.union([v.string(), v.number()])),
  user: UserSchema,
});
export type AuthData = v.InferOutput<typeof AuthDataSchema>;

export const VerifyTokenSchema = v.object({ valid: v.boolean(), expiresAt: v.optional(v.unknown()) });

const Ref = v.nullable(v.object({ id: v.union([v.string(), v.number()]), name: v.string() }));

export const DeviceStatusSchema = v.picklist(['online', 'offline', 'weak-signal']);

export const DeviceSchema = v.object({
  id: v.union([v.string(), v.number()]),
  name: v.string(),
  friendlyName: v.optional(v.nullable(v.string()), ''),
  model: v.optional(v.nullable(v.string()), ''),
  modelName: v.optional(v.nullable(v.string()), ''),
  typeCode: v.number(),
  typeName: v.optional(v.nullable(v.string()), ''),
  mac: v.optional(v.nullable(v.string()), ''),
  status: v.optional(v.fallback(DeviceStatusSchema, 'offline'), 'offline'),
  lastSeen: v.optional(v.nullable(v.union([v.string(), v.number()]))),
  location: v.optional(Ref, null),
  tariff: v.optional(Ref, null),
  phases: v.optional(v.picklist([1, 3])),
});
export type Device = v.InferOutput<typeof DeviceSchema>;
export const DeviceListSchema = v.array(DeviceSchema);

export const NotificationSettingsSchema = v.object({
  enabled: v.boolean(),
  voltageDrop: v.nullable(v.number()),
  voltageRise: v.nullable(v.number()),
  totalConsumption: v.nullable(v.number()),
  disableAtNight: v.boolean(),
  interval: v.nullable(v.number()),
  muteAll: v.boolean(),
});
export type NotificationSettings = v.InferOutput<typeof NotificationSettingsSchema>;

const DateLike = v.nullable(v.union([v.string(), v.number()]));

export const DeviceOverviewSchema = v.object({
  ...DeviceSchema.entries,
  registeredAt: v.optional(DateLike, null),
  modifiedAt: v.optional(DateLike, null),
  billingStart: v.optional(DateLike, null),
  billingMonths: v.optional(v.nullable(v.number()), null),
  defaultTariff: v.optional(v.nullable(v.unknown()), null),
  notifications: v.optional(v.nullable(NotificationSettingsSchema), null),
});
export type DeviceOverview = v.InferOutput<typeof DeviceOverviewSchema>;

export const LimitsSchema = v.object({ warning: v.number(), critical: v.number() });
export type Limits = v.InferOutput<typeof LimitsSchema>;

const NumCol = v.array(v.nullable(v.number()));

export const SeriesSchema = v.object({
  interval: v.optional(v.string()),
  from: v.optional(v.unknown()),
  to: v.optional(v.unknown()),
  tz: v.optional(v.string()),
  t: v.array(v.number()),
  series: v.record(
    v.string(),
    v.object({ avg: v.optional(NumCol), min: v.optional(NumCol), max: v.optional(NumCol) }),
  ),
});
export type SeriesResponse = v.InferOutput<typeof SeriesSchema>;

export const EnergySchema = v.object({
  tz: v.optional(v.string()),
  t: v.array(v.number()),
  import: NumCol,
  export: NumCol,
  balance: NumCol,
});
export type EnergyResponse = v.InferOutput<typeof EnergySchema>;

const EnergyTriple = v.object({
  import: v.nullable(v.number()),
  export: v.nullable(v.number()),
  balance: v.nullable(v.number()),
});
export type EnergyTriple = v.InferOutput<typeof EnergyTriple>;

export const EnergySummarySchema = v.object({
  tz: v.optional(v.string()),
  unit: v.optional(v.string(), 'kWh'),
  today: EnergyTriple,
  month: EnergyTriple,
  year: EnergyTriple,
  total: EnergyTriple,
  billingPeriod: v.optional(v.nullable(v.object({ start: v.unknown(), end: v.unknown() })), null),
  billing: v.optional(v.nullable(EnergyTriple), null),
  historyLoading: v.optional(v.boolean(), false),
});
export type EnergySummary = v.InferOutput<typeof EnergySummarySchema>;

export const LatestSchema = v.object({
  ts: v.nullable(v.union([v.number(), v.string()])),
  values: v.record(v.string(), v.nullable(v.number())),
});
export type Latest = v.InferOutput<typeof LatestSchema>;

export const ReadingsPageSchema = v.object({
  items: v.array(v.object({ ts: v.string(), values: v.record(v.string(), v.nullable(v.number())) })),
  nextCursor: v.optional(v.nullable(v.string()), null),
});
export type ReadingsPage = v.InferOutput<typeof ReadingsPageSchema>;

export const ApiErrorBodySchema = v.object({
  message: v.optional(v.string()),
  errors: v.optional(v.record(v.string(), v.array(v.string()))),
});
