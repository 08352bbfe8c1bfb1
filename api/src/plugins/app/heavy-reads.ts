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
 *   `heavyQueue`, in arrival order. A full queue, or a wait longer than `QUEUE_WAIT_MS`, is answered 503
 *   with `Retry-After`: "The server is busy. Try again later."
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { addTurnGate, MESSAGES } from '@kilowatch/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Heavy requests running and queued, and other requests being answered (for /metrics and tests). */
    heavyReads: { running(): number; queued(): number; light(): number };
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
  /^(\/api\/devices\/:id\/(series|energy|energy\/summary|heatmap|readings|voltage-quality)|\/api\/analytics\/consumption|\/api\/comparisons\/:id\/data|\/api\/tariffs\/(compare|:id\/stats)|\/grafana\/query)$/;

/** The longest a heavy read waits at one turn for short requests to be answered. */
export const LIGHT_FIRST_MAX_MS = 50;
/** The longest a heavy request waits in the queue before it is told to come back. */
export const QUEUE_WAIT_MS = 20_000;
const RETRY_AFTER_S = 5;

export interface HeavyReadsOptions {
  /** Heavy requests at once (`KW_HEAVY_READS`). */
  heavyReads: number;
  /** Heavy requests waiting for their turn (`KW_HEAVY_QUEUE`). */
  heavyQueue: number;
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
    let running = 0;
    const queue: { start: () => void }[] = [];
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
      queued: () => queue.length,
      light: () => light,
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

    const next = () => {
      running--;
      const waiter = queue.shift();
      if (waiter) {
        running++;
        waiter.start();
      }
    };
    app.addHook('onSend', async (request, _reply, payload) => {
      answering.get(request)?.();
      return payload;
    });

    // After authentication and validation: a bad or unauthorized heavy request is refused without waiting.
    app.addHook('preHandler', async (request, reply) => {
      if (request.routeOptions.config?.heavy !== true) return;
      if (running < opts.heavyReads) {
        running++;
        whenDone(reply, next);
        return;
      }
      if (queue.length >= opts.heavyQueue) throw busy();
      await new Promise<void>((resolve, reject) => {
        const waiter = {
          start: () => {
            clearTimeout(timer);
            whenDone(reply, next);
            resolve();
          },
        };
        const leave = () => {
          const at = queue.indexOf(waiter);
          if (at < 0) return false;
          queue.splice(at, 1);
          clearTimeout(timer);
          return true;
        };
        const timer = setTimeout(() => {
          if (leave()) reject(busy());
        }, QUEUE_WAIT_MS);
        // A client that gave up leaves the queue.
        reply.raw.once('close', () => {
          if (leave()) reject(busy());
        });
        queue.push(waiter);
      });
    });
  },
  { name: 'heavy-reads' },
);
