/**
 * Quotas (docs/api.md §Conventions, docs/architecture.md §Bounds and fairness): what one account may hold
 * of each kind it creates, smaller for a demo visitor's workspace. One table of limits (`config.quotas`,
 * from `KW_QUOTA_*` and `KW_DEMO_QUOTA_*`) and one check, `app.quotas.check(request, kind)`, that every
 * create route calls before it creates: past the limit it answers 409 naming the kind and the number.
 *
 * The check and the create that follows hold the account's place for that kind until the answer is sent,
 * so two creates at once in this process cannot both pass the same count.
 */
import type { QuotaKind } from '@kilowatch/core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyInstance {
    quotas: {
      /**
       * Refuses (409, `QuotaError`) a create of `kind` when the request's account already holds its quota
       * of it; otherwise holds the account's place for `kind` until this request is answered.
       */
      check(request: FastifyRequest, kind: QuotaKind): Promise<void>;
      /** The limits in force for the account (its demo workspace's when it is one). */
      limitsOf(userId: number): Promise<Record<QuotaKind, number>>;
    };
  }
}

/** What each kind is called in an answer, and the table its rows are in (every one has `user_id`). */
const KINDS: Record<QuotaKind, { noun: string; table: string }> = {
  devices: { noun: 'devices', table: 'devices' },
  locations: { noun: 'locations', table: 'locations' },
  tariffs: { noun: 'tariffs', table: 'tariffs' },
  comparisons: { noun: 'comparisons', table: 'comparisons' },
  apiKeys: { noun: 'API keys', table: 'api_keys' },
};

/** The longest a place is held when a request is somehow never answered (its hooks never run). */
const HOLD_MAX_MS = 60_000;

/** 409: the account holds its quota of a kind. The body names the kind and the limit. */
export class QuotaError extends ApiError {
  constructor(
    readonly kind: QuotaKind,
    readonly limit: number,
    demo: boolean,
  ) {
    const message = `Quota reached: ${demo ? 'a demo workspace' : 'an account'} may have at most ${limit} ${KINDS[kind].noun}.`;
    super(409, message, { [kind]: [message] });
    this.name = 'QuotaError';
  }
}

export default fp(
  async (app: FastifyInstance) => {
    const quotas = app.config.quotas;
    /** The tail of each account-and-kind's queue of creates. */
    const tails = new Map<string, Promise<void>>();
    const held = new WeakMap<FastifyRequest, (() => void)[]>();

    function releaseAll(request: FastifyRequest): void {
      const releases = held.get(request);
      if (!releases) return;
      held.delete(request);
      for (const r of releases) r();
    }
    app.addHook('onResponse', async (request) => releaseAll(request));
    app.addHook('onRequestAbort', async (request) => releaseAll(request));

    async function limitsOf(userId: number): Promise<Record<QuotaKind, number>> {
      const user = await app.accounts.findUserById(userId);
      return user?.isDemo ? quotas.demo : quotas.account;
    }

    app.decorate('quotas', {
      limitsOf,
      async check(request: FastifyRequest, kind: QuotaKind) {
        const userId = request.session.userId;
        const key = `${userId}:${kind}`;
        const before = tails.get(key) ?? Promise.resolve();
        let release!: () => void;
        const mine = new Promise<void>((r) => {
          release = r;
        });
        const tail = before.then(() => mine);
        tails.set(key, tail);
        let done = false;
        const cut = setTimeout(() => free(), HOLD_MAX_MS);
        cut.unref();
        const free = () => {
          if (done) return;
          done = true;
          clearTimeout(cut);
          release();
          if (tails.get(key) === tail) tails.delete(key);
        };
        held.set(request, [...(held.get(request) ?? []), free]);
        try {
          await before;
          const user = await app.accounts.findUserById(userId);
          const demo = user?.isDemo === true;
          const limit = (demo ? quotas.demo : quotas.account)[kind];
          const { rows } = await app.sql.query<{ n: string | number }>(
            `select count(*) as n from ${KINDS[kind].table} where user_id = $1`,
            [userId],
          );
          if (Number(rows[0]?.n ?? 0) >= limit) throw new QuotaError(kind, limit, demo);
        } catch (err) {
          free();
          throw err;
        }
      },
    });
  },
  { name: 'quotas', dependencies: ['config', 'metadata', 'auth'] },
);
