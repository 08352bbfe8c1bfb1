/**
 * Meters' accounts on Mosquitto, kept in step by the API through its dynamic security plugin (the admin
 * client is dynsec-control.ts).
 *
 * - Each claimed device is a client named by its device key with a role of its own (`kilowatch-meter-<key>`)
 *   holding core's `meterAcl`: publish on its own native, Tasmota and Shelly topics, subscribe to its own
 *   command topics; the default ACL access denies everything else. Its stock `tasmota_<suffix>` is in the
 *   role only when its device holds the suffix (unique among devices, so no two roles share a topic).
 * - The services' account (`KW_MQTT_USERNAME`) gets the role `kilowatch-service`: the meters' topics, the
 *   internal `kilowatch/live/#` and `kilowatch/hub/#`, the shared-subscription groups, and the broker's
 *   notice-level log lines (`$SYS/broker/log/N`, read by `broker-log.ts`).
 * - Claim creates the client, rotation sets its new password (Mosquitto disconnects a meter connected with
 *   the old one), delete removes it (and disconnects it).
 *
 * The broker may be away when a device is claimed, rotated or deleted: the change never fails the request.
 * It is kept and retried every few seconds, and `reconcile` (at start, then every few minutes, in every API
 * process) makes the broker's meter accounts match the devices: an account whose device is gone is
 * removed; a device without an account (claimed before accounts existed, or whose password was lost with
 * a process that could not hand it over) gets one with a random password nobody knows, marked so that
 * `GET /api/devices/:id/connection` tells its owner to rotate the password.
 */
import { randomBytes } from 'node:crypto';
import { DEVICE_KEY_PATTERN, meterAcl } from '@kilowatch/core';
import mqtt from 'mqtt';
import { BROKER_NOTICE_TOPIC } from './broker-log.ts';
import { connectDynsec, type DynsecControl, DynsecError } from './dynsec-control.ts';
import type { MeterAccess, MeterConnectionState } from './plugins/app/meter-access.ts';

/** The role holding the services' permissions. */
export const SERVICE_ROLE = 'kilowatch-service';
/** The role of one meter. */
export const meterRole = (deviceKey: string) => `kilowatch-meter-${deviceKey}`;
/** The text name of a meter account whose password nobody knows: its owner must rotate it. */
export const UNKNOWN_PASSWORD = 'kilowatch meter (password unknown: rotate it)';
const METER_TEXT = 'kilowatch meter';

const refused = (e: unknown, reason: RegExp) => e instanceof DynsecError && reason.test(e.reason);

/** The services' permissions: the meters' topics (plain and shared), the internal ones. */
export function serviceAcl(): { acltype: string; topic: string; allow: boolean; priority: number }[] {
  const acl: { acltype: string; topic: string; allow: boolean; priority: number }[] = [];
  const add = (acltype: string, topic: string) => acl.push({ acltype, topic, allow: true, priority: 0 });
  for (const t of ['kilowatch/live/#', 'kilowatch/hub/#']) add('publishClientSend', t);
  for (const t of ['#', '$share/#']) {
    add('subscribePattern', t);
    add('publishClientReceive', t);
  }
  // Mosquitto's notice-level log lines (meters' connections and refused logins, `broker-log.ts`).
  add('subscribeLiteral', BROKER_NOTICE_TOPIC);
  add('publishClientReceive', BROKER_NOTICE_TOPIC);
  return acl;
}

/**
 * Creates a role, or gives an existing one the ACL entries it lacks; with `exact`, also takes away the
 * entries it should not have (a meter's role after its device gave up its stock Tasmota names).
 */
async function ensureRole(
  control: DynsecControl,
  rolename: string,
  acls: { acltype: string; topic: string; allow: boolean; priority: number }[],
  exact = false,
): Promise<void> {
  try {
    await control.run('createRole', { rolename, textname: 'kilowatch', acls });
  } catch (e) {
    if (!refused(e, /already exists/i)) throw e;
    // Changing a role disconnects its clients: only the entries it lacks are added.
    const role = (await control.run('getRole', { rolename })).data?.role as
      | { acls?: { acltype: string; topic: string; allow: boolean }[] }
      | undefined;
    const has = (a: { acltype: string; topic: string; allow: boolean }) =>
      role?.acls?.some((b) => b.acltype === a.acltype && b.topic === a.topic && b.allow === a.allow);
    for (const acl of acls) if (!has(acl)) await control.run('addRoleACL', { rolename, ...acl });
    if (!exact) return;
    const wanted = (a: { acltype: string; topic: string; allow: boolean }) =>
      acls.some((b) => b.acltype === a.acltype && b.topic === a.topic && b.allow === a.allow);
    for (const acl of role?.acls ?? [])
      if (!wanted(acl))
        await control.run('removeRoleACL', { rolename, acltype: acl.acltype, topic: acl.topic });
  }
}

/**
 * Whether the broker refuses `credentials` now. Only its answer counts (CONNACK 4/5, or MQTT 5's 0x86/0x87):
 * a check that times out on a busy broker says nothing, and setting the password again on it would
 * disconnect every service client for no reason.
 */
async function refusesLogin(mqttUrl: string, credentials: { username: string; password: string }) {
  try {
    const c = await mqtt.connectAsync(mqttUrl, {
      ...credentials,
      clientId: `kilowatch-check-${randomBytes(6).toString('hex')}`,
      reconnectPeriod: 0,
      connectTimeout: 5000,
    });
    await c.endAsync(true);
    return false;
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    return code === 4 || code === 5 || code === 0x86 || code === 0x87;
  }
}

/**
 * The services' account and the default ACL access: deny publishing, subscribing and receiving; every role
 * allows receiving exactly what it may subscribe to. Receiving is checked against the account of the
 * connection a message goes out on, so an account that takes over another meter's client id (Mosquitto
 * does not bind ids to accounts) inherits that session's subscriptions but is sent nothing on them.
 * Its password is set again only when the configured one does not log in, so a
 * restart of the API does not disconnect ingest.
 */
export async function ensureServiceAccount(
  control: DynsecControl,
  mqttUrl: string,
  service: { username: string; password: string },
): Promise<void> {
  await control.run('setDefaultACLAccess', {
    acls: [
      { acltype: 'publishClientSend', allow: false },
      { acltype: 'publishClientReceive', allow: false },
      { acltype: 'subscribe', allow: false },
      { acltype: 'unsubscribe', allow: true },
    ],
  });
  await ensureRole(control, SERVICE_ROLE, serviceAcl());
  let existing: { roles?: { rolename: string }[] } | undefined;
  try {
    existing = (await control.run('getClient', { username: service.username })).data
      ?.client as typeof existing;
  } catch (e) {
    if (!refused(e, /not found/i)) throw e;
  }
  if (!existing) {
    await control.run('createClient', {
      username: service.username,
      password: service.password,
      textname: 'kilowatch services (ingest, api)',
      roles: [{ rolename: SERVICE_ROLE, priority: 0 }],
    });
    return;
  }
  // Changing an account disconnects its clients: only what is missing or wrong is changed.
  if (!existing.roles?.some((r) => r.rolename === SERVICE_ROLE))
    await control.run('addClientRole', { username: service.username, rolename: SERVICE_ROLE, priority: 0 });
  if (await refusesLogin(mqttUrl, service))
    await control.run('setClientPassword', { username: service.username, password: service.password });
}

type Change =
  | { kind: 'issue'; username: string; password: string; stockTopics: boolean }
  | { kind: 'revoke'; username: string };

export interface DynsecMeterAccess extends MeterAccess {
  /** Makes the broker's meter accounts match the devices (see the module note); what it changed. */
  reconcile(): Promise<{ created: string[]; removed: string[] }>;
  /** Changes waiting for the broker. */
  pending(): number;
  stop(): Promise<void>;
}

/** The meter access of a Mosquitto the API manages (`startManagedBroker`). */
export interface ManagedMeterAccess extends DynsecMeterAccess {
  /**
   * Resolves when the accounts work started by the admin connection's last (re)connection — the services'
   * account checked, the meters' accounts reconciled — is done.
   */
  synced(): Promise<void>;
}

export interface DynsecMeterAccessOptions {
  control: DynsecControl;
  /** Every claimed device's key; undefined until the metadata database is open. */
  deviceKeys: () => Promise<string[]> | undefined;
  /**
   * The devices that hold no stock Tasmota suffix (a twin claimed with its key as Topic); the reconcile
   * takes the stock topics out of their roles where a role still lists them (devices claimed before the
   * suffix was held by one device).
   */
  withoutStockTopics?: () => Promise<string[]> | undefined;
  /** How often a change the broker did not take is tried again (default 5 s). */
  retryMs?: number;
  /** How often `reconcile` runs on its own (default 5 min; 0 = never). */
  reconcileMs?: number;
  log?: { info(msg: string): void; warn(msg: string): void };
}

/** The `MeterAccess` of a Mosquitto managed through its dynamic security plugin. */
export function dynsecMeterAccess(opts: DynsecMeterAccessOptions): DynsecMeterAccess {
  const { control } = opts;
  const retryMs = opts.retryMs ?? 5000;
  const log = opts.log ?? { info() {}, warn() {} };
  /** Per device key, the last change the broker has not taken yet, and why. */
  const pending = new Map<string, { change: Change; error: string }>();
  let retryTimer: NodeJS.Timeout | undefined;
  let reconciling: Promise<{ created: string[]; removed: string[] }> | undefined;
  let stopped = false;

  const issue = async (
    deviceKey: string,
    username: string,
    password: string,
    stockTopics: boolean,
    textname: string,
  ) => {
    await ensureRole(control, meterRole(deviceKey), meterAcl({ deviceKey, stockTopics }), true);
    const client = { username, password, textname, roles: [{ rolename: meterRole(deviceKey), priority: 0 }] };
    try {
      await control.run('createClient', client);
    } catch (e) {
      if (!refused(e, /already exists/i)) throw e;
      // A new password for an existing account: Mosquitto disconnects whoever is connected with it.
      await control.run('modifyClient', client);
    }
  };

  const revoke = async (deviceKey: string, username: string) => {
    await control.run('deleteClient', { username }).catch((e: unknown) => {
      if (!refused(e, /not found/i)) throw e;
    });
    await control.run('deleteRole', { rolename: meterRole(deviceKey) }).catch((e: unknown) => {
      if (!refused(e, /not found/i)) throw e;
    });
  };

  const apply = (deviceKey: string, change: Change) =>
    change.kind === 'issue'
      ? issue(deviceKey, change.username, change.password, change.stockTopics, METER_TEXT)
      : revoke(deviceKey, change.username);

  const scheduleRetry = () => {
    if (retryTimer || stopped || pending.size === 0) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void retry();
    }, retryMs);
    retryTimer.unref();
  };

  const retry = async () => {
    if (pending.size === 0) return;
    for (const [deviceKey, p] of [...pending]) {
      try {
        await apply(deviceKey, p.change);
        // A newer change may have replaced it meanwhile: that one stays.
        if (pending.get(deviceKey) === p) pending.delete(deviceKey);
      } catch (e) {
        p.error = e instanceof Error ? e.message : String(e);
        break; // the broker is away: wait
      }
    }
    if (pending.size > 0) scheduleRetry();
    else log.info('the MQTT broker has every meter account change');
  };

  /** Applies a change now, or keeps it for the retry; never throws (the claim or rotation stands). */
  const change = async (deviceKey: string, c: Change) => {
    pending.delete(deviceKey);
    try {
      await apply(deviceKey, c);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      pending.set(deviceKey, { change: c, error });
      log.warn(`meter account ${c.kind} for ${deviceKey} waits for the MQTT broker: ${error}`);
      scheduleRetry();
    }
  };

  const reconcile = async () => {
    // The broker's accounts first, then the devices: a device claimed meanwhile is in the database before
    // its account exists, so an account is never taken for an orphan while its claim is on its way.
    const listed = await control.run('listClients', { verbose: false, count: -1, offset: 0 });
    const clients = ((listed.data?.clients ?? []) as (string | { username: string })[])
      .map((c) => (typeof c === 'string' ? c : c.username))
      .filter((u) => DEVICE_KEY_PATTERN.test(u));
    const keys = await opts.deviceKeys();
    if (!keys) return { created: [], removed: [] };
    const devices = new Set(keys);
    const accounts = new Set(clients);
    const created: string[] = [];
    const removed: string[] = [];
    for (const username of clients) {
      if (devices.has(username) || pending.has(username)) continue;
      await revoke(username, username);
      removed.push(username);
    }
    for (const key of devices) {
      if (accounts.has(key) || pending.has(key)) continue;
      try {
        // Without the stock Tasmota names: its owner rotates the password, which sets the device's own ACL.
        await control
          .run('createRole', {
            rolename: meterRole(key),
            acls: meterAcl({ deviceKey: key, stockTopics: false }),
          })
          .catch((e: unknown) => {
            if (!refused(e, /already exists/i)) throw e;
          });
        // Never replaces an account made meanwhile by a claim or a rotation.
        await control.run('createClient', {
          username: key,
          password: randomBytes(24).toString('base64url'),
          textname: UNKNOWN_PASSWORD,
          roles: [{ rolename: meterRole(key), priority: 0 }],
        });
        created.push(key);
      } catch (e) {
        if (!refused(e, /already exists/i)) throw e;
      }
    }
    for (const key of (await opts.withoutStockTopics?.()) ?? []) {
      if (!accounts.has(key) || pending.has(key)) continue;
      await ensureRole(control, meterRole(key), meterAcl({ deviceKey: key, stockTopics: false }), true);
    }
    if (created.length || removed.length)
      log.info(
        `meter accounts reconciled with the MQTT broker: ${created.length} created (their owners rotate the password), ${removed.length} removed`,
      );
    return { created, removed };
  };

  const reconcileTimer =
    opts.reconcileMs === 0
      ? undefined
      : setInterval(() => {
          void access
            .reconcile()
            .catch((e: unknown) => log.warn(`meter account reconcile failed: ${String(e)}`));
        }, opts.reconcileMs ?? 300_000);
  reconcileTimer?.unref();

  const access: DynsecMeterAccess = {
    async issued(deviceKey, { username, password, stockTopics = true }) {
      await change(deviceKey, { kind: 'issue', username, password, stockTopics });
    },
    async revoked(deviceKey, username) {
      await change(deviceKey, { kind: 'revoke', username: username ?? deviceKey });
    },
    async connection(deviceKey): Promise<MeterConnectionState> {
      const waiting = pending.get(deviceKey);
      if (waiting)
        return {
          account: {
            state: 'pending',
            detail: `the MQTT broker has not taken this meter's account yet; retried every ${retryMs / 1000} s (${waiting.error})`,
          },
        };
      try {
        const r = await control.run('getClient', { username: deviceKey });
        const client = r.data?.client as { textname?: string; disabled?: boolean } | undefined;
        if (client?.textname === UNKNOWN_PASSWORD)
          return {
            account: {
              state: 'rotate',
              detail:
                "the broker has an account for this meter with a password nobody knows: rotate the meter's password",
            },
          };
        return { account: { state: 'ok' } };
      } catch (e) {
        if (refused(e, /not found/i))
          return {
            account: {
              state: 'pending',
              detail: 'the MQTT broker has no account for this meter yet; it is created within minutes',
            },
          };
        return { account: { state: 'unknown', detail: e instanceof Error ? e.message : String(e) } };
      }
    },
    reconcile() {
      reconciling ??= (async () => {
        try {
          await retry();
          return await reconcile();
        } finally {
          reconciling = undefined;
        }
      })();
      return reconciling;
    },
    pending: () => pending.size,
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      clearInterval(reconcileTimer);
      await reconciling?.catch(() => {});
    },
  };
  return access;
}

/**
 * The API's management of a Mosquitto: the admin connection, the services' account and the meters'
 * accounts. Each time the admin connection comes up (at start, after a broker restart) the services'
 * account is checked and the meters' accounts reconciled; waits up to `waitMs` for the first time, so the
 * services' own connections find their account, and goes on without it (retrying) when the broker is away.
 */
export async function startManagedBroker(opts: {
  mqttUrl: string;
  admin: { username: string; password: string };
  service?: { username: string; password: string };
  deviceKeys: DynsecMeterAccessOptions['deviceKeys'];
  withoutStockTopics?: DynsecMeterAccessOptions['withoutStockTopics'];
  log?: DynsecMeterAccessOptions['log'];
  retryMs?: number;
  reconcileMs?: number;
  waitMs?: number;
}): Promise<ManagedMeterAccess> {
  const log = opts.log ?? { info() {}, warn() {} };
  let syncing: Promise<void> = Promise.resolve();
  let firstUp: () => void = () => {};
  const up = new Promise<void>((r) => {
    firstUp = r;
  });
  const control = connectDynsec({
    mqttUrl: opts.mqttUrl,
    ...opts.admin,
    onConnect: () => {
      syncing = (async () => {
        try {
          if (opts.service) await ensureServiceAccount(control, opts.mqttUrl, opts.service);
          await access.reconcile();
        } catch (e) {
          log.warn(`MQTT broker accounts not in step yet (retried at the next reconcile): ${String(e)}`);
        } finally {
          firstUp();
        }
      })();
    },
  });
  const meters = dynsecMeterAccess({
    control,
    deviceKeys: opts.deviceKeys,
    ...(opts.withoutStockTopics ? { withoutStockTopics: opts.withoutStockTopics } : {}),
    ...(opts.retryMs !== undefined ? { retryMs: opts.retryMs } : {}),
    ...(opts.reconcileMs !== undefined ? { reconcileMs: opts.reconcileMs } : {}),
    log,
  });
  const access: ManagedMeterAccess = {
    ...meters,
    synced: () => syncing,
    async stop() {
      await meters.stop();
      // Its commands waiting for an answer fail at once; then the connection's accounts work is over.
      await control.stop();
      await syncing;
    },
  };
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([up, new Promise<void>((r) => (timer = setTimeout(r, opts.waitMs ?? 10_000)))]);
  clearTimeout(timer);
  if (!control.connected())
    log.warn(
      `the MQTT broker's dynamic security does not answer at ${opts.mqttUrl}; meter accounts wait for it`,
    );
  return access;
}
