/**
 * Heavy reads — telemetry over long ranges, analytics, Grafana's queries — must not make everyone else
 * wait (docs/api.md §Errors, docs/configuration.md `KW_HEAVY_READS`):
 *
 * - **Short requests first.** Heavy work gives the event loop a turn every few milliseconds (`nextTurn`);
 *   while any other request is being answered, it waits there until they are all answered (at most
 *   `LIGHT_FIRST_MAX_MS` a turn, so that steady short traffic slows heavy work down but cannot stop it).
 *   Without it, each step of a health check or a device page (a metadata query, a store probe) waited for
 *   one turn of every heavy read in progress.
 * - **A limit.** At most `heavyReads` heavy requests run at once; more wait in a queue of at most
 *   `heavyQueue`. A full queue is answered 503 with `Retry-After`: "The server is busy. Try again later."
 * - **A fair share.** One user (whatever token or API key they come with) has at most `heavyPerUser` heavy
 *   requests running and waiting; past it, their next one is answered the same 503 at once, so that one
 *   user cannot fill the queue. When a place frees, it goes to the waiting user with the fewest running,
 *   and among those to the one served least recently: a second user's request runs next, not after the
 *   first user's backlog. Each user's own requests run in arrival order.
 * - **Demo workspaces share one share.** Every demo visitor is a user of their own, and anyone may make
 *   many: together they run at most `demoShare(heavyReads)` heavy requests (a quarter of the places, at
 *   least one) and keep at most half the queue waiting; past that, a demo visitor's next one is answered
 *   the same 503. So a few demo visitors' loops over year-long reads cannot take the cores from
 *   accounts; each demo visitor still has the per-user share within it.
 * - **A wait budget.** A request that waited `heavyWaitMs` in the queue leaves it with the same 503; a
 *   client that disconnects leaves it at once.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { addTurnGate, MESSAGES } from '@kilowatch/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Heavy requests running and queued, and other requests being answered (for /metrics and tests). */
    heavyReads: {
      running(): number;
      queued(): number;
      light(): number;
      /** One user's heavy requests running and waiting (`owner`: `user <id>`). */
      of(owner: string): { running: number; queued: number };
      /** Demo workspaces' heavy requests running and waiting, all together. */
      demo(): { running: number; queued: number };
    };
  }
  interface FastifyContextConfig {
    /** A heavy read: limited in number, and gives way to other requests at each turn. */
    heavy?: boolean;
    /** Not counted as a request being answered (a WebSocket: open for as long as the page). */
    untracked?: boolean;
  }
}

/** Routes whose answers read and work over long telemetry ranges. */
const HEAVY_ROUTE =
  /^(\/api\/devices\/:id\/(series|energy|energy\/summary|heatmap|readings|voltage-quality)|\/api\/analytics\/consumption|\/api\/locations\/:id\/(flows|settlement)|\/api\/comparisons\/:id\/data|\/api\/tariffs\/(compare|:id\/stats)|\/grafana\/query)$/;

/** The longest a heavy read waits at one turn for short requests to be answered. */
export const LIGHT_FIRST_MAX_MS = 50;
/** Default of the longest a heavy request waits in the queue before it is told to come back. */
export const QUEUE_WAIT_MS = 20_000;
/** Default of heavy requests one user may have running and waiting. */
export const PER_USER = 8;
const RETRY_AFTER_S = 5;

/** Heavy requests all demo workspaces together may run at once: a quarter of the places, at least one. */
export const demoShare = (heavyReads: number) => Math.max(1, Math.floor(heavyReads / 4));
/** Heavy requests all demo workspaces together may keep waiting: half the queue. */
export const demoQueue = (heavyQueue: number) => Math.floor(heavyQueue / 2);
/** Users whose demo flag is remembered (a user never becomes or stops being a demo workspace). */
const DEMO_FLAGS_KEPT = 10_000;

/** Calls `fire` after `ms` unless the returned function is called first. */
export type WaitTimer = (ms: number, fire: () => void) => () => void;

const realTimer: WaitTimer = (ms, fire) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

/** Whose share a heavy request counts against: its user, or its address when it has none. */
function ownerOf(request: FastifyRequest): string {
  const userId = (request as { session?: { userId: number } | null }).session?.userId;
  return userId === undefined ? `ip ${request.ip}` : `user ${userId}`;
}

interface Waiter {
  start: () => void;
}

/** One user's heavy requests: running, and waiting in arrival order. */
interface Share {
  running: number;
  waiting: Waiter[];
  /** When this user last got a place (a counter; 0 = not yet). */
  servedAt: number;
  /** A demo workspace: counted in the demo workspaces' share too. */
  demo: boolean;
}

export interface HeavyReadsOptions {
  /** Heavy requests at once (`KW_HEAVY_READS`). */
  heavyReads: number;
  /** Heavy requests waiting for their turn (`KW_HEAVY_QUEUE`). */
  heavyQueue: number;
  /** Heavy requests one user may have running and waiting (`KW_HEAVY_PER_USER`, default `PER_USER`). */
  heavyPerUser?: number;
  /** The longest a heavy request waits in the queue (`KW_HEAVY_WAIT_MS`, default `QUEUE_WAIT_MS`). */
  heavyWaitMs?: number;
  /** Starts the wait budget's timer and returns its cancel (default `setTimeout`; tests fire it themselves). */
  waitTimer?: WaitTimer;
  /** The longest heavy work waits at one turn for other requests (default `LIGHT_FIRST_MAX_MS`). */
  lightFirstMaxMs?: number;
}

/**
 * Calls `fn` once when the response is written or the connection closes, whichever comes first; the
 * returned function calls it earlier.
 */
function whenDone(reply: FastifyReply, fn: () => void): () => void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    fn();
  };
  reply.raw.once('finish', once);
  reply.raw.once('close', once);
  return once;
}

export function busy(): ApiError {
  return new ApiError(503, MESSAGES.busy, undefined, { 'retry-after': String(RETRY_AFTER_S) });
}

export default fp<HeavyReadsOptions>(
  async (app: FastifyInstance, opts) => {
    const perUser = opts.heavyPerUser ?? PER_USER;
    const waitMs = opts.heavyWaitMs ?? QUEUE_WAIT_MS;
    const waitTimer = opts.waitTimer ?? realTimer;
    let running = 0;
    let queued = 0;
    let served = 0;
    const shares = new Map<string, Share>();
    const demoMax = demoShare(opts.heavyReads);
    const demoWaitMax = demoQueue(opts.heavyQueue);
    const demo = { running: 0, queued: 0 };
    const demoFlags = new Map<number, boolean>();
    /** Whether the request's user is a demo workspace (looked up once per user). */
    const isDemo = async (request: FastifyRequest): Promise<boolean> => {
      const userId = (request as { session?: { userId: number } | null }).session?.userId;
      if (userId === undefined) return false;
      let flag = demoFlags.get(userId);
      if (flag === undefined) {
        flag = (await app.accounts.findUserById(userId))?.isDemo === true;
        if (demoFlags.size >= DEMO_FLAGS_KEPT) demoFlags.clear();
        demoFlags.set(userId, flag);
      }
      return flag;
    };
    const shareOf = (owner: string, isDemoShare: boolean): Share => {
      let share = shares.get(owner);
      if (!share) {
        share = { running: 0, waiting: [], servedAt: 0, demo: isDemoShare };
        shares.set(owner, share);
      }
      return share;
    };
    const forget = (owner: string, share: Share) => {
      if (share.running === 0 && share.waiting.length === 0) shares.delete(owner);
    };
    const context = new AsyncLocalStorage<{ heavy: boolean }>();
    const lightFirstMaxMs = opts.lightFirstMaxMs ?? LIGHT_FIRST_MAX_MS;
    let light = 0;
    let lightDone: { promise: Promise<void>; resolve: () => void } | null = null;
    const lightFinished = () => {
      light--;
      if (light === 0 && lightDone) {
        lightDone.resolve();
        lightDone = null;
      }
    };
    const removeGate = addTurnGate(() => {
      // A short request's own turns, and everything while no short request is waiting, go on at once.
      if (light === 0 || context.getStore()?.heavy === false) return undefined;
      if (!lightDone) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => {
          resolve = r;
        });
        lightDone = { promise, resolve };
      }
      return Promise.race([lightDone.promise, new Promise<void>((r) => setTimeout(r, lightFirstMaxMs))]);
    });
    app.addHook('onClose', async () => removeGate());

    app.decorate('heavyReads', {
      running: () => running,
      queued: () => queued,
      light: () => light,
      of: (owner: string) => {
        const share = shares.get(owner);
        return { running: share?.running ?? 0, queued: share?.waiting.length ?? 0 };
      },
      demo: () => ({ ...demo }),
    });

    app.addHook('onRoute', (route) => {
      if (HEAVY_ROUTE.test(route.url)) route.config = { ...route.config, heavy: true };
      // A live socket is open for hours: it is no request being answered.
      const ws = route as { websocket?: boolean; wsHandler?: unknown };
      if (ws.websocket || ws.wsHandler) route.config = { ...route.config, untracked: true };
    });

    /** Short requests in progress, until their answer starts (a long download is no longer waited for). */
    const answering = new WeakMap<object, () => void>();
    app.addHook('onRequest', (request, reply, done) => {
      const heavy = request.routeOptions.config?.heavy === true;
      const untracked =
        request.routeOptions.config?.untracked === true || request.headers.upgrade !== undefined;
      if (!heavy && !untracked) {
        light++;
        answering.set(request, whenDone(reply, lightFinished));
      }
      // What the request does next (hooks, handler, the answer's serialization) runs in this context.
      context.run({ heavy }, done);
    });

    /** Gives `owner`'s request a place, until its answer is written or its connection closes. */
    const take = (owner: string, share: Share, reply: FastifyReply) => {
      running++;
      share.running++;
      if (share.demo) demo.running++;
      share.servedAt = ++served;
      whenDone(reply, () => {
        running--;
        share.running--;
        if (share.demo) demo.running--;
        forget(owner, share);
        next();
      });
    };
    /**
     * The freed place goes to the waiting user with the fewest running, then the one served least
     * recently; a demo workspace only while the demo workspaces' share has room.
     */
    const next = () => {
      if (running >= opts.heavyReads || queued === 0) return;
      let best: Share | undefined;
      for (const share of shares.values()) {
        if (share.waiting.length === 0) continue;
        if (share.demo && demo.running >= demoMax) continue;
        if (
          !best ||
          share.running < best.running ||
          (share.running === best.running && share.servedAt < best.servedAt)
        )
          best = share;
      }
      best?.waiting[0]?.start();
    };
    app.addHook('onSend', async (request, _reply, payload) => {
      answering.get(request)?.();
      return payload;
    });

    // After authentication and validation: a bad or unauthorized heavy request is refused without waiting.
    app.addHook('preHandler', async (request, reply) => {
      if (request.routeOptions.config?.heavy !== true) return;
      const owner = ownerOf(request);
      const share = shareOf(owner, await isDemo(request));
      if (share.running + share.waiting.length >= perUser) throw busy();
      const demoRoom = !share.demo || demo.running < demoMax;
      if (running < opts.heavyReads && demoRoom) {
        take(owner, share, reply);
        return;
      }
      if (queued >= opts.heavyQueue || (share.demo && demo.queued >= demoWaitMax)) {
        forget(owner, share);
        throw busy();
      }
      await new Promise<void>((resolve, reject) => {
        const leave = () => {
          const at = share.waiting.indexOf(waiter);
          if (at < 0) return false;
          share.waiting.splice(at, 1);
          queued--;
          if (share.demo) demo.queued--;
          cancel();
          return true;
        };
        const waiter: Waiter = {
          start: () => {
            leave();
            take(owner, share, reply);
            resolve();
          },
        };
        const giveUp = () => {
          if (!leave()) return;
          forget(owner, share);
          reject(busy());
        };
        const cancel = waitTimer(waitMs, giveUp);
        // A client that gave up leaves the queue.
        reply.raw.once('close', giveUp);
        share.waiting.push(waiter);
        queued++;
        if (share.demo) demo.queued++;
      });
    });
  },
  { name: 'heavy-reads' },
);
