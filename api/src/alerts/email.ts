/**
 * Alert notifications by email (docs/api.md §Daily detector alerts, "Email"): a device whose notification
 * settings have `email` on gets each of its stored notifications mailed to the account's address through
 * the app's mailer (SMTP when configured, as the password-reset mail). Sent after the notification is
 * stored, in the background and not retried; a demo account gets none.
 */
import { DEFAULT_TIMEZONE } from '@kilowatch/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Sql } from '../db/sql.ts';
import type { Mailer } from '../plugins/app/mailer.ts';

/** English names of the kinds, for the subject line. */
const KIND_NAMES: Record<string, string> = {
  'voltage-drop': 'Voltage drop',
  'voltage-rise': 'Voltage rise',
  consumption: 'Daily consumption',
  'no-data': 'No data',
  'phase-overload': 'Phase overload',
  'phase-imbalance': 'Phase imbalance',
  'meter-offline': 'Meter offline',
  'base-load-rise': 'Base load rise',
  'unusual-consumption': 'Unusual consumption',
  'solar-underperformance': 'Solar underperformance',
};

export function alertKindName(kind: string): string {
  if (kind.endsWith('-recovery')) {
    const base = kind.slice(0, -'-recovery'.length);
    return `${KIND_NAMES[base] ?? base} ended`;
  }
  return KIND_NAMES[kind] ?? kind;
}

export interface AlertMail {
  deviceId: number;
  kind: string;
  message: string;
  at: number;
}

export function createAlertMailer(sql: Sql, mailer: () => Mailer, log: FastifyBaseLogger) {
  /** Mails one notification when its device asks for it; resolves once sent (or found not wanted). */
  async function send(n: AlertMail): Promise<boolean> {
    const { rows } = await sql.query<{
      address: string;
      is_demo: boolean;
      name: string;
      timezone: string | null;
    }>(
      `select u.email as address, u.is_demo, d.name, l.timezone
       from devices d join notification_settings n on n.device_id = d.id join users u on u.id = d.user_id
       left join locations l on l.id = d.location_id
       where d.id = $1 and n.email`,
      [n.deviceId],
    );
    const r = rows[0];
    if (!r || r.is_demo) return false;
    const tz = r.timezone || DEFAULT_TIMEZONE;
    const when = new Intl.DateTimeFormat('en-GB', {
      timeZone: tz,
      dateStyle: 'medium',
      timeStyle: 'short',
    }).format(n.at);
    await mailer().send({
      to: r.address,
      subject: `Kilowatch: ${alertKindName(n.kind)} on ${r.name}`,
      text: `${n.message}\n\nDevice: ${r.name}\nAt: ${when} (${tz})\n\nYou get this mail because email is on in the device's notification settings.`,
    });
    return true;
  }

  /** Pending sends, so a closing app (and a test) can wait for them. */
  const pending = new Set<Promise<unknown>>();

  return {
    send,
    /** Sends in the background; a failure is logged. */
    enqueue(n: AlertMail): void {
      const p = send(n)
        .catch((err: unknown) => log.warn({ err, deviceId: n.deviceId }, 'alerts: the alert mail failed'))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle(): Promise<void> {
      await Promise.all([...pending]);
    },
  };
}
