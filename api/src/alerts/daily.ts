/**
 * The daily detector alerts (docs/api.md §Daily detector alerts): base load, unusual consumption and solar
 * underperformance, core's detectors (core/src/detectors) judged once per device per local day, after the
 * day ends in the device location's zone (a DST day is 23 or 25 hours), over the history they need from
 * the telemetry store's rollups and energy answers.
 *
 * The latest complete local day is the one judged. While the device's alerts are silenced (disabled, mute
 * all, the night 22:00–07:00 with `disableAtNight`, or the interval since the last alert of the kind) the
 * day waits, and is judged at the first check after the silence ends while it is still the latest complete
 * day; a day the next one overtook is not judged.
 *
 * Several API processes: the sweep runs under an advisory lock (`exclusive`, not waiting), so one process
 * does it at a time, and each (device, day, kind) is claimed by a row of `daily_alert_runs` inserted in the
 * transaction that stores its notification and the detectors' state: a notification is never written twice.
 */
import {
  addLocalDays,
  calendarBucketStarts,
  DEFAULT_BASE_LOAD_SETTINGS,
  DEFAULT_DAILY_ALERT_SETTINGS,
  DEFAULT_SOLAR_SETTINGS,
  DEFAULT_TIMEZONE,
  DEFAULT_UNUSUAL_CONSUMPTION_SETTINGS,
  type DetectorState,
  dailyBaseLoads,
  detectBaseLoadRise,
  detectSolarUnderperformance,
  detectUnusualConsumption,
  type Finding,
  type IntervalEnergy,
  isNight,
  localDateString,
  type NotificationSettings,
  nightWindow,
  startOfLocalDay,
} from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyBaseLogger } from 'fastify';
import { countersOf } from '../analytics/energy.ts';
import type { Queryable, Sql } from '../db/sql.ts';
import { type NotificationRow, notificationSettingsFromRow } from '../plugins/app/devices-repository.ts';
import type { createNotificationsRepository } from './notifications-repository.ts';

export const DAILY_KINDS = ['base-load-rise', 'unusual-consumption', 'solar-underperformance'] as const;
export type DailyKind = (typeof DAILY_KINDS)[number];

/** What a daily alert tells: the hub message's fields. */
export interface DailyEvent {
  kind: DailyKind;
  at: number;
  value: number;
  threshold: number;
  message: string;
}

export interface DailyTarget {
  deviceId: number;
  userId: number;
  deviceKey: string;
  tz: string;
  settings: NotificationSettings;
}

interface Deps {
  sql: Sql;
  store: TelemetryStore;
  repo: ReturnType<typeof createNotificationsRepository>;
  log: FastifyBaseLogger;
  /** Pushes a stored notification (the hub, the webhook, email). */
  tell(target: DailyTarget, id: number, ev: DailyEvent): void;
}

const enabledKinds = (s: NotificationSettings): DailyKind[] => {
  const g = DEFAULT_DAILY_ALERT_SETTINGS;
  const out: DailyKind[] = [];
  if (s.baseLoad ?? g.baseLoad) out.push('base-load-rise');
  if (s.unusual ?? g.unusual) out.push('unusual-consumption');
  if (s.solar ?? g.solar) out.push('solar-underperformance');
  return out;
};

const round = (x: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** Sums the counters' energies per bucket; a bucket where every counter is null is null. */
function sumCounters(
  t: number[],
  energy: Record<string, (number | null)[]>,
  counters: string[],
): IntervalEnergy[] {
  return t.map((start, i) => {
    let sum: number | null = null;
    for (const c of counters) {
      const v = energy[c]?.[i];
      if (v !== null && v !== undefined) sum = (sum ?? 0) + v;
    }
    return { start, energy: sum };
  });
}

/**
 * The device's detector state in `daily_alert_states`, locked for the transaction (created empty when the
 * device has none): the daily check and the daylight solar check keep their episodes in it.
 */
export async function lockedState(tx: Queryable, deviceId: number, now: number): Promise<DetectorState> {
  const read = () =>
    tx.query<{ state: DetectorState | string }>(
      'select state from daily_alert_states where device_id = $1 for update',
      [deviceId],
    );
  let { rows } = await read();
  if (rows.length === 0) {
    await tx.query(
      `insert into daily_alert_states (device_id, state, updated_at) values ($1, $2::jsonb, $3)
       on conflict (device_id) do nothing`,
      [deviceId, JSON.stringify({ episodes: {}, cursors: {} }), now],
    );
    ({ rows } = await read());
  }
  const raw = rows[0]?.state;
  const state = typeof raw === 'string' ? (JSON.parse(raw) as DetectorState) : raw;
  return state ?? { episodes: {}, cursors: {} };
}

export function createDailyAlerts(deps: Deps) {
  const { sql, store, repo, log } = deps;

  /** Devices with a daily kind on, and alerts not disabled or muted. */
  async function targets(): Promise<DailyTarget[]> {
    const { rows } = await sql.query<
      NotificationRow & { id: number; user_id: number; device_key: string; timezone: string | null }
    >(
      `select d.id, d.user_id, d.device_key, l.timezone, n.*
       from devices d join notification_settings n on n.device_id = d.id
       left join locations l on l.id = d.location_id
       where n.enabled and not n.mute_all and (n.base_load or n.unusual or n.solar) order by d.id`,
    );
    return rows.map((r) => ({
      deviceId: Number(r.id),
      userId: Number(r.user_id),
      deviceKey: r.device_key,
      tz: r.timezone || DEFAULT_TIMEZONE,
      settings: notificationSettingsFromRow(r),
    }));
  }

  /** The (device, day, kind) already judged, and when each kind last told something, for these devices. */
  async function runsOf(ids: number[], since: number) {
    const judged = new Set<string>();
    const lastTold = new Map<string, number>();
    if (ids.length === 0) return { judged, lastTold };
    const { rows } = await sql.query<{
      device_id: number;
      day: string;
      kind: string;
      notification_id: number | null;
      evaluated_at: number;
    }>(
      `select device_id, day, kind, notification_id, evaluated_at from daily_alert_runs
       where evaluated_at >= $1 and device_id = any($2::integer[])`,
      [since, ids],
    );
    for (const r of rows) {
      judged.add(`${r.device_id}|${r.day}|${r.kind}`);
      if (r.notification_id !== null) {
        const key = `${r.device_id}|${r.kind}`;
        lastTold.set(key, Math.max(lastTold.get(key) ?? 0, Number(r.evaluated_at)));
      }
    }
    return { judged, lastTold };
  }

  /** The history each detector needs, read before the claim (outside the transaction). */
  async function inputs(t: DailyTarget, kinds: DailyKind[], day: number, dayEnd: number) {
    const latest = await store.latest(t.deviceKey);
    const reported = latest ? Object.keys(latest.values) : [];
    const counters = countersOf(reported);
    const out: {
      baseLoad?: ReturnType<typeof dailyBaseLoads>;
      consumption?: IntervalEnergy[];
      production?: IntervalEnergy[];
    } = {};
    if (kinds.includes('base-load-rise')) {
      const power = [1, 2, 3].some((p) => reported.includes(`pave${p}`))
        ? 'pave'
        : reported.includes('power3phases')
          ? 'power3phases'
          : null;
      if (power) {
        const first = addLocalDays(day, -DEFAULT_BASE_LOAD_SETTINGS.historyDays, t.tz);
        const dayStarts = calendarBucketStarts(first, dayEnd, 'day', t.tz);
        const from = nightWindow(first, { ...DEFAULT_BASE_LOAD_SETTINGS, tz: t.tz }).from;
        const s = await store.series({
          deviceKey: t.deviceKey,
          params: [power],
          from,
          to: dayEnd,
          interval: '15m',
          stats: ['avg'],
          tz: t.tz,
        });
        const avg = s.series[power]?.avg ?? [];
        const samples = s.t
          .map((ts, i) => ({ ts, value: avg[i] }))
          .filter((x): x is { ts: number; value: number } => x.value !== null && x.value !== undefined);
        out.baseLoad = dailyBaseLoads(samples, dayStarts, { tz: t.tz });
      }
    }
    const energy = async (list: string[], days: number) => {
      if (list.length === 0) return undefined;
      const e = await store.energy({
        deviceKey: t.deviceKey,
        counters: list,
        from: addLocalDays(day, -days, t.tz),
        to: dayEnd,
        interval: '1d',
        tz: t.tz,
        events: false,
      });
      return sumCounters(e.t, e.energy, list);
    };
    if (kinds.includes('unusual-consumption')) {
      out.consumption = await energy(counters.import, 7 * DEFAULT_UNUSUAL_CONSUMPTION_SETTINGS.weeks);
    }
    if (kinds.includes('solar-underperformance')) {
      // A PV meter's production is the energy it feeds out (its export counter, as the flows' `production`).
      out.production = await energy(counters.export, DEFAULT_SOLAR_SETTINGS.lookbackDays);
    }
    return out;
  }

  /** One detector over the day: its finding about that day, if any, and the next state. */
  function judge(
    kind: DailyKind,
    t: DailyTarget,
    input: Awaited<ReturnType<typeof inputs>>,
    day: number,
    dayEnd: number,
    state: DetectorState,
  ): { finding: Finding | undefined; state: DetectorState } {
    const g = DEFAULT_DAILY_ALERT_SETTINGS;
    const s = t.settings;
    let result: { findings: Finding[]; state: DetectorState } | undefined;
    if (kind === 'base-load-rise' && input.baseLoad) {
      result = detectBaseLoadRise(
        input.baseLoad,
        { tz: t.tz, riseShare: s.baseLoadShare ?? g.baseLoadShare },
        dayEnd - 1,
        state,
      );
    } else if (kind === 'unusual-consumption' && input.consumption) {
      // Judged at the day's last instant: the day complete, and (already judged) the one before.
      result = detectUnusualConsumption(
        { days: input.consumption },
        { tz: t.tz, minShare: s.unusualShare ?? g.unusualShare },
        dayEnd - 1,
        state,
      );
    } else if (kind === 'solar-underperformance' && input.production) {
      // Judged at the next day's start: its "day before" is this one.
      result = detectSolarUnderperformance(
        { days: input.production },
        { tz: t.tz, share: s.solarShare ?? g.solarShare },
        dayEnd,
        state,
      );
    }
    if (!result) return { finding: undefined, state };
    return { finding: result.findings.find((f) => f.at === day), state: result.state };
  }

  function eventOf(kind: DailyKind, f: Finding): DailyEvent {
    const digits = kind === 'base-load-rise' ? 0 : 2;
    const message = typeof f.detail.message === 'string' ? f.detail.message : kind;
    return { kind, at: f.at, value: round(f.value, digits), threshold: round(f.threshold, digits), message };
  }

  /** Judges the pending kinds of one device's day: claimed, stored and the state kept in one transaction. */
  async function device(t: DailyTarget, kinds: DailyKind[], day: number, dayEnd: number, now: number) {
    const input = await inputs(t, kinds, day, dayEnd);
    const date = localDateString(day, t.tz);
    const told = await sql.transaction(async (tx) => {
      let state = await lockedState(tx, t.deviceId, now);
      const out: { id: number; ev: DailyEvent }[] = [];
      for (const kind of kinds) {
        const claim = await tx.query(
          `insert into daily_alert_runs (device_id, day, kind, evaluated_at) values ($1, $2, $3, $4)
           on conflict (device_id, day, kind) do nothing returning device_id`,
          [t.deviceId, date, kind, now],
        );
        if (claim.rows.length === 0) continue;
        const judged = judge(kind, t, input, day, dayEnd, state);
        state = judged.state;
        if (!judged.finding) continue;
        const ev = eventOf(kind, judged.finding);
        const id = await repo.add(t.userId, t.deviceId, kind, ev.message, ev.at, tx, {
          value: ev.value,
          threshold: ev.threshold,
        });
        await tx.query(
          'update daily_alert_runs set notification_id = $4 where device_id = $1 and day = $2 and kind = $3',
          [t.deviceId, date, kind, id],
        );
        out.push({ id, ev });
      }
      await tx.query(
        'update daily_alert_states set state = $2::jsonb, updated_at = $3 where device_id = $1',
        [t.deviceId, JSON.stringify(state), now],
      );
      return out;
    });
    for (const { id, ev } of told) deps.tell(t, id, ev);
  }

  async function sweep(now: number): Promise<void> {
    const list = await targets();
    // Eight days back: every zone's latest complete day, and the longest `interval` (a week) since the
    // last alert of a kind.
    const { judged, lastTold } = await runsOf(
      list.map((t) => t.deviceId),
      now - 8 * 86_400_000,
    );
    for (const t of list) {
      const s = t.settings;
      if (s.disableAtNight && isNight(now, t.tz)) continue;
      const dayEnd = startOfLocalDay(now, t.tz);
      const day = addLocalDays(dayEnd, -1, t.tz);
      const date = localDateString(day, t.tz);
      const kinds = enabledKinds(s).filter((k) => {
        if (judged.has(`${t.deviceId}|${date}|${k}`)) return false;
        const last = lastTold.get(`${t.deviceId}|${k}`);
        return last === undefined || now - last >= s.interval * 60_000;
      });
      if (kinds.length === 0) continue;
      try {
        await device(t, kinds, day, dayEnd, now);
      } catch (err) {
        log.warn({ err, deviceId: t.deviceId }, 'alerts: a daily evaluation failed');
      }
    }
  }

  return {
    /** Judges every due (device, day, kind); in one process at a time across replicas. */
    async check(now: number): Promise<void> {
      await sql.exclusive('daily-alerts', () => sweep(now), { wait: false });
    },
  };
}
