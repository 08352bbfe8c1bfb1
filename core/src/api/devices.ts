/** Device messages (docs/api.md §Devices). */
import * as v from 'valibot';
import { deviceKeyFromMac } from '../devices.ts';
import { DEVICE_ROLES } from '../flows.ts';
import { COUNTER_NAMES } from '../params.ts';
import {
  DateStringSchema,
  IdSchema,
  InstantSchema,
  numberIn,
  optionalText,
  RefSchema,
  requiredText,
} from './common.ts';
import { MESSAGES } from './messages.ts';

export const DEVICE_STATUSES = ['online', 'offline', 'weak-signal'] as const;

export const DeviceSchema = v.object({
  id: IdSchema,
  name: v.string(),
  friendlyName: v.string(),
  model: v.string(),
  modelName: v.string(),
  typeCode: v.number(),
  typeName: v.string(),
  mac: v.string(),
  /** The MAC as 12 lowercase hex digits: the key of its MQTT topics and telemetry. */
  deviceKey: v.string(),
  phases: v.picklist([1, 3]),
  /** Client route of the details page this type opens (docs/spec.md §2). */
  detailsPath: v.string(),
  status: v.picklist(DEVICE_STATUSES),
  /** Epoch milliseconds of the newest reading or status message, null when never seen. */
  lastSeen: v.nullable(v.number()),
  rssi: v.nullable(v.number()),
  location: v.nullable(RefSchema),
  tariff: v.nullable(RefSchema),
  /** Its part in its location's energy flows (docs/domain.md §Energy flows). */
  role: v.picklist(DEVICE_ROLES),
});
export type Device = v.InferOutput<typeof DeviceSchema>;

/** A role as a request names it. */
const RoleSchema = v.picklist(DEVICE_ROLES, MESSAGES.invalidRole);

/** A meter's MQTT account: issued at claim and at rotation; the password is shown only then. */
export const MqttCredentialsSchema = v.object({
  username: v.string(),
  password: v.string(),
});
export type MqttCredentials = v.InferOutput<typeof MqttCredentialsSchema>;

/** Where and how a meter connects, with the topics its firmware publishes on (docs/api.md §MQTT). */
export const MqttConnectionInfoSchema = v.object({
  ...MqttCredentialsSchema.entries,
  host: v.string(),
  port: v.number(),
  tls: v.boolean(),
  topics: v.object({ native: v.string(), tasmota: v.string(), shelly: v.string() }),
});

/** The answer to a claim: the device and, once, its MQTT credentials. */
export const ClaimedDeviceSchema = v.object({
  ...DeviceSchema.entries,
  mqtt: MqttConnectionInfoSchema,
});
export type ClaimedDevice = v.InferOutput<typeof ClaimedDeviceSchema>;

export const CONNECTION_REJECTIONS = ['bad-password', 'topic-not-allowed', 'payload-rejected'] as const;

/** What the add-device screen waits on: has the meter connected, and why was it last refused. */
export const DeviceConnectionSchema = v.object({
  connected: v.boolean(),
  /** Epoch milliseconds of the last accepted MQTT connection, null when never (or not known here). */
  lastConnectedAt: v.nullable(v.number()),
  lastReadingAt: v.nullable(v.number()),
  lastRejection: v.optional(
    v.object({
      reason: v.picklist(CONNECTION_REJECTIONS),
      topic: v.optional(v.string()),
      at: v.number(),
      detail: v.optional(v.string()),
    }),
  ),
  /**
   * Whether the broker has the meter's account, where the API keeps a broker's accounts in step (Mosquitto):
   * `pending` (not taken yet, retried), `rotate` (it has one whose password nobody knows), `unknown` (the
   * broker does not answer).
   */
  account: v.optional(
    v.object({
      state: v.picklist(['ok', 'pending', 'rotate', 'unknown']),
      detail: v.optional(v.string()),
    }),
  ),
});
export type DeviceConnection = v.InferOutput<typeof DeviceConnectionSchema>;

export const NotificationSettingsSchema = v.object({
  enabled: v.boolean(MESSAGES.fieldEmpty),
  /** Alert when a phase voltage falls below this many volts. */
  voltageDrop: numberIn(0, 500),
  /** Alert when a phase voltage rises above this many volts. */
  voltageRise: numberIn(0, 500),
  /** Alert when a day's imported energy exceeds this many kWh (0 = off). */
  totalConsumption: numberIn(0, 1_000_000),
  /** Silence 22:00–07:00 in the location's time zone. */
  disableAtNight: v.boolean(MESSAGES.fieldEmpty),
  /** Minimum minutes between two alerts of the same kind. */
  interval: v.pipe(numberIn(1, 10_080), v.integer(MESSAGES.validNumber)),
  muteAll: v.boolean(MESSAGES.fieldEmpty),
  // The detector alerts (docs/api.md §Exports and notifications). Optional: a request without one keeps
  // the stored value; answers carry them all.
  /** Fuse rating per phase, A; null = no overload check. */
  fuseA: v.optional(v.nullable(numberIn(1, 1000))),
  /** Share of the fuse rating that is an overload (default 0.9). */
  overloadShare: v.optional(numberIn(0.1, 2)),
  /** Seconds an overload or imbalance must hold (default 60). */
  overloadSeconds: v.optional(v.pipe(numberIn(10, 3600), v.integer(MESSAGES.validNumber))),
  /** (max − min) / mean of the phase currents above this share is an imbalance (default 0.5); null = off. */
  imbalanceShare: v.optional(v.nullable(numberIn(0.05, 3))),
  /** Alert on a meter silent for `offlineFactor` × its usual interval (default off). */
  offline: v.optional(v.boolean(MESSAGES.fieldEmpty)),
  /** Usual intervals of silence that make a meter offline (default 5; never sooner than 5 minutes). */
  offlineFactor: v.optional(numberIn(2, 1000)),
  // The daily detector alerts (docs/api.md §Daily detector alerts), judged once per local day after it ends.
  /** Alert when a day's always-on power rises above its 4-week median by `baseLoadShare` (default off). */
  baseLoad: v.optional(v.boolean(MESSAGES.fieldEmpty)),
  /** Rise over the median that is an alert (default 0.3 = 30 %). */
  baseLoadShare: v.optional(numberIn(0.05, 5)),
  /** Alert on a day far above the same weekday's typical consumption (default off; seasonal loads leave it off). */
  unusual: v.optional(v.boolean(MESSAGES.fieldEmpty)),
  /** Share above the same weekdays' median a day must also exceed (default 0.5 = 50 %). */
  unusualShare: v.optional(numberIn(0.1, 10)),
  /** Alert on a day producing below `solarShare` of the recent best day (a PV meter; default off). */
  solar: v.optional(v.boolean(MESSAGES.fieldEmpty)),
  /** Share of the recent best day below which a day is underperforming (default 0.4 = 40 %). */
  solarShare: v.optional(numberIn(0.05, 0.95)),
  /** Send this device's alerts by email to the account's address too (default off). */
  email: v.optional(v.boolean(MESSAGES.fieldEmpty)),
});
export type NotificationSettings = v.InferOutput<typeof NotificationSettingsSchema>;

/** Defaults of the daily detector alerts' settings (and of `email`). */
export const DEFAULT_DAILY_ALERT_SETTINGS = {
  baseLoad: false,
  baseLoadShare: 0.3,
  unusual: false,
  unusualShare: 0.5,
  solar: false,
  solarShare: 0.4,
  email: false,
} as const;

export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  enabled: false,
  voltageDrop: 207,
  voltageRise: 253,
  totalConsumption: 0,
  disableAtNight: true,
  interval: 60,
  muteAll: false,
};

export const DeviceOverviewSchema = v.object({
  ...DeviceSchema.entries,
  registeredAt: v.string(),
  modifiedAt: v.string(),
  billingStart: v.string(),
  billingMonths: v.number(),
  /** The tariff of the device's location, used when the device names none. */
  defaultTariff: v.nullable(RefSchema),
  notifications: NotificationSettingsSchema,
});
export type DeviceOverview = v.InferOutput<typeof DeviceOverviewSchema>;

export const ClaimDeviceRequestSchema = v.object({
  mac: v.pipe(
    v.string(MESSAGES.invalidMac),
    v.trim(),
    v.check((mac) => deviceKeyFromMac(mac) !== null, MESSAGES.invalidMac),
  ),
  name: requiredText(100),
  typeCode: v.pipe(numberIn(1, 999), v.integer(MESSAGES.validNumber)),
  model: optionalText(100),
  friendlyName: optionalText(100),
  /** 1 for single-phase meters; three-phase by default. */
  phases: v.optional(v.picklist([1, 3], MESSAGES.validNumber), 3),
  locationId: v.optional(v.nullable(IdSchema), null),
  /**
   * Whether the meter uses its stock Tasmota names (`tasmota_<suffix>`, `DVES_<suffix>`); false for one
   * whose Topic is its device key (the suffix is held by another device).
   */
  stockTopics: v.optional(v.boolean(), true),
  /** Its type's role when omitted (an energy meter joining a location that has a grid meter: `consumer`). */
  role: v.optional(RoleSchema),
});
export type ClaimDeviceRequest = v.InferInput<typeof ClaimDeviceRequestSchema>;

export const UpdateDeviceRequestSchema = v.object({
  name: requiredText(100),
  friendlyName: optionalText(100),
  locationId: v.optional(v.nullable(IdSchema), null),
  tariffId: v.optional(v.nullable(IdSchema), null),
  billingStart: DateStringSchema,
  billingMonths: v.pipe(numberIn(1, 24), v.integer(MESSAGES.validNumber)),
  /** Kept when omitted; a grid meter moved to a location that has one becomes `consumer`. */
  role: v.optional(RoleSchema),
});
export type UpdateDeviceRequest = v.InferInput<typeof UpdateDeviceRequestSchema>;

/** Warning and critical bands in % of the nominal 230 V (docs/spec.md §5, docs/domain.md §Limits). */
export const LimitsSchema = v.pipe(
  v.object({
    warning: v.pipe(v.number(MESSAGES.validNumber), v.finite(MESSAGES.validNumber)),
    critical: v.pipe(v.number(MESSAGES.validNumber), v.finite(MESSAGES.validNumber)),
  }),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const { warning, critical } = dataset.value;
    const warningOk = warning >= 0 && warning <= 50;
    const criticalOk = critical >= 0 && critical <= 100;
    if (!warningOk) {
      addIssue({ message: MESSAGES.warningRange, path: [pathItem(dataset.value, 'warning')] });
    }
    if (!criticalOk) {
      addIssue({ message: MESSAGES.criticalRange, path: [pathItem(dataset.value, 'critical')] });
    }
    if (warningOk && criticalOk && warning >= critical) {
      addIssue({ message: MESSAGES.warningBelowCritical, path: [pathItem(dataset.value, 'warning')] });
      addIssue({ message: MESSAGES.criticalAboveWarning, path: [pathItem(dataset.value, 'critical')] });
    }
  }),
);
export type Limits = v.InferOutput<typeof LimitsSchema>;

export const DEFAULT_LIMITS: Limits = { warning: 10, critical: 15 };

function pathItem(input: Record<string, unknown>, key: string) {
  return { type: 'object', origin: 'value', input, key, value: input[key] } as const;
}

export const MeterValueRequestSchema = v.object({
  /** A stored counter (`eai1`, `energy3phases_import`, …). */
  param: v.picklist(COUNTER_NAMES as readonly string[] as [string, ...string[]], MESSAGES.selectParameter),
  /** The register value shown on the physical meter. */
  value: numberIn(0, 1e9),
  /** When the meter showed it. */
  at: InstantSchema,
});
export type MeterValueRequest = v.InferInput<typeof MeterValueRequestSchema>;

export const MeterValueSchema = v.object({
  param: v.string(),
  value: v.number(),
  at: v.string(),
  /** Added to the stored counter from `at` on, so totals equal the physical register. */
  offset: v.number(),
});
export type MeterValue = v.InferOutput<typeof MeterValueSchema>;
