/**
 * Alert notifications by email: the app's own SMTP mailer (config `smtpUrl`) delivering to a minimal SMTP
 * receiver on loopback, for a device whose notification settings have `email` on, and nothing for one
 * without it.
 */
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { createDuckDbStore, type TelemetryStore } from '@kilowatch/tsdb';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimMeter, locationOf, type Meter } from '../analytics/testing.ts';
import { buildApp } from '../app.ts';
import type { Sql } from '../db/sql.ts';
import { createLocalLiveSource } from '../hub/live-source.ts';
import { type Account, as, openSql, signUp, TEST_CONFIG } from '../testing/helper.ts';

const NOW = Date.parse('2026-06-01T10:00:00Z');

/** A minimal SMTP receiver: enough of RFC 5321 for plain-text messages. */
function smtpSink() {
  const received: string[] = [];
  const server = createServer((socket: Socket) => {
    let data = false;
    let buffer = '';
    const say = (line: string) => socket.write(`${line}\r\n`);
    say('220 localhost ESMTP test');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (data) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          received.push(buffer.slice(0, end));
          buffer = buffer.slice(end + 5);
          data = false;
          say('250 OK queued');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') say('250 localhost');
        else if (verb === 'DATA') {
          data = true;
          say('354 go ahead');
        } else if (verb === 'QUIT') {
          say('221 bye');
          socket.end();
        } else say('250 OK');
      }
    });
  });
  return { server, received };
}

describe('alert notifications by email', () => {
  const sink = smtpSink();
  let server: Server;
  let app: FastifyInstance;
  let sql: Sql;
  let store: TelemetryStore;
  let alice: Account;
  let mailed: Meter;
  let quiet: Meter;

  const settings = (email: boolean) => ({
    enabled: true,
    voltageDrop: 207,
    voltageRise: 253,
    totalConsumption: 0,
    disableAtNight: false,
    interval: 60,
    muteAll: false,
    email,
  });

  beforeAll(async () => {
    server = sink.server;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    store = await createDuckDbStore();
    sql = await openSql('pglite');
    app = await buildApp({
      store,
      sql,
      live: createLocalLiveSource(),
      config: { ...TEST_CONFIG, smtpUrl: `smtp://127.0.0.1:${port}?ignoreTLS=true` },
      now: () => NOW,
    });
    await app.ready();
    alice = await signUp(app);
    const home = await locationOf(app, alice, 'Europe/Warsaw');
    mailed = await claimMeter(app, alice, home, 'Garage');
    quiet = await claimMeter(app, alice, home, 'Shed');
    for (const [m, email] of [
      [mailed, true],
      [quiet, false],
    ] as const) {
      const put = await as(app, alice, {
        method: 'PUT',
        url: `/api/devices/${m.id}/notifications`,
        payload: settings(email),
      });
      expect(put.statusCode).toBe(200);
      expect(put.json().email).toBe(email);
    }
  });

  afterAll(async () => {
    await app?.close();
    await sql?.close();
    await store?.close();
    server?.close();
  });

  it('mails an alert of a device with email on to the account, and none for a device without it', async () => {
    await app.alerts.evaluate({ deviceKey: quiet.deviceKey, ts: NOW - 60_000, values: { vave1: 190 } });
    await app.alerts.evaluate({ deviceKey: mailed.deviceKey, ts: NOW - 60_000, values: { vave1: 190 } });
    const deadline = Date.now() + 10_000;
    while (sink.received.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // The quiet device's alert was stored first: had it been mailed, it would be here by now.
    await new Promise((r) => setTimeout(r, 200));
    const kinds = (
      (await as(app, alice, { method: 'GET', url: '/api/notifications' })).json().items as {
        deviceId: number;
        kind: string;
      }[]
    ).map((n) => [n.deviceId, n.kind]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        [mailed.id, 'voltage-drop'],
        [quiet.id, 'voltage-drop'],
      ]),
    );
    expect(sink.received).toHaveLength(1);
    const message = sink.received[0]!;
    expect(message).toMatch(new RegExp(`^To: ${alice.email.replaceAll('.', '\\.')}$`, 'm'));
    expect(message).toMatch(/^Subject: Kilowatch: Voltage drop on Garage$/m);
    // The reading at 09:59Z is 11:59 in Warsaw (CEST).
    expect(message).toContain('11:59 (Europe/Warsaw)');
    expect(message).toContain('Device: Garage');
  });
});
