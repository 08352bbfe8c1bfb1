/**
 * The real-time hub (docs/api.md §Real-time hub) at /hubs/dashboardHub. The access token is checked on connect
 * and again periodically and right after a session ends (logout, a replayed refresh token, a password
 * reset); a socket whose session ended is closed with 1008. The
 * Origin must be on the allow-list. A client only receives its own devices' messages, and a slow client
 * gets the newest value per device instead of an ever-growing queue.
 *
 * What a client sends is bounded too (docs/architecture.md §Bounds and fairness): each socket has a token
 * bucket of frames and a bounded inbox of frames waiting to be handled; past either the socket is closed
 * (1008 for the rate, 1013 for the inbox) and counted, and malformed frames are counted rather than each
 * answered.
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
  /** Answers a subscribe once it is in force: the devices named that the user owns (others are left out). */
  | { type: 'subscribed'; deviceIds: number[] }
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
  /** Frames a socket may send at once before the sustained rate applies (the bucket's size). */
  inboundBurst?: number;
  /** Frames per second a socket may send over time (the bucket's refill); past it: closed with 1008. */
  inboundPerSecond?: number;
  /** Frames of one socket waiting to be handled; one more closes it with 1013. */
  maxInbox?: number;
}

/** Try again later: this user holds as many sockets as allowed. */
export const CLOSE_TOO_MANY = 1013;
export const DEFAULT_MAX_SOCKETS_PER_USER = 30;
export const DEFAULT_INBOUND_BURST = 100;
export const DEFAULT_INBOUND_PER_SECOND = 20;
export const DEFAULT_MAX_INBOX = 64;
/** Close reasons of a socket shed for what it sent (docs/api.md §Real-time hub). */
export const REASON_RATE = 'message rate exceeded';
export const REASON_INBOX = 'too many messages waiting';
/** A socket gets at most one error answer to malformed frames per this many ms; the rest are counted. */
const MALFORMED_ANSWER_MS = 10_000;
/** A shed socket whose peer does not finish the close handshake (it reads nothing) is cut after this. */
const SHED_TERMINATE_MS = 5_000;
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
  /** Frames received and not yet handled. */
  inboxDepth: number;
  /** The token bucket: frames the socket may still send, as of `refilledAt` (the app's clock). */
  tokens: number;
  refilledAt: number;
  /** When the last error answer to a malformed frame went out (-Infinity: none yet). */
  malformedAnsweredAt: number;
  /** Shed for what it sent: nothing more from it is handled. */
  shed: boolean;
}

export interface HubStats {
  clients: number;
  sent: number;
  coalesced: number;
  pendingMessages: number;
  /** Sockets closed for sending faster than the rate (1008) or overfilling their inbox (1013). */
  shedForRate: number;
  shedForInbox: number;
  /** Frames that were not a message the hub knows (bad JSON, unknown type). */
  malformedFrames: number;
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
      /**
       * Called with the user whenever their sessions ended, here or in another process (what else holds
       * work for a session, such as exports, lets go of it). The returned function stops it.
       */
      onSessionsEnded(fn: (userId: number) => void): () => void;
      /**
       * Who owns the meter may have changed (a claim, a delete, a demo workspace made or removed): whom its
       * readings reach and which devices a subscribe may name are read again.
       */
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
    const burst = opts.inboundBurst ?? DEFAULT_INBOUND_BURST;
    const perSecond = opts.inboundPerSecond ?? DEFAULT_INBOUND_PER_SECOND;
    const maxInbox = opts.maxInbox ?? DEFAULT_MAX_INBOX;
    let shedForRate = 0;
    let shedForInbox = 0;
    let malformedFrames = 0;

    /**
     * Each connected user's device ids, shared by the user's sockets: a subscribe is answered from it,
     * not with a query each. Ids are never reused, so a device deleted since is merely never delivered.
     * A claim anywhere (`ownersChanged`, here or relayed from another process) marks every list stale,
     * so a subscribe naming the new device reads its owner's list again at once; otherwise a subscribe
     * naming an id the list lacks (someone else's) reads it again at most every `DEVICE_LIST_REFRESH_MS`,
     * however many such subscribes arrive.
     */
    const userDevices = new Map<number, { ids: Set<number>; at: number; loading?: Promise<Set<number>> }>();
    /** Counts `ownersChanged` calls: a list read while one happened is kept as stale. */
    let ownersGeneration = 0;
    function ownersChanged(deviceKey: string): void {
      owners.forget(deviceKey);
      ownersGeneration++;
      for (const entry of userDevices.values()) entry.at = Number.NEGATIVE_INFINITY;
    }
    async function devicesOf(userId: number, wanted: readonly number[]): Promise<Set<number>> {
      let entry = userDevices.get(userId);
      const now = app.clock.now();
      if (entry && (wanted.every((id) => entry!.ids.has(id)) || now - entry.at < DEVICE_LIST_REFRESH_MS))
        return entry.ids;
      if (entry?.loading) return entry.loading;
      const generation = ownersGeneration;
      const loading = app.devices.list(userId).then((list) => new Set(list.map((d) => d.id)));
      entry = entry ?? { ids: new Set(), at: Number.NEGATIVE_INFINITY };
      entry.loading = loading;
      userDevices.set(userId, entry);
      try {
        const ids = await loading;
        const at = generation === ownersGeneration ? app.clock.now() : Number.NEGATIVE_INFINITY;
        if (socketsOf.has(userId)) userDevices.set(userId, { ids, at });
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

    const sessionListeners = new Set<(userId: number) => void>();
    function sessionsEndedHere(userId: number): void {
      for (const fn of sessionListeners) fn(userId);
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
          else if (event.kind === 'sessions') {
            sessionsEndedHere(event.userId);
            void recheckSessions(event.userId).catch((err) =>
              app.log.warn({ err }, 'hub: session check failed'),
            );
          }
        }),
      );
    }

    app.decorate('hub', {
      publishToUser(userId: number, message: HubMessage, key: string) {
        deliverToUser(userId, message, key);
        relay?.publish({ kind: 'user', userId, key, message });
      },
      recheckSessions,
      ownersChanged,
      async sessionsEnded(userId: number) {
        relay?.publish({ kind: 'sessions', userId });
        sessionsEndedHere(userId);
        await recheckSessions(userId);
      },
      onSessionsEnded(fn: (userId: number) => void) {
        sessionListeners.add(fn);
        return () => {
          sessionListeners.delete(fn);
        };
      },
      stats: () => ({
        clients: clients.size,
        sent,
        coalesced,
        pendingMessages: [...clients].reduce((s, c) => s + c.pending.size, 0),
        shedForRate,
        shedForInbox,
        malformedFrames,
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
          inboxDepth: 0,
          tokens: burst,
          refilledAt: app.clock.now(),
          malformedAnsweredAt: Number.NEGATIVE_INFINITY,
          shed: false,
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
          if (client.shed) return;
          // The bucket is checked before anything else is done with the frame: a flood costs a
          // subtraction per frame until the socket is closed.
          const now = app.clock.now();
          client.tokens = Math.min(
            burst,
            client.tokens + (Math.max(0, now - client.refilledAt) * perSecond) / 1000,
          );
          client.refilledAt = now;
          if (client.tokens < 1) {
            shedForRate++;
            return shed(client, CLOSE_POLICY, REASON_RATE);
          }
          client.tokens -= 1;
          if (client.inboxDepth >= maxInbox) {
            shedForInbox++;
            return shed(client, CLOSE_TOO_MANY, REASON_INBOX);
          }
          const text = data.toString();
          const failed = (err: unknown) => app.log.warn({ err }, 'hub: message failed');
          // Nothing waiting: the frame is handled now, and only what must wait (a subscribe reading the
          // device list) enters the inbox. Otherwise it queues behind what waits, in order.
          if (client.inboxDepth === 0) {
            let waiting: Promise<void> | undefined;
            try {
              waiting = handle(client, text);
            } catch (err) {
              failed(err);
            }
            if (!waiting) return;
            client.inboxDepth++;
            client.inbox = waiting.catch(failed).finally(() => {
              client.inboxDepth--;
            });
            return;
          }
          client.inboxDepth++;
          client.inbox = client.inbox
            .then(() => (client.shed ? undefined : handle(client, text)))
            .catch(failed)
            .finally(() => {
              client.inboxDepth--;
            });
        });
      },
    });

    /**
     * Closes a socket for what it sent: what it still has queued is dropped, nothing more it sends is
     * handled, and a peer that never answers the close (it reads nothing) is cut off.
     */
    function shed(c: Client, code: number, reason: string): void {
      if (c.shed) return;
      c.shed = true;
      c.pending.clear();
      c.socket.close(code, reason);
      const cut = setTimeout(() => c.socket.terminate(), SHED_TERMINATE_MS);
      cut.unref();
      c.socket.once('close', () => clearTimeout(cut));
    }

    /** Counts a malformed frame; the socket is told at most once per `MALFORMED_ANSWER_MS`. */
    function malformed(c: Client): undefined {
      malformedFrames++;
      const now = app.clock.now();
      if (now - c.malformedAnsweredAt < MALFORMED_ANSWER_MS) return undefined;
      c.malformedAnsweredAt = now;
      c.socket.send(JSON.stringify({ type: 'error', message: MESSAGES.malformed }));
      return undefined;
    }

    /** Handles one client message; only a subscribe has to wait (for the device list), and returns that. */
    function handle(c: Client, text: string): Promise<void> | undefined {
      let msg: { type?: unknown; deviceIds?: unknown };
      try {
        msg = JSON.parse(text) as typeof msg;
      } catch {
        return malformed(c);
      }
      if (typeof msg !== 'object' || msg === null) return malformed(c);
      if (msg.type === 'ping') {
        c.socket.send(JSON.stringify({ type: 'pong' }));
        return;
      }
      if (msg.type !== 'subscribe' && msg.type !== 'unsubscribe') return malformed(c);
      const ids = Array.isArray(msg.deviceIds)
        ? msg.deviceIds.filter((x): x is number => Number.isInteger(x)).slice(0, SUBSCRIBE_MAX)
        : [];
      if (msg.type === 'unsubscribe') {
        for (const id of ids) c.subscribed.delete(id);
        return;
      }
      // Only the user's own devices: anything else is ignored, never revealed.
      return devicesOf(c.userId, ids).then((own) => {
        const honoured = ids.filter((id) => own.has(id));
        for (const id of honoured) c.subscribed.add(id);
        if (!c.shed && c.socket.readyState === c.socket.OPEN)
          c.socket.send(JSON.stringify({ type: 'subscribed', deviceIds: honoured }));
      });
    }
  },
  { name: 'hub', dependencies: ['auth', 'repositories'] },
);
