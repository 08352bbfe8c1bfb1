/**
 * Demo workspaces (docs/architecture.md §The demo). The demo account seeded at start is a template nobody
 * signs in to: it owns the simulated meters (their rows, MQTT accounts and telemetry). Every demo sign-in
 * gets a workspace of its own: a fresh short-lived user with copies of the template's locations, tariffs,
 * devices and their settings. The copied devices carry the simulated meters' device keys with
 * `shared_telemetry` set, so they read the meters' telemetry without owning it: deleting one removes only
 * that row, and the partial unique index on `device_key` keeps every real claim (a simulated meter's MAC
 * included) exclusive. A workspace lives `idleMs` after its last sign-in or token refresh, then it is
 * removed with everything it holds (a meter it claimed itself, with that meter's telemetry, too).
 */
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { MESSAGES } from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Queryable } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import type { UserRecord } from './accounts-repository.ts';

/**
 * Every column of a template device's notification settings, copied to the visitor's device: the voltage
 * and consumption alerts, the phase and offline detectors (migration 440), the daily detectors and email
 * (migration 450). A column added to `notification_settings` belongs here too.
 */
export const NOTIFICATION_COLUMNS = [
  'enabled',
  'voltage_drop',
  'voltage_rise',
  'total_consumption',
  'disable_at_night',
  'interval_minutes',
  'mute_all',
  'fuse_a',
  'overload_share',
  'overload_seconds',
  'imbalance_share',
  'offline',
  'offline_factor',
  'base_load',
  'base_load_share',
  'unusual',
  'unusual_share',
  'solar',
  'solar_share',
  'email',
].join(', ');

/** Email of the demo template account created in the embedded deployment. */
export const DEMO_EMAIL = 'demo@kilowatch.local';

/** How often expired workspaces are looked for (also at start and before each new workspace). */
export const SWEEP_INTERVAL_MS = 15 * 60_000;

/** 503 with Retry-After: as many workspaces as allowed exist; the oldest frees up at `retryAfterS`. */
export class DemoFullError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(503, MESSAGES.demoFull, undefined, {
      'retry-after': String(Math.max(60, Math.ceil(retryAfterSeconds))),
    });
    this.name = 'DemoFullError';
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    demoWorkspaces: {
      /**
       * A new workspace copied from the template; null when there is no demo. Throws `DemoFullError` when
       * `demoWorkspaces.max` exist.
       */
      create(): Promise<UserRecord | null>;
      /** The workspace was used: it lives `idleMs` from now. False when it has expired already. */
      touch(userId: number): Promise<boolean>;
      /** Removes a workspace and everything it holds; the simulated meters and their telemetry stay. */
      remove(userId: number): Promise<boolean>;
      /** Removes every expired workspace; answers how many. */
      sweep(): Promise<number>;
      count(): Promise<number>;
    };
  }
}

interface Row {
  [column: string]: unknown;
}

async function copyRows(
  tx: Queryable,
  table: string,
  columns: string[],
  where: string,
  params: unknown[],
  map: (row: Row) => unknown[],
  extra: { columns: string[] } = { columns: [] },
): Promise<{ from: Row; id: number }[]> {
  const { rows } = await tx.query<Row>(
    `select id, ${columns.join(', ')} from ${table} where ${where} order by id`,
    params,
  );
  const out: { from: Row; id: number }[] = [];
  const all = [...columns, ...extra.columns];
  for (const row of rows) {
    const values = map(row);
    const placeholders = values.map((_, i) => `$${i + 1}`).join(', ');
    const inserted = await tx.query<{ id: number }>(
      `insert into ${table} (${all.join(', ')}) values (${placeholders}) returning id`,
      values,
    );
    out.push({ from: row, id: Number(inserted.rows[0]!.id) });
  }
  return out;
}

const LOCATION_COLUMNS = [
  'user_id',
  'name',
  'code',
  'address',
  'city',
  'timezone',
  'settlement_scheme',
  'settlement_kw',
  'settlement_since',
  'created_at',
  'updated_at',
];
const TARIFF_COLUMNS = [
  'location_id',
  'user_id',
  'name',
  'tariff_group',
  'operator',
  'zone1_price',
  'zone2_price',
  'zone3_price',
  'fixed_price',
  'currency',
  'valid_from',
  'valid_to',
  'clock_basis',
  'schedule',
  'created_at',
  'updated_at',
];
const DEVICE_COLUMNS = [
  'user_id',
  'device_key',
  'mac',
  'name',
  'friendly_name',
  'model',
  'type_code',
  'phases',
  'location_id',
  'tariff_id',
  'billing_start',
  'billing_months',
  'registered_at',
  'modified_at',
  'role',
];

export default fp(
  async (app: FastifyInstance) => {
    const { sql, clock, config } = app;

    async function templateId(): Promise<number | null> {
      if (!config.demo) return null;
      const { rows } = await sql.query<{ id: number }>(
        'select id from users where email = $1 and workspace_expires_at is null',
        [DEMO_EMAIL],
      );
      return rows[0] ? Number(rows[0].id) : null;
    }

    async function count(): Promise<number> {
      const { rows } = await sql.query<{ n: number }>(
        'select count(*)::integer as n from users where workspace_expires_at is not null',
      );
      return Number(rows[0]?.n ?? 0);
    }

    async function copyTemplate(template: number): Promise<UserRecord> {
      const now = clock.now();
      const email = `demo-${randomBytes(6).toString('hex')}@kilowatch.local`;
      const userId = await sql.transaction(async (tx) => {
        const { rows } = await tx.query<{ id: number }>(
          `insert into users (email, password_hash, full_name, country, timezone, language, is_demo, created_at,
             updated_at, workspace_expires_at)
           select $2, password_hash, full_name, country, timezone, language, true, $3, $3, $4 from users where id = $1
           returning id`,
          [template, email, now, now + config.demoWorkspaces.idleMs],
        );
        const user = Number(rows[0]!.id);
        const locations = await copyRows(
          tx,
          'locations',
          LOCATION_COLUMNS,
          'user_id = $1',
          [template],
          (r) => [user, ...LOCATION_COLUMNS.slice(1, -2).map((c) => r[c]), now, now],
        );
        const locationIds = new Map(locations.map((l) => [Number(l.from.id), l.id]));
        const tariffs = await copyRows(tx, 'tariffs', TARIFF_COLUMNS, 'user_id = $1', [template], (r) => [
          locationIds.get(Number(r.location_id)),
          user,
          ...TARIFF_COLUMNS.slice(2, -2).map((c) =>
            c === 'schedule' && r[c] !== null && typeof r[c] !== 'string' ? JSON.stringify(r[c]) : r[c],
          ),
          now,
          now,
        ]);
        const tariffIds = new Map(tariffs.map((t) => [Number(t.from.id), t.id]));
        const mapped = (m: Map<number, number>, id: unknown) =>
          id === null ? null : (m.get(Number(id)) ?? null);
        const { rows: withTariff } = await tx.query<{ id: number; tariff_id: number | null }>(
          'select id, tariff_id from locations where user_id = $1',
          [template],
        );
        for (const l of withTariff) {
          if (l.tariff_id === null) continue;
          await tx.query('update locations set tariff_id = $2 where id = $1', [
            locationIds.get(Number(l.id)),
            mapped(tariffIds, l.tariff_id),
          ]);
        }
        const devices = await copyRows(
          tx,
          'devices',
          DEVICE_COLUMNS,
          'user_id = $1',
          [template],
          (r) => [
            user,
            ...DEVICE_COLUMNS.slice(1, 8).map((c) => r[c]),
            mapped(locationIds, r.location_id),
            mapped(tariffIds, r.tariff_id),
            r.billing_start,
            r.billing_months,
            now,
            now,
            r.role,
            true,
          ],
          { columns: ['shared_telemetry'] },
        );
        for (const d of devices) {
          const from = Number(d.from.id);
          await tx.query(
            `insert into notification_settings (device_id, ${NOTIFICATION_COLUMNS})
             select $2, ${NOTIFICATION_COLUMNS} from notification_settings where device_id = $1`,
            [from, d.id],
          );
          await tx.query(
            'insert into device_limits (device_id, warning, critical) select $2, warning, critical from device_limits where device_id = $1',
            [from, d.id],
          );
          await tx.query(
            `insert into meter_offsets (device_id, param, at, value, counter_value, "offset", created_at)
             select $2, param, at, value, counter_value, "offset", created_at from meter_offsets where device_id = $1`,
            [from, d.id],
          );
        }
        return user;
      });
      const user = await app.accounts.findUserById(userId);
      if (!user) throw new Error('demo workspace vanished as it was created');
      return user;
    }

    /** Device keys a new or removed workspace shares: who receives their readings changed. */
    async function sharedKeys(userId: number): Promise<string[]> {
      const { rows } = await sql.query<{ device_key: string }>(
        'select device_key from devices where user_id = $1',
        [userId],
      );
      return rows.map((r) => r.device_key);
    }

    async function remove(userId: number): Promise<boolean> {
      const { rows: devices } = await sql.query<{ device_key: string; shared_telemetry: boolean }>(
        'select device_key, shared_telemetry from devices where user_id = $1',
        [userId],
      );
      // A meter the visitor claimed in the workspace goes with its telemetry; the simulated ones never.
      for (const d of devices) {
        if (d.shared_telemetry) continue;
        await app.store.deleteDevice(d.device_key);
        await app.meterAccess.revoked(d.device_key, d.device_key);
      }
      const { rows: files } = await sql.query<{ file_path: string }>(
        'select file_path from export_jobs where user_id = $1 and file_path is not null',
        [userId],
      );
      const removed = await sql.query(
        'delete from users where id = $1 and workspace_expires_at is not null',
        [userId],
      );
      if (removed.rowCount === 0) return false;
      await Promise.all(files.map((f) => rm(f.file_path, { force: true })));
      for (const d of devices) app.alerts.reload(d.device_key);
      await app.hub.sessionsEnded(userId);
      return true;
    }

    async function sweep(): Promise<number> {
      const { rows } = await sql.query<{ id: number }>(
        'select id from users where workspace_expires_at is not null and workspace_expires_at <= $1 order by id',
        [clock.now()],
      );
      let n = 0;
      for (const r of rows) {
        try {
          if (await remove(Number(r.id))) n++;
        } catch (err) {
          // Kept for the next sweep (the telemetry store may be back by then).
          app.log.warn(
            { err, userId: r.id },
            'demo workspace: removal failed; tried again at the next sweep',
          );
        }
      }
      if (n > 0) app.log.info({ removed: n }, 'demo workspaces expired');
      return n;
    }

    app.decorate('demoWorkspaces', {
      async create() {
        const template = await templateId();
        if (template === null) return null;
        await sweep();
        const run = await sql.exclusive('demo-workspaces', async () => {
          if ((await count()) >= config.demoWorkspaces.max) {
            const { rows } = await sql.query<{ at: number }>(
              'select min(workspace_expires_at) as at from users where workspace_expires_at is not null',
            );
            throw new DemoFullError(((Number(rows[0]?.at) || clock.now()) - clock.now()) / 1000);
          }
          return copyTemplate(template);
        });
        if (!run.ran) throw new DemoFullError(60);
        const user = run.value;
        // Live readings of the shared meters reach the new workspace at once, in every API process.
        for (const key of await sharedKeys(user.id)) app.alerts.reload(key);
        return user;
      },
      async touch(userId: number) {
        const now = clock.now();
        const r = await sql.query(
          'update users set workspace_expires_at = $2 where id = $1 and workspace_expires_at > $3',
          [userId, now + config.demoWorkspaces.idleMs, now],
        );
        return r.rowCount > 0;
      },
      remove,
      sweep,
      count,
    });

    if (config.demo) {
      const timer = setInterval(() => {
        sweep().catch((err) => app.log.warn({ err }, 'demo workspaces: sweep failed'));
      }, SWEEP_INTERVAL_MS);
      timer.unref();
      app.addHook('onReady', async () => {
        await sweep().catch((err) => app.log.warn({ err }, 'demo workspaces: sweep failed'));
      });
      app.addHook('onClose', async () => clearInterval(timer));
    }
  },
  { name: 'demo-workspaces', dependencies: ['metadata', 'auth', 'hub', 'alerts'] },
);
