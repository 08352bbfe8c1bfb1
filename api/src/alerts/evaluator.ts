/**
 * The alert evaluator: every committed live reading goes through core's notification state machine with
 * the device's settings and location zone, and through the phase detectors (overload, imbalance: their
 * episodes live in the same state); silence, offline meters and solar at zero in daylight (solar-live.ts)
 * are evaluated on a timer. State lives in memory per device, rebuilt lazily. Events are stored as
 * notifications, pushed through the hub and POSTed to the account's webhook (webhooks.ts).
 *
 * With an external broker, each API process subscribes to `$share/kilowatch-alerts/kilowatch/live/+`
 * (an MQTT 5 shared subscription), so every reading is evaluated by exactly one process. The broker hands
 * one device's readings to any of them, so there (`sharedState`) a device's state lives in the metadata
 * store (`alert_states`), read and written under a row lock with each reading: whichever process gets the
 * next reading continues the same state machine, and an alert is raised once, not once per process.
 *
 * A device's readings are evaluated in arrival order, in batches: those that arrive while the previous
 * batch is being stored go together in the next one (one transaction with shared state), so a meter that
 * sends faster than its state is stored grows the batch, not a queue of transactions.
 */
import {
  type AlertEvent,
  type AlertOptions,
  type AlertSettings,
  type AlertState,
  DEFAULT_ALERT_OPTIONS,
  DEFAULT_TIMEZONE,
  evaluateOffline,
  evaluateReading,
  evaluateSilence,
  initialAlertState,
  type Reading,
  startOfLocalDay,
} from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { countersOf } from '../analytics/energy.ts';
import type { Queryable } from '../db/sql.ts';
import type { HubRelay } from '../hub/hub.ts';
import type { LiveSource } from '../hub/live-source.ts';
import { type NotificationRow, notificationSettingsFromRow } from '../plugins/app/devices-repository.ts';
import { createDailyAlerts } from './daily.ts';
import { createAlertMailer } from './email.ts';
import { createNotificationsRepository } from './notifications-repository.ts';
import { createSolarLiveAlerts } from './solar-live.ts';
import {
  createWebhookSender,
  createWebhooksRepository,
  type WebhookOptions,
  type WebhookStats,
} from './webhooks.ts';

/** Shared-subscription topic for alert evaluation across API processes on an external broker. */
export const ALERTS_SHARED_TOPIC = '$share/kilowatch-alerts/kilowatch/live/+';

export interface AlertsOptions {
  /** Readings to evaluate: the embedded bus, or the shared subscription on an external broker. */
  alertSource?: LiveSource;
  /** How often silent devices are checked (ms); the offline-meter check runs on the same timer. */
  silenceCheckMs?: number;
  /** The notification webhooks' delivery (timeouts, retries, bounds). */
  webhooks?: WebhookOptions;
  /** How long a device's settings are trusted before being read again (ms). */
  settingsTtlMs?: number;
  /** Several processes evaluate one device's readings: its state is kept in the metadata store. */
  sharedState?: boolean;
  /** Several API processes: a settings change made in one is read again in the others at once. */
  relay?: HubRelay;
  alertOptions?: AlertOptions;
  /**
   * Readings older than this (by the server's clock) are history, not news: a backfill or a meter
   * emptying its buffer after an outage raises no alert and tells no recovery (default 15 minutes, the
   * time after which a silent device counts as without data).
   */
  maxReadingAgeMs?: number;
}

/** Default of `AlertsOptions.maxReadingAgeMs`. */
export const MAX_READING_AGE_MS = 15 * 60_000;

interface Batch {
  readings: Reading[];
  done: Promise<void>;
}

/**
 * Readings of one device waiting for the batch in progress. A meter keeps sending while its state is
 * stored (in server mode a transaction per batch); past this many the oldest tenth of the waiting ones is
 * skipped, so a metadata store that stalls cannot grow the process's memory without bound.
 */
export const MAX_WAITING_READINGS = 10_000;

interface DeviceAlerts {
  deviceId: number;
  userId: number;
  tz: string;
  settings: AlertSettings;
  state: AlertState;
  /** Readings of one device are evaluated in order: each batch after the one before. */
  queue: Promise<void>;
  /** Readings that arrived while a batch was being evaluated: they go together, in one step. */
  open?: Batch;
}

/**
 * Every device row of one meter: one, except a demo simulated meter, which each demo workspace reads with
 * settings of its own (docs/architecture.md §The demo).
 */
interface MeterAlerts {
  devices: DeviceAlerts[];
  loadedAt: number;
  /** Energy imported so far in the local day, by time zone: read once for all the meter's rows. */
  today: Map<string, { day: number; at: number; kwh: number }>;
}

declare module 'fastify' {
  interface FastifyInstance {
    notifications: ReturnType<typeof createNotificationsRepository>;
    webhooks: ReturnType<typeof createWebhooksRepository> & {
      /** Whether loopback targets are allowed (tests only). */
      allowLoopback: boolean;
      stats(): WebhookStats;
    };
    alerts: {
      /**
       * Evaluates one committed reading (the live source calls this; tests may too); one older than
       * `maxReadingAgeMs` is counted and left alone.
       */
      evaluate(reading: Reading): Promise<void>;
      /** Evaluates the passing of time for every known device. */
      checkSilence(now?: number): Promise<void>;
      /**
       * The offline-meter check (`meter-offline`) of every claimed device whose settings have it on, by
       * its latest reading time; the timer runs it with the silence check.
       */
      checkOffline(now?: number): Promise<void>;
      /**
       * The daily detector alerts (base load, unusual consumption, solar; daily.ts): every device's latest
       * complete local day judged once; the timer runs it with the silence check.
       */
      checkDaily(now?: number): Promise<void>;
      /**
       * Solar with no production in daylight while the grid imports (solar-live.ts): each PV device's
       * daylight so far, once across processes; the timer runs it with the silence check.
       */
      checkSolarLive(now?: number): Promise<void>;
      /**
       * The device's settings, zone or owner changed (or it was claimed, or deleted): they are read again
       * at its next reading, in this process and the others.
       */
      reload(deviceKey: string): void;
      /** Counts for /metrics. */
      stats(): { evaluated: number; stale: number; skipped: number; devices: number };
    };
  }
}

export default fp(
  async (app: FastifyInstance, opts: AlertsOptions) => {
    const repo = createNotificationsRepository(app.sql);
    app.decorate('notifications', repo);
    const webhookOptions = opts.webhooks ?? {};
    const sender = createWebhookSender(webhookOptions, app.log);
    const webhooks = createWebhooksRepository(app.sql);
    app.decorate('webhooks', {
      ...webhooks,
      allowLoopback: webhookOptions.allowLoopback === true,
      stats: () => sender.stats(),
    });
    const mail = createAlertMailer(app.sql, () => app.mailer, app.log);
    const ttl = opts.settingsTtlMs ?? 60_000;
    const shared = opts.sharedState === true;
    const alertOptions = opts.alertOptions ?? DEFAULT_ALERT_OPTIONS;
    const maxAge = opts.maxReadingAgeMs ?? MAX_READING_AGE_MS;
    /** Readings evaluated, and readings left alone for their age. */
    let evaluated = 0;
    let stale = 0;
    const devices = new Map<string, MeterAlerts>();
    /** Keys with no claimed device, and when they were last looked up. */
    const unknown = new Map<string, number>();

    /** Settings being read, so that readings arriving meanwhile share one read and one state. */
    const loading = new Map<string, Promise<MeterAlerts | null>>();
    /** How often each device's settings were changed: a read that a change overtook is read again. */
    const changes = new Map<string, number>();

    async function load(deviceKey: string): Promise<MeterAlerts | null> {
      const cached = devices.get(deviceKey);
      const now = app.clock.now();
      if (cached && now - cached.loadedAt < ttl) return cached;
      const missedAt = unknown.get(deviceKey);
      if (!cached && missedAt !== undefined && now - missedAt < ttl) return null;
      let pending = loading.get(deviceKey);
      if (!pending) {
        const started = read(deviceKey, cached, now).finally(() => {
          if (loading.get(deviceKey) === started) loading.delete(deviceKey);
        });
        loading.set(deviceKey, started);
        pending = started;
      }
      return pending;
    }

    async function read(
      deviceKey: string,
      cached: MeterAlerts | undefined,
      now: number,
    ): Promise<MeterAlerts | null> {
      const change = changes.get(deviceKey);
      const { rows } = await app.sql.query<
        NotificationRow & { id: number; user_id: number; timezone: string | null }
      >(
        `select d.id, d.user_id, l.timezone, n.enabled, n.voltage_drop, n.voltage_rise, n.total_consumption,
           n.disable_at_night, n.interval_minutes, n.mute_all, n.fuse_a, n.overload_share, n.overload_seconds, n.imbalance_share, n.offline,
           n.offline_factor
         from devices d join notification_settings n on n.device_id = d.id
         left join locations l on l.id = d.location_id where d.device_key = $1 order by d.id`,
        [deviceKey],
      );
      // The settings changed while they were being read: what came back may be from before.
      if (changes.get(deviceKey) !== change) return read(deviceKey, devices.get(deviceKey), app.clock.now());
      if (rows.length === 0) {
        devices.delete(deviceKey);
        if (unknown.size > 100_000) unknown.clear();
        unknown.set(deviceKey, now);
        return null;
      }
      unknown.delete(deviceKey);
      const list = rows.map((r): DeviceAlerts => {
        const settings: AlertSettings = notificationSettingsFromRow(r);
        const tz = r.timezone || DEFAULT_TIMEZONE;
        // The same claim keeps its state and its place in line; a meter claimed anew (by whoever) starts
        // afresh.
        const same = cached?.devices.find((d) => d.deviceId === Number(r.id));
        if (same) return Object.assign(same, { settings, tz });
        return {
          deviceId: Number(r.id),
          userId: Number(r.user_id),
          tz,
          settings,
          state: initialAlertState(),
          queue: Promise.resolve(),
        };
      });
      const entry: MeterAlerts = { devices: list, loadedAt: now, today: cached?.today ?? new Map() };
      devices.set(deviceKey, entry);
      return entry;
    }

    /** Energy imported so far in the local day, read at most once a minute per device. */
    async function todayImport(
      deviceKey: string,
      m: MeterAlerts,
      d: DeviceAlerts,
      ts: number,
    ): Promise<number | undefined> {
      if (d.settings.totalConsumption <= 0) return undefined;
      const day = startOfLocalDay(ts, d.tz);
      const known = m.today.get(d.tz);
      if (known && known.day === day && ts - known.at < 60_000) return known.kwh;
      const latest = await app.store.latest(deviceKey);
      const counters = countersOf(latest ? Object.keys(latest.values) : []).import;
      if (counters.length === 0) return undefined;
      const e = await app.store.energy({
        deviceKey,
        counters,
        from: day,
        to: ts + 1,
        interval: '1h',
        tz: d.tz,
        events: false,
      });
      let kwh = 0;
      for (const c of counters) for (const v of e.energy[c] ?? []) kwh += v ?? 0;
      if (m.today.size > 100) m.today.clear();
      m.today.set(d.tz, { day, at: ts, kwh });
      return kwh;
    }

    function push(
      d: { userId: number; deviceId: number },
      id: number,
      kind: string,
      ev: Pick<AlertEvent, 'message' | 'at' | 'phase' | 'value' | 'threshold'>,
    ): void {
      const message = {
        type: 'notification' as const,
        id,
        deviceId: d.deviceId,
        kind,
        message: ev.message,
        at: ev.at,
        phase: ev.phase ?? null,
        value: ev.value,
        threshold: ev.threshold,
      };
      app.hub.publishToUser(d.userId, message, `notification:${id}`);
      // By email too, when the device's settings ask for it.
      mail.enqueue({ deviceId: d.deviceId, kind, message: ev.message, at: ev.at });
      // The account's webhook, when it has one: the same message, signed.
      webhooks
        .get(d.userId)
        .then((hook) => {
          if (hook) sender.enqueue(hook.url, hook.secret, JSON.stringify(message));
        })
        .catch((err) => app.log.warn({ err }, 'webhooks: reading the account webhook failed'));
    }

    const detailOf = (ev: AlertEvent) => ({ phase: ev.phase, value: ev.value, threshold: ev.threshold });
    const kindOf = (ev: AlertEvent) => (ev.type === 'recovery' ? `${ev.kind}-recovery` : ev.kind);

    /** Reads the device's shared state under a row lock (created on first use). */
    async function lockedState(tx: Queryable, deviceId: number): Promise<AlertState> {
      const read = () =>
        tx.query<{ state: AlertState | string }>(
          'select state from alert_states where device_id = $1 for update',
          [deviceId],
        );
      let { rows } = await read();
      if (rows.length === 0) {
        // The device's first step anywhere: created once (a concurrent first step finds it made).
        await tx.query(
          'insert into alert_states (device_id, state, updated_at) values ($1, $2::jsonb, $3) on conflict (device_id) do nothing',
          [deviceId, JSON.stringify(initialAlertState()), app.clock.now()],
        );
        ({ rows } = await read());
      }
      const raw = rows[0]?.state;
      return typeof raw === 'string' ? (JSON.parse(raw) as AlertState) : (raw ?? initialAlertState());
    }

    /**
     * One step of a device's state machine (a reading, or the passing of time), and its events stored as
     * notifications and pushed. With shared state the step, the new state and the notifications commit
     * together, and the push follows the commit.
     */
    async function advance(d: DeviceAlerts, step: (state: AlertState) => AlertEvent[]): Promise<void> {
      if (!shared) {
        for (const ev of step(d.state)) {
          const kind = kindOf(ev);
          push(
            d,
            await repo.add(d.userId, d.deviceId, kind, ev.message, ev.at, app.sql, detailOf(ev)),
            kind,
            ev,
          );
        }
        return;
      }
      const told = await app.sql.transaction(async (tx) => {
        const state = await lockedState(tx, d.deviceId);
        const events = step(state);
        await tx.query('update alert_states set state = $2::jsonb, updated_at = $3 where device_id = $1', [
          d.deviceId,
          JSON.stringify(state),
          app.clock.now(),
        ]);
        const out: { id: number; kind: string; ev: AlertEvent }[] = [];
        for (const ev of events) {
          const kind = kindOf(ev);
          out.push({
            id: await repo.add(d.userId, d.deviceId, kind, ev.message, ev.at, tx, detailOf(ev)),
            kind,
            ev,
          });
        }
        return out;
      });
      for (const { id, kind, ev } of told) push(d, id, kind, ev);
    }

    /** Readings skipped because too many waited (logged at most once a minute). */
    let skipped = 0;
    let skippedLoggedAt = Number.NEGATIVE_INFINITY;

    /**
     * Evaluates the readings of one batch in arrival order in a single step: with shared state, one
     * transaction for all the readings a device sent while its previous batch was stored.
     */
    async function runBatch(deviceKey: string, m: MeterAlerts, d: DeviceAlerts, batch: Batch): Promise<void> {
      if (d.open === batch) d.open = undefined;
      const { readings } = batch;
      const kwh: (number | undefined)[] = [];
      for (const r of readings) kwh.push(await todayImport(deviceKey, m, d, r.ts));
      await advance(d, (state) =>
        readings.flatMap((r, i) => {
          const today = kwh[i];
          return evaluateReading(
            state,
            { ts: r.ts, values: r.values, ...(today !== undefined ? { todayImportKwh: today } : {}) },
            d.settings,
            d.tz,
            alertOptions,
          );
        }),
      );
    }

    async function evaluate(reading: Reading): Promise<void> {
      if (app.clock.now() - reading.ts > maxAge) {
        stale++;
        return;
      }
      evaluated++;
      const m = await load(reading.deviceKey);
      if (!m) return;
      if (m.devices.length === 1) return enqueue(reading, m, m.devices[0]!);
      await Promise.all(m.devices.map((d) => enqueue(reading, m, d)));
    }

    function enqueue(reading: Reading, m: MeterAlerts, d: DeviceAlerts): Promise<void> {
      let batch = d.open;
      if (!batch) {
        const opened: Batch = { readings: [], done: Promise.resolve() };
        opened.done = d.queue.then(() => runBatch(reading.deviceKey, m, d, opened));
        d.queue = opened.done.catch(() => {});
        d.open = opened;
        batch = opened;
      }
      batch.readings.push(reading);
      if (batch.readings.length > MAX_WAITING_READINGS) {
        // A tenth at a time, so a long stall costs one copy per thousand readings, not one per reading.
        const drop = batch.readings.length - Math.floor(MAX_WAITING_READINGS * 0.9);
        batch.readings.splice(0, drop);
        skipped += drop;
        const now = app.clock.now();
        if (now - skippedLoggedAt >= 60_000) {
          skippedLoggedAt = now;
          app.log.warn(
            { deviceKey: reading.deviceKey, skipped },
            'alerts: the metadata store is too slow for the readings; the oldest waiting ones were not evaluated',
          );
        }
      }
      return batch.done;
    }

    async function checkSilence(now = app.clock.now()): Promise<void> {
      for (const m of devices.values()) {
        for (const d of m.devices) {
          const run = d.queue.then(() =>
            advance(d, (state) => evaluateSilence(state, now, d.settings, d.tz, alertOptions)),
          );
          d.queue = run.catch(() => {});
          await run;
        }
      }
    }

    /** Devices whose settings have the offline check on, by device key. */
    async function offlineKeys(): Promise<string[]> {
      const { rows } = await app.sql.query<{ device_key: string }>(
        `select distinct d.device_key from devices d join notification_settings n on n.device_id = d.id
         where n.offline order by d.device_key`,
      );
      return rows.map((r) => r.device_key);
    }

    async function checkOffline(now = app.clock.now()): Promise<void> {
      for (const deviceKey of await offlineKeys()) {
        const m = await load(deviceKey);
        if (!m) continue;
        // The latest stored reading (as GET /devices/:id/connection's lastReadingAt; not ingest's
        // lastSeen, which a connection alone moves): newer than the state's when this process did not
        // evaluate the device's last readings (another one did, or it started since).
        const lastSeen = (await app.store.latest(deviceKey))?.ts ?? null;
        for (const d of m.devices) {
          if (!d.settings.offline) continue;
          const run = d.queue.then(() =>
            advance(d, (state) => evaluateOffline(state, lastSeen, now, d.settings, d.tz)),
          );
          d.queue = run.catch(() => {});
          await run;
        }
      }
    }

    function forget(deviceKey: string): void {
      const cached = devices.get(deviceKey);
      if (cached) cached.loadedAt = Number.NEGATIVE_INFINITY;
      unknown.delete(deviceKey);
      changes.set(deviceKey, (changes.get(deviceKey) ?? 0) + 1);
      app.hub.ownersChanged(deviceKey);
    }

    function reload(deviceKey: string): void {
      forget(deviceKey);
      opts.relay?.publish({ kind: 'alert-settings', deviceKey });
    }

    const daily = createDailyAlerts({
      sql: app.sql,
      store: app.store,
      repo,
      log: app.log,
      tell: (target, id, ev) => push(target, id, ev.kind, ev),
    });
    const checkDaily = (now = app.clock.now()) => daily.check(now);
    const solarLive = createSolarLiveAlerts({
      sql: app.sql,
      store: app.store,
      repo,
      log: app.log,
      tell: (target, id, ev) => push(target, id, ev.kind, ev),
    });
    const checkSolarLive = (now = app.clock.now()) => solarLive.check(now);

    app.decorate('alerts', {
      evaluate,
      checkSilence,
      checkOffline,
      checkDaily,
      checkSolarLive,
      reload,
      stats: () => ({
        evaluated,
        stale,
        skipped,
        devices: [...devices.values()].reduce((n, m) => n + m.devices.length, 0),
      }),
    });

    const offRelay = opts.relay?.onEvent((event) => {
      if (event.kind === 'alert-settings') forget(event.deviceKey);
    });

    const unsubscribe = opts.alertSource?.onReading((r) => {
      evaluate(r).catch((err) => app.log.warn({ err }, 'alerts: evaluation failed'));
    });
    let dailyRunning: Promise<void> | undefined;
    let solarRunning: Promise<void> | undefined;
    const timer = setInterval(() => {
      checkSilence().catch((err) => app.log.warn({ err }, 'alerts: silence check failed'));
      checkOffline().catch((err) => app.log.warn({ err }, 'alerts: offline check failed'));
      // A sweep still running (a long history read) is not started again beside itself.
      if (!dailyRunning) {
        dailyRunning = checkDaily()
          .catch((err) => app.log.warn({ err }, 'alerts: daily check failed'))
          .finally(() => {
            dailyRunning = undefined;
          });
      }
      if (!solarRunning) {
        solarRunning = checkSolarLive()
          .catch((err) => app.log.warn({ err }, 'alerts: solar daylight check failed'))
          .finally(() => {
            solarRunning = undefined;
          });
      }
    }, opts.silenceCheckMs ?? 60_000);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      sender.stop();
      await mail.idle();
      unsubscribe?.();
      offRelay?.();
    });
  },
  { name: 'alerts', dependencies: ['hub', 'telemetry'] },
);
