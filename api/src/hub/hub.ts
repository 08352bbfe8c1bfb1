/**
 * The real-time hub (docs/api.md §Real-time hub) at /hubs/dashboardHub. The access token is checked on connect
 * and again periodically and right after a session ends (logout, a replayed refresh token, a password
 * reset); a socket whose session ended is closed with 1008. The
 * Origin must be on the allow-list. A client only receives its own devices' messages, and a slow client
 * gets the newest value per device instead of an ever-growing queue.
 */

import type { Socket } from 'node:net';
import websocket from '@fastify/websocket';
import { MESSAGES } from '@kilowatch/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import * as v from 'valibot';
import type { WebSocket } from 'ws';
import { errorResponse, request } from '../schema.ts';
import type { LiveSource } from './live-source.ts';
import { createOwnerLookup } from './owners.ts';

export const HUB_PATH = '/hubs/dashboardHub';
/** Policy violation: the session ended or expired. */
export const CLOSE_POLICY = 1008;

export type HubMessage =
  | { type: 'reading'; deviceId: number; ts: number; values: Record<string, number> }
  | { type: 'status'; deviceId: number; status: string; rssi?: number }
  | {
      type: 'notification';
      id: number;
      deviceId: number;
      kind: string;
      message: string;
      at: number;
      phase?: number | null;
      value?: number;
      threshold?: number;
    }
  | { type: 'export'; id: number; status: string; progress: number }
  | { type: 'pong' }
  | { type: 'error'; message: string };

/** What one API process hands the others over the broker (`startHubRelay` in relay.ts). */
export type HubEvent =
  | { kind: 'user'; userId: number; key: string; message: HubMessage }
  | { kind: 'sessions'; userId: number }
  /** A device's notification settings, zone or owner changed: its alert settings are read again. */
  | { kind: 'alert-settings'; deviceKey: string };

export interface HubRelay {
  /** Hands an event to every other API process. */
  publish(event: HubEvent): void;
  /** Events from the other API processes (never this one's own). */
  onEvent(fn: (event: HubEvent) => void): () => void;
  stop(): Promise<void>;
}

export interface HubOptions {
  live?: LiveSource;
  /** Several API processes on one broker: users' messages and logouts reach the others' sockets too. */
  relay?: HubRelay;
  /** How often every socket's session is checked again (ms). */
  sessionCheckMs?: number;
  /** Above this many buffered bytes a client is slow: its messages are coalesced per device. */
  highWaterBytes?: number;
  /** How often coalesced messages are retried (ms). */
  flushMs?: number;
  /** Open sockets one user may hold (every tab is one); a socket past it is closed with 1013. */
  maxSocketsPerUser?: number;
}

/** Try again later: this user holds as many sockets as allowed. */
export const CLOSE_TOO_MANY = 1013;
export const DEFAULT_MAX_SOCKETS_PER_USER = 30;
/** A subscribe naming a device the user's cached list lacks reads the list again at most this often. */
const DEVICE_LIST_REFRESH_MS = 5_000;

interface Client {
  socket: WebSocket;
  token: string;
  userId: number;
  subscribed: Set<number>;
  /** Newest pending message per key (device reading, device status, notification, export job). */
  pending: Map<string, Buffer>;
  /** Client messages are handled in order (a ping answers after the subscribe before it). */
  inbox: Promise<void>;
}

export interface HubStats {
  clients: number;
  sent: number;
  coalesced: number;
  pendingMessages: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    hub: {
      /** Sends to every socket of the user (notifications, export progress). */
      publishToUser(userId: number, message: HubMessage, key: string): void;
      /** Closes sockets whose session no longer verifies. */
      recheckSessions(userId?: number): Promise<void>;
      /**
       * Sessions of the user ended (logout, a replayed refresh token, a password reset): their sockets
       * close with 1008 now, in this process and the others.
       */
      sessionsEnded(userId: number): Promise<void>;
      /** Who owns the meter may have changed (a claim, a delete, a demo workspace made or removed). */
      ownersChanged(deviceKey: string): void;
      stats(): HubStats;
    };
  }
}

const SUBSCRIBE_MAX = 500;

const encode = (message: HubMessage): Buffer => Buffer.from(JSON.stringify(message));

function originAllowed(request: FastifyRequest, allowed: readonly string[]): boolean {
  const origin = request.headers.origin;
  // Non-browser clients send no Origin; browsers always do on a WebSocket upgrade.
  if (!origin) return true;
  if (allowed.length > 0) return allowed.includes(origin);
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}

function tokenOf(request: FastifyRequest): string | null {
  const q = request.query as Record<string, unknown> | undefined;
  const t = q?.access_token;
  return typeof t === 'string' && /^[A-Za-z0-9_-]{20,512}$/.test(t) ? t : null;
}

export default fp(
  async (app: FastifyInstance, opts: HubOptions) => {
    const highWater = opts.highWaterBytes ?? 256 * 1024;
    const clients = new Set<Client>();
    const owners = createOwnerLookup(app.sql, app.clock.now);
    const maxSockets = opts.maxSocketsPerUser ?? DEFAULT_MAX_SOCKETS_PER_USER;
    const socketsOf = new Map<number, number>();

    /**
     * Each connected user's device ids, shared by the user's sockets: a subscribe is answered from it,
     * not with a query each. Ids are never reused, so a device deleted since is merely never delivered;
     * a device claimed since is missing, and a subscribe naming one reads the list again (at most every
     * `DEVICE_LIST_REFRESH_MS`, however many subscribes arrive).
     */
    const userDevices = new Map<number, { ids: Set<number>; at: number; loading?: Promise<Set<number>> }>();
    async function devicesOf(userId: number, wanted: readonly number[]): Promise<Set<number>> {
      let entry = userDevices.get(userId);
      const now = app.clock.now();
      if (entry && (wanted.every((id) => entry!.ids.has(id)) || now - entry.at < DEVICE_LIST_REFRESH_MS))
        return entry.ids;
      if (entry?.loading) return entry.loading;
      const loading = app.devices.list(userId).then((list) => new Set(list.map((d) => d.id)));
      entry = entry ?? { ids: new Set(), at: 0 };
      entry.loading = loading;
      userDevices.set(userId, entry);
      try {
        const ids = await loading;
        if (socketsOf.has(userId)) userDevices.set(userId, { ids, at: app.clock.now() });
        return ids;
      } finally {
        const e = userDevices.get(userId);
        if (e?.loading === loading) delete e.loading;
      }
    }
    let sent = 0;
    let coalesced = 0;

    /**
     * Sockets corked in this turn of the event loop: the frames of every reading delivered in one turn
     * leave in one write per socket instead of one system call per frame (a hundred dashboards watching
     * a thousand readings a second would otherwise cost a hundred thousand writes a second).
     */
    const corked: Socket[] = [];
    function uncorkAll(): void {
      for (const raw of corked.splice(0)) raw.uncork();
    }
    function send(c: Client, payload: Buffer): void {
      // ws keeps the TCP socket in a private field; without it the frame is simply written at once.
      const raw = (c.socket as unknown as { _socket?: Socket })._socket;
      if (raw && raw.writableCorked === 0) {
        raw.cork();
        if (corked.push(raw) === 1) setImmediate(uncorkAll);
      }
      c.socket.send(payload, { binary: false });
      sent++;
    }

    function deliver(c: Client, key: string, payload: Buffer): void {
      if (c.socket.readyState !== c.socket.OPEN) return;
      if (c.pending.size > 0 || c.socket.bufferedAmount > highWater) {
        if (c.pending.has(key)) coalesced++;
        c.pending.delete(key);
        c.pending.set(key, payload);
        scheduleFlush();
        return;
      }
      send(c, payload);
    }

    // Held-back frames are retried on a timer that runs only while some socket holds any, so an idle
    // hub wakes nobody up.
    let flushTimer: NodeJS.Timeout | null = null;
    function scheduleFlush(): void {
      if (flushTimer) return;
      flushTimer = setTimeout(flush, opts.flushMs ?? 25);
      flushTimer.unref();
    }
    function flush(): void {
      flushTimer = null;
      let held = false;
      for (const c of clients) {
        if (c.pending.size === 0) continue;
        for (const [key, payload] of c.pending) {
          if (c.socket.bufferedAmount > highWater) break;
          c.pending.delete(key);
          send(c, payload);
        }
        if (c.pending.size > 0 && c.socket.readyState === c.socket.OPEN) held = true;
      }
      if (held) scheduleFlush();
    }

    async function recheckSessions(userId?: number): Promise<void> {
      for (const c of [...clients]) {
        if (userId !== undefined && c.userId !== userId) continue;
        const session = await app.sessions.verify(c.token).catch(() => null);
        if (!session) c.socket.close(CLOSE_POLICY, 'session ended');
      }
    }
    const checkTimer = setInterval(() => void recheckSessions(), opts.sessionCheckMs ?? 30_000);
    checkTimer.unref();

    const unsubscribe: (() => void)[] = [];
    if (opts.live) {
      unsubscribe.push(
        opts.live.onReading((r) => {
          if (clients.size === 0) return;
          void owners
            .byKey(r.deviceKey)
            .then((owners) => {
              if (owners.size === 0) return;
              // Encoded once per reading and device row, shared by every socket that receives it.
              const payloads = new Map<number, Buffer>();
              for (const c of clients) {
                const deviceId = owners.get(c.userId);
                if (deviceId === undefined || !c.subscribed.has(deviceId)) continue;
                let payload = payloads.get(deviceId);
                if (!payload) {
                  payload = encode({ type: 'reading', deviceId, ts: r.ts, values: r.values });
                  payloads.set(deviceId, payload);
                }
                deliver(c, `reading:${deviceId}`, payload);
              }
            })
            .catch((err) => app.log.warn({ err }, 'hub: device lookup failed'));
        }),
      );
      if (opts.live.onStatus) {
        unsubscribe.push(
          opts.live.onStatus((s) => {
            if (clients.size === 0) return;
            void owners
              .byKey(s.deviceKey)
              .then((owners) => {
                if (owners.size === 0) return;
                const payloads = new Map<number, Buffer>();
                for (const c of clients) {
                  const deviceId = owners.get(c.userId);
                  if (deviceId === undefined) continue;
                  let payload = payloads.get(deviceId);
                  if (!payload) {
                    payload = encode({
                      type: 'status',
                      deviceId,
                      status: s.status,
                      ...(s.rssi !== undefined ? { rssi: s.rssi } : {}),
                    });
                    payloads.set(deviceId, payload);
                  }
                  deliver(c, `status:${deviceId}`, payload);
                }
              })
              .catch((err) => app.log.warn({ err }, 'hub: device lookup failed'));
          }),
        );
      }
    }

    function deliverToUser(userId: number, message: HubMessage, key: string): void {
      let payload: Buffer | null = null;
      for (const c of clients) {
        if (c.userId !== userId) continue;
        payload ??= encode(message);
        deliver(c, key, payload);
      }
    }

    const relay = opts.relay;
    if (relay) {
      unsubscribe.push(
        relay.onEvent((event) => {
          if (event.kind === 'user') deliverToUser(event.userId, event.message, event.key);
          else if (event.kind === 'sessions')
            void recheckSessions(event.userId).catch((err) =>
              app.log.warn({ err }, 'hub: session check failed'),
            );
        }),
      );
    }

    app.decorate('hub', {
      publishToUser(userId: number, message: HubMessage, key: string) {
        deliverToUser(userId, message, key);
        relay?.publish({ kind: 'user', userId, key, message });
      },
      recheckSessions,
      ownersChanged: (deviceKey: string) => owners.forget(deviceKey),
      async sessionsEnded(userId: number) {
        relay?.publish({ kind: 'sessions', userId });
        await recheckSessions(userId);
      },
      stats: () => ({
        clients: clients.size,
        sent,
        coalesced,
        pendingMessages: [...clients].reduce((s, c) => s + c.pending.size, 0),
      }),
    });

    app.addHook('onClose', async () => {
      if (flushTimer) clearTimeout(flushTimer);
      clearInterval(checkTimer);
      for (const u of unsubscribe) u();
      for (const c of clients) c.socket.terminate();
      clients.clear();
      socketsOf.clear();
      userDevices.clear();
    });

    await app.register(websocket, { options: { maxPayload: 64 * 1024 } });

    app.route({
      method: 'GET',
      url: HUB_PATH,
      // The access token travels in the query string: nothing about this route is logged.
      logLevel: 'silent',
      schema: {
        summary: 'Real-time hub (WebSocket upgrade): readings, status, notifications and export progress',
        tags: ['hub'],
        querystring: request(v.object({ access_token: v.optional(v.string()) })),
        response: { 401: errorResponse, 403: errorResponse, 426: errorResponse },
      },
      preValidation: async (request, reply) => {
        if (!originAllowed(request, app.config.allowedOrigins)) {
          return reply.code(403).send({ message: MESSAGES.unauthorized });
        }
        const token = tokenOf(request);
        const session = token ? await app.sessions.verify(token) : null;
        if (!session || !token) return reply.code(401).send({ message: MESSAGES.unauthorized });
        (request as FastifyRequest & { hubAuth?: { token: string; userId: number } }).hubAuth = {
          token,
          userId: session.userId,
        };
      },
      // A plain GET (no upgrade) is told to upgrade.
      handler: (_request, reply) => reply.code(426).send({ message: MESSAGES.malformed }),
      wsHandler: (socket, request) => {
        const auth = (request as FastifyRequest & { hubAuth?: { token: string; userId: number } }).hubAuth!;
        const client: Client = {
          socket,
          token: auth.token,
          userId: auth.userId,
          subscribed: new Set(),
          pending: new Map(),
          inbox: Promise.resolve(),
        };
        const held = socketsOf.get(client.userId) ?? 0;
        if (held >= maxSockets) {
          socket.close(CLOSE_TOO_MANY, 'too many connections');
          return;
        }
        socketsOf.set(client.userId, held + 1);
        clients.add(client);
        let gone = false;
        const drop = () => {
          if (gone) return;
          gone = true;
          clients.delete(client);
          const n = (socketsOf.get(client.userId) ?? 1) - 1;
          if (n > 0) socketsOf.set(client.userId, n);
          else {
            socketsOf.delete(client.userId);
            userDevices.delete(client.userId);
          }
        };
        socket.on('close', drop);
        socket.on('error', drop);
        socket.on('message', (data) => {
          const text = data.toString();
          client.inbox = client.inbox
            .then(() => handle(client, text))
            .catch((err) => app.log.warn({ err }, 'hub: message failed'));
        });
      },
    });

    async function handle(c: Client, text: string): Promise<void> {
      let msg: { type?: unknown; deviceIds?: unknown };
      try {
        msg = JSON.parse(text) as typeof msg;
      } catch {
        c.socket.send(JSON.stringify({ type: 'error', message: MESSAGES.malformed }));
        return;
      }
      if (msg.type === 'ping') {
        c.socket.send(JSON.stringify({ type: 'pong' }));
        return;
      }
      if (msg.type !== 'subscribe' && msg.type !== 'unsubscribe') {
        c.socket.send(JSON.stringify({ type: 'error', message: MESSAGES.malformed }));
        return;
      }
      const ids = Array.isArray(msg.deviceIds)
        ? msg.deviceIds.filter((x): x is number => Number.isInteger(x)).slice(0, SUBSCRIBE_MAX)
        : [];
      if (msg.type === 'unsubscribe') {
        for (const id of ids) c.subscribed.delete(id);
        return;
      }
      // Only the user's own devices: anything else is ignored, never revealed.
      const own = await devicesOf(c.userId, ids);
      for (const id of ids) if (own.has(id)) c.subscribed.add(id);
    }
  },
  { name: 'hub', dependencies: ['auth', 'repositories'] },
);
