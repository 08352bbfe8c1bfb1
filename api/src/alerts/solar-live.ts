/**
 * Solar with no production in daylight while the grid imports (docs/api.md §Solar: zero in daylight): the
 * intraday half of `solar-underperformance`, checked on the alerts timer. For each production (PV) device
 * whose settings have `solar` on and whose location has a grid meter, the day's daylight so far (core's
 * fixed local window, 09:00–15:00, as locations carry no coordinates) is read as 15-minute energies from
 * both meters' counters: the PV meter's export counter is its production (a quarter with no reading is no
 * production), the grid meter's import minus export its net import. Core's run rule
 * (`detectSolarUnderperformance`, mode `zero-in-daylight`) finds an hour at zero while importing, once per
 * run.
 *
 * Several API processes: the sweep runs under an advisory lock (`exclusive`, not waiting), and each device's
 * detector state (episodes and the cursor of quarters already judged) is the `daily_alert_states` row the
 * daily detectors keep, read and written under its row lock in the transaction that stores the
 * notification: a run is told once.
 */
import {
  DEFAULT_SOLAR_SETTINGS,
  DEFAULT_TIMEZONE,
  daylightWindow,
  detectSolarUnderperformance,
  type Finding,
  isNight,
  type NotificationSettings,
  type Sample,
} from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyBaseLogger } from 'fastify';
import { countersOf } from '../analytics/energy.ts';
import type { Sql } from '../db/sql.ts';
import { type NotificationRow, notificationSettingsFromRow } from '../plugins/app/devices-repository.ts';
import { type DailyEvent, type DailyTarget, lockedState } from './daily.ts';
import type { createNotificationsRepository } from './notifications-repository.ts';

/** The quarters the meters' energies are read in: the samples' spacing. */
const STEP_MS = 15 * 60_000;

export interface SolarLiveTarget extends DailyTarget {
  /** The location's grid meter. */
  gridKey: string;
}

interface Deps {
  sql: Sql;
  store: TelemetryStore;
  repo: ReturnType<typeof createNotificationsRepository>;
  log: FastifyBaseLogger;
  /** Pushes a stored notification (the hub, the webhook, email). */
  tell(target: DailyTarget, id: number, ev: DailyEvent): void;
}

const round = (x: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

export function createSolarLiveAlerts(deps: Deps) {
  const { sql, store, repo, log } = deps;

  /** Production devices with `solar` on, alerts not disabled or muted, in a location with a grid meter. */
  async function targets(): Promise<SolarLiveTarget[]> {
    const { rows } = await sql.query<
      NotificationRow & {
        id: number;
        user_id: number;
        device_key: string;
        timezone: string | null;
        grid_key: string;
      }
    >(
      `select d.id, d.user_id, d.device_key, l.timezone, g.device_key as grid_key, n.*
       from devices d join notification_settings n on n.device_id = d.id
       join locations l on l.id = d.location_id
       join devices g on g.location_id = d.location_id and g.role = 'grid' and g.id <> d.id
       where d.role = 'production' and n.enabled and not n.mute_all and n.solar order by d.id`,
    );
    return rows.map((r) => ({
      deviceId: Number(r.id),
      userId: Number(r.user_id),
      deviceKey: r.device_key,
      gridKey: r.grid_key,
      tz: r.timezone || DEFAULT_TIMEZONE,
      settings: notificationSettingsFromRow(r),
    }));
  }

  /** When each of these devices last told a `solar-underperformance` (either half), for `interval`. */
  async function lastTold(ids: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (ids.length === 0) return out;
    const { rows } = await sql.query<{ device_id: number; at: number }>(
      `select device_id, max(at) as at from notifications
       where kind = 'solar-underperformance' and device_id = any($1::integer[]) group by device_id`,
      [ids],
    );
    for (const r of rows) out.set(Number(r.device_id), Number(r.at));
    return out;
  }

  /**
   * A meter's quarters from `from` to the last complete one before `now`, as samples at each quarter's end:
   * its average power (W) from what `power` makes of the quarter's import and export energies (kWh); a
   * quarter it answers null for is left out.
   */
  async function quarters(
    deviceKey: string,
    from: number,
    now: number,
    tz: string,
    power: (imp: number | null, exp: number | null) => number | null,
  ): Promise<Sample[]> {
    const latest = await store.latest(deviceKey);
    const c = countersOf(latest ? Object.keys(latest.values) : []);
    const list = [...c.import, ...c.export];
    if (list.length === 0) return [];
    const e = await store.energy({
      deviceKey,
      counters: list,
      from,
      to: now,
      interval: '15m',
      tz,
      events: false,
    });
    const sum = (names: string[], i: number) => {
      let s: number | null = null;
      for (const n of names) {
        const v = e.energy[n]?.[i];
        if (v !== null && v !== undefined) s = (s ?? 0) + v;
      }
      return s;
    };
    const out: Sample[] = [];
    e.t.forEach((start, i) => {
      if (start + STEP_MS > now) return;
      const kwh = power(sum(c.import, i), sum(c.export, i));
      if (kwh !== null) out.push({ ts: start + STEP_MS, value: (kwh * 1000 * 3_600_000) / STEP_MS });
    });
    return out;
  }

  function eventOf(f: Finding): DailyEvent {
    const message = typeof f.detail.message === 'string' ? f.detail.message : 'solar-underperformance';
    return {
      kind: 'solar-underperformance',
      at: f.at,
      value: round(f.value, 0),
      threshold: round(f.threshold, 0),
      message,
    };
  }

  async function device(t: SolarLiveTarget, now: number): Promise<void> {
    const window = daylightWindow(now, { ...DEFAULT_SOLAR_SETTINGS, tz: t.tz });
    if (now <= window.from) return;
    // The grid meter's net import; the PV meter's production is its export counter, on the grid's quarters
    // (a quarter with no reading of the PV meter produced nothing).
    const grid = await quarters(t.gridKey, window.from - STEP_MS, now, t.tz, (imp, exp) =>
      imp === null && exp === null ? null : (imp ?? 0) - (exp ?? 0),
    );
    if (grid.length === 0) return;
    const reported = await quarters(t.deviceKey, window.from - STEP_MS, now, t.tz, (_imp, exp) => exp);
    const byTs = new Map(reported.map((p) => [p.ts, p.value]));
    const production = grid.map((g) => ({ ts: g.ts, value: byTs.get(g.ts) ?? 0 }));
    const told = await sql.transaction(async (tx) => {
      const state = await lockedState(tx, t.deviceId, now);
      const result = detectSolarUnderperformance(
        { production, grid },
        { tz: t.tz, deviceKey: t.deviceKey, usualIntervalMs: STEP_MS },
        now,
        state,
      );
      const out: { id: number; ev: DailyEvent }[] = [];
      for (const f of result.findings) {
        const ev = eventOf(f);
        const id = await repo.add(t.userId, t.deviceId, ev.kind, ev.message, ev.at, tx, {
          value: ev.value,
          threshold: ev.threshold,
        });
        out.push({ id, ev });
      }
      await tx.query(
        'update daily_alert_states set state = $2::jsonb, updated_at = $3 where device_id = $1',
        [t.deviceId, JSON.stringify(result.state), now],
      );
      return out;
    });
    for (const { id, ev } of told) deps.tell(t, id, ev);
  }

  async function sweep(now: number): Promise<void> {
    const list = await targets();
    const last = await lastTold(list.map((t) => t.deviceId));
    for (const t of list) {
      const s: NotificationSettings = t.settings;
      if (s.disableAtNight && isNight(now, t.tz)) continue;
      const told = last.get(t.deviceId);
      if (told !== undefined && now - told < s.interval * 60_000) continue;
      try {
        await device(t, now);
      } catch (err) {
        log.warn({ err, deviceId: t.deviceId }, 'alerts: a solar daylight check failed');
      }
    }
  }

  return {
    /** Checks every PV device's daylight so far; in one process at a time across replicas. */
    async check(now: number): Promise<void> {
      await sql.exclusive('solar-live-alerts', () => sweep(now), { wait: false });
    },
  };
}
