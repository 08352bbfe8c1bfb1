/**
 * The export job queue in the metadata store. Jobs are claimed with `FOR UPDATE SKIP LOCKED` (the same on
 * PGlite and PostgreSQL, so several API processes share one queue), run with bounded concurrency, report
 * progress over the hub, and their files expire after a configurable time.
 *
 * Fair share (docs/architecture.md §Bounds and fairness): a free worker takes the oldest queued job of the
 * account with the fewest running, and never one of an account that already runs its share (the workers
 * divided by the accounts with jobs waiting or running). Demo workspaces get a shorter range, one job at a
 * time, and half of the queue at most between them. A job whose row is gone (its workspace ended, its
 * user signed out of a demo) is cancelled at its next page and its files removed.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ExportFormat, ExportJob, ExportStatus } from '@kilowatch/core';
import { MESSAGES } from '@kilowatch/core';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { contextOf } from '../analytics/context.ts';
import { ApiError } from '../errors.ts';
import { safeFileName } from './csv.ts';
import { writeExport } from './files.ts';

export interface ExportOptions {
  /** Where finished files live; `<dataDir>/exports` by default. */
  dir?: string;
  /** Jobs run at once in this process. */
  concurrency?: number;
  /** Queued + running jobs above which new ones get 503 "Export unavailable". */
  maxQueued?: number;
  /** Queued + running jobs of one user above which that user's new ones get 503: one user cannot fill the queue. */
  maxQueuedPerUser?: number;
  /** How long shutdown waits for running jobs before it puts them back in the queue (ms). */
  shutdownMs?: number;
  /** How long a finished file can be downloaded (ms). */
  ttlMs?: number;
  /** How often the queue is polled for jobs queued by other processes, and expired files removed (ms). */
  pollMs?: number;
  /** Longest range one export may cover (ms). */
  maxRangeMs?: number;
  /** A running job silent this long belonged to a process that died: it is failed, not left hanging (ms). */
  staleMs?: number;
  /** Bytes of export files one user may keep, finished and being written (default `KW_EXPORT_USER_BYTES`). */
  maxUserBytes?: number;
  /** Bytes of export files all users together may keep (default `KW_EXPORT_TOTAL_BYTES`). */
  maxTotalBytes?: number;
  /** Longest range one export of a demo workspace may cover (ms). */
  demoMaxRangeMs?: number;
  /** Queued + running jobs of one demo workspace. */
  demoMaxQueuedPerUser?: number;
}

/** Default of the longest range a demo workspace's export covers: 31 days. */
export const DEMO_MAX_RANGE_MS = 31 * 86_400_000;

/** Why a job was not queued: the queue is full, or the user's or everyone's export files fill their space. */
export interface EnqueueRefusal {
  refused: 'busy' | 'user-space' | 'server-space';
}

/** Stops a job whose files grew past the space allowed for export files. */
class OutOfSpace extends Error {}
/** Stops a job whose row is gone: its workspace ended or its user signed out of a demo. */
class Cancelled extends Error {}

export interface StoredRequest {
  deviceIds: number[];
  params: string[] | 'all';
  from: number;
  to: number;
  format: ExportFormat;
}

interface JobRow {
  id: number;
  user_id: number;
  status: ExportStatus;
  progress: number;
  request: StoredRequest | string;
  file_name: string;
  file_path: string | null;
  size: number | null;
  error: string | null;
  created_at: number;
  expires_at: number | null;
  format: ExportFormat;
}

const COLUMNS =
  'id, user_id, status, progress, request, file_name, file_path, size, error, created_at, expires_at, format';

function toJob(r: JobRow): ExportJob {
  return {
    id: Number(r.id),
    status: r.status,
    progress: Number(r.progress),
    fileName: r.file_name,
    size: r.size === null ? null : Number(r.size),
    ...(r.error ? { error: r.error } : {}),
    createdAt: Number(r.created_at),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    exports: {
      settings: Required<ExportOptions>;
      /** Queues a job, or says why not (the queue is full, or the export files fill their space). */
      enqueue(
        userId: number,
        req: StoredRequest,
        fileName: string | undefined,
      ): Promise<ExportJob | EnqueueRefusal>;
      /** Bytes of export files kept now (finished and being written in this process): the user's and everyone's. */
      usage(userId: number): Promise<{ user: number; total: number }>;
      /** Removes a job that is not running, and its file. False when there is none (or it runs). */
      remove(userId: number, id: number): Promise<'removed' | 'running' | 'missing'>;
      list(userId: number): Promise<ExportJob[]>;
      get(userId: number, id: number): Promise<ExportJob | null>;
      /** The finished file of a job, or null when it is not done or has expired. */
      file(
        userId: number,
        id: number,
      ): Promise<{ path: string; fileName: string; format: ExportFormat; zip: boolean } | null>;
      /** Resolves once no job is running or queued in this process's view (tests, shutdown). */
      idle(): Promise<void>;
      removeExpired(now?: number): Promise<number>;
      failStale(now?: number): Promise<number>;
      removeOrphans(): Promise<number>;
    };
  }
}

export default fp(
  async (app: FastifyInstance, opts: ExportOptions) => {
    const settings: Required<ExportOptions> = {
      dir: opts.dir ?? path.join(app.config.dataDir, 'exports'),
      concurrency: opts.concurrency ?? 2,
      maxQueued: opts.maxQueued ?? 20,
      maxQueuedPerUser: opts.maxQueuedPerUser ?? 3,
      shutdownMs: opts.shutdownMs ?? 10_000,
      ttlMs: opts.ttlMs ?? 24 * 3_600_000,
      pollMs: opts.pollMs ?? 5_000,
      maxRangeMs: opts.maxRangeMs ?? 400 * 86_400_000,
      staleMs: opts.staleMs ?? 15 * 60_000,
      maxUserBytes: opts.maxUserBytes ?? app.config.exportUserBytes,
      maxTotalBytes: opts.maxTotalBytes ?? app.config.exportTotalBytes,
      demoMaxRangeMs: opts.demoMaxRangeMs ?? DEMO_MAX_RANGE_MS,
      demoMaxQueuedPerUser: opts.demoMaxQueuedPerUser ?? 1,
    };
    /** Jobs of this process to stop at their next page, their rows gone. */
    const cancelled = new Set<number>();
    /** Bytes written so far by the jobs running in this process. */
    const writing = new Map<number, { userId: number; bytes: number }>();
    /** Bytes of files finished in this process since it started, per user and in all (see `spaceCheck`). */
    const finished = { total: 0, users: new Map<number, number>() };

    /** Bytes of finished files still kept, from the metadata store (every process's). */
    async function keptBytes(userId: number): Promise<{ user: number; total: number }> {
      const { rows } = await app.sql.query<{
        user_bytes: number | string | null;
        total: number | string | null;
      }>(
        `select coalesce(sum(case when user_id = $1 then size end), 0) as user_bytes, coalesce(sum(size), 0) as total
         from export_jobs where status = 'done' and file_path is not null`,
        [userId],
      );
      return { user: Number(rows[0]?.user_bytes ?? 0), total: Number(rows[0]?.total ?? 0) };
    }

    function writingBytes(userId: number): { user: number; total: number } {
      let user = 0;
      let total = 0;
      for (const w of writing.values()) {
        total += w.bytes;
        if (w.userId === userId) user += w.bytes;
      }
      return { user, total };
    }

    async function usage(userId: number): Promise<{ user: number; total: number }> {
      const kept = await keptBytes(userId);
      const w = writingBytes(userId);
      return { user: kept.user + w.user, total: kept.total + w.total };
    }

    /**
     * The space check of a running job: what was kept when it started, plus what jobs finished in this
     * process since, plus what the running jobs of this process have written, stays within both budgets.
     */
    async function spaceCheck(id: number, userId: number): Promise<(bytes: number) => void> {
      const kept = await keptBytes(userId);
      const userAtStart = finished.users.get(userId) ?? 0;
      const totalAtStart = finished.total;
      const entry = { userId, bytes: 0 };
      writing.set(id, entry);
      return (bytes) => {
        entry.bytes = bytes;
        const w = writingBytes(userId);
        const user = kept.user + (finished.users.get(userId) ?? 0) - userAtStart + w.user;
        const total = kept.total + finished.total - totalAtStart + w.total;
        if (user > settings.maxUserBytes || total > settings.maxTotalBytes)
          throw new OutOfSpace(`export ${id} grew past the space allowed (user ${user} B, all ${total} B)`);
      };
    }
    let running = 0;
    let closing = false;
    /** Set at shutdown once `shutdownMs` has passed: running jobs stop at their next page. */
    let abandon = false;
    class Abandoned extends Error {}
    const active = new Set<Promise<void>>();

    async function claim(): Promise<JobRow | null> {
      return app.sql.transaction(async (tx) => {
        // The oldest job of the party with the fewest running, among the parties below their share: the
        // workers divided by the parties with jobs waiting or running (at least one each). A party is an
        // account, and every demo workspace together is one (party 0), so that visitors cannot hold
        // every worker between them.
        const { rows } = await tx.query<JobRow>(
          `with active as (
             select case when u.is_demo then 0 else e.user_id end as party,
                    count(*) filter (where e.status = 'running') as running
             from export_jobs e join users u on u.id = e.user_id
             where e.status in ('queued', 'running') group by 1
           ), share as (select greatest(1, ceil($1::numeric / nullif(count(*), 0))) as n from active)
           select ${COLUMNS.split(', ')
             .map((c) => `j.${c}`)
             .join(', ')}
           from export_jobs j join users u on u.id = j.user_id
             join active a on a.party = case when u.is_demo then 0 else j.user_id end
             cross join share s
           where j.status = 'queued' and a.running < s.n
           order by a.running, j.id limit 1 for update of j skip locked`,
          [Math.max(1, settings.concurrency)],
        );
        const job = rows[0];
        if (!job) return null;
        await tx.query(`update export_jobs set status = 'running', updated_at = $2 where id = $1`, [
          job.id,
          app.clock.now(),
        ]);
        return { ...job, status: 'running' };
      });
    }

    function publish(userId: number, id: number, status: ExportStatus, progress: number) {
      app.hub.publishToUser(userId, { type: 'export', id, status, progress }, `export:${id}`);
    }

    async function run(job: JobRow): Promise<void> {
      const id = Number(job.id);
      const userId = Number(job.user_id);
      const req = (typeof job.request === 'string' ? JSON.parse(job.request) : job.request) as StoredRequest;
      publish(userId, id, 'running', 0);
      let lastReported = 0;
      const progress = (p: number) => {
        if (abandon) throw new Abandoned('export abandoned at shutdown');
        if (cancelled.has(id)) throw new Cancelled(`export ${id} cancelled: its job is gone`);
        // Progress is stored and pushed in 5 % steps, not per page; a row no longer there (removed by
        // another process) cancels the job at its next page.
        if (p - lastReported < 0.05) return;
        lastReported = p;
        publish(userId, id, 'running', p);
        void app.sql
          .query('update export_jobs set progress = $2, updated_at = $3 where id = $1', [
            id,
            p,
            app.clock.now(),
          ])
          .then((r) => {
            if (r.rowCount === 0) cancelled.add(id);
          })
          .catch(() => {});
      };
      let finalPath: string | null = null;
      try {
        const own = new Map((await app.devices.list(userId)).map((d) => [d.id, d]));
        const used = new Set<string>();
        const devices = req.deviceIds.map((deviceId) => {
          const d = own.get(deviceId);
          if (!d) throw new Error(`device ${deviceId} is gone`);
          let name = safeFileName(d.friendlyName || d.name, `device-${d.id}`);
          if (used.has(name)) name = `${name}-${d.id}`;
          used.add(name);
          return { ctx: contextOf(d), name: `${name}.${req.format}` };
        });
        await mkdir(settings.dir, { recursive: true });
        finalPath = path.join(settings.dir, `${id}-${job.file_name}`);
        const space = await spaceCheck(id, userId);
        const size = await writeExport(
          app.store,
          devices,
          req.format,
          { from: req.from, to: req.to },
          req.params,
          finalPath,
          progress,
          space,
        );
        finished.total += size;
        finished.users.set(userId, (finished.users.get(userId) ?? 0) + size);
        const now = app.clock.now();
        const stored = await app.sql.query(
          `update export_jobs set status = 'done', progress = 1, file_path = $2, size = $3, expires_at = $4, updated_at = $5
           where id = $1`,
          [id, finalPath, size, now + settings.ttlMs, now],
        );
        if (stored.rowCount === 0) throw new Cancelled(`export ${id} cancelled as it finished`);
        publish(userId, id, 'done', 1);
      } catch (err) {
        if (err instanceof Cancelled) {
          // Its row went with its workspace or was removed: nothing of it stays on disk.
          if (finalPath) await rm(finalPath, { force: true }).catch(() => {});
          app.log.info({ exportId: id, userId }, err.message);
          return;
        }
        if (err instanceof Abandoned || abandon) {
          // Shutdown did not wait for it: back in the queue, run again from the start by the next process.
          await app.sql
            .query(`update export_jobs set status = 'queued', progress = 0, updated_at = $2 where id = $1`, [
              id,
              app.clock.now(),
            ])
            .catch(() => {});
          return;
        }
        const tooLarge = err instanceof OutOfSpace;
        if (tooLarge) app.log.warn({ exportId: id, userId }, err.message);
        else app.log.error({ err, exportId: id }, 'export failed');
        await app.sql
          .query(`update export_jobs set status = 'failed', error = $2, updated_at = $3 where id = $1`, [
            id,
            tooLarge ? MESSAGES.exportTooLarge : MESSAGES.exportFailed,
            app.clock.now(),
          ])
          .catch(() => {});
        publish(userId, id, 'failed', lastReported);
      } finally {
        writing.delete(id);
        cancelled.delete(id);
      }
    }

    /**
     * Cancels the user's jobs whose rows are gone (their workspace was removed) and, for a demo
     * workspace, every job of it, queued or running, with its files: signing out of one ends it.
     */
    async function cancelGone(userId: number): Promise<void> {
      const user = await app.accounts.findUserById(userId);
      if (user?.isDemo) {
        const { rows } = await app.sql.query<{ file_path: string | null }>(
          'delete from export_jobs where user_id = $1 returning file_path',
          [userId],
        );
        await Promise.all(rows.map((r) => (r.file_path ? rm(r.file_path, { force: true }) : undefined)));
      }
      const mine = [...writing].filter(([, w]) => w.userId === userId).map(([id]) => id);
      if (mine.length === 0) return;
      const { rows } = await app.sql.query<{ id: number }>(
        'select id from export_jobs where id = any($1::integer[])',
        [mine],
      );
      const left = new Set(rows.map((r) => Number(r.id)));
      for (const id of mine) if (!left.has(id)) cancelled.add(id);
    }
    const stopListening = app.hub.onSessionsEnded((userId) =>
      cancelGone(userId).catch((err) => app.log.warn({ err, userId }, 'export cancel failed')),
    );

    /** Starts queued jobs while there is room. */
    function kick(): void {
      if (closing) return;
      while (running < settings.concurrency) {
        running++;
        const p: Promise<void> = claim()
          .then(async (job) => {
            if (!job) return false;
            await run(job);
            return true;
          })
          .catch((err) => {
            app.log.error({ err }, 'export queue failed');
            return false;
          })
          .then((more) => {
            running--;
            active.delete(p);
            if (more) kick();
          });
        active.add(p);
      }
    }

    async function removeExpired(now = app.clock.now()): Promise<number> {
      const { rows } = await app.sql.query<{ id: number; file_path: string }>(
        `select id, file_path from export_jobs where status = 'done' and file_path is not null and expires_at <= $1`,
        [now],
      );
      for (const r of rows) {
        await rm(r.file_path, { force: true });
        await app.sql.query('update export_jobs set file_path = null where id = $1', [r.id]);
      }
      return rows.length;
    }

    /** Running jobs that stopped reporting progress (their process died) get a clear error. */
    async function failStale(now = app.clock.now()): Promise<number> {
      const r = await app.sql.query(
        `update export_jobs set status = 'failed', error = $1, updated_at = $2 where status = 'running' and updated_at < $3`,
        [MESSAGES.exportFailed, now, now - settings.staleMs],
      );
      return r.rowCount;
    }

    const timer = setInterval(() => {
      kick();
      removeExpired().catch((err) => app.log.warn({ err }, 'export expiry failed'));
      failStale().catch((err) => app.log.warn({ err }, 'export stale check failed'));
      // Files of jobs whose rows went (a workspace removed by another process) go too.
      removeOrphans().catch((err) => app.log.warn({ err }, 'export orphan cleanup failed'));
    }, settings.pollMs);
    timer.unref();

    app.decorate('exports', {
      settings,
      usage,
      async enqueue(userId, req, fileName) {
        const demo = (await app.accounts.findUserById(userId))?.isDemo === true;
        if (demo && req.to - req.from > settings.demoMaxRangeMs) {
          const days = Math.floor(settings.demoMaxRangeMs / 86_400_000);
          const message = `A demo workspace exports at most ${days} days at once.`;
          throw new ApiError(400, message, { to: [message] });
        }
        const { rows } = await app.sql.query<{ n: number; demo: number }>(
          `select count(*)::integer as n, count(*) filter (where u.is_demo)::integer as demo
           from export_jobs j join users u on u.id = j.user_id where j.status in ('queued', 'running')`,
        );
        if (Number(rows[0]?.n ?? 0) >= settings.maxQueued) return { refused: 'busy' };
        // Demo workspaces together hold at most half of the queue: the rest stays for everyone else.
        if (demo && Number(rows[0]?.demo ?? 0) >= Math.floor(settings.maxQueued / 2))
          return { refused: 'busy' };
        const { rows: mine } = await app.sql.query<{ n: number }>(
          `select count(*)::integer as n from export_jobs where user_id = $1 and status in ('queued', 'running')`,
          [userId],
        );
        const perUser = demo ? settings.demoMaxQueuedPerUser : settings.maxQueuedPerUser;
        if (Number(mine[0]?.n ?? 0) >= perUser) return { refused: 'busy' };
        // Refused before any work when the files kept already fill the space (a job that outgrows what
        // is left fails as it crosses it, its partial file removed).
        const used = await usage(userId);
        if (used.user >= settings.maxUserBytes) return { refused: 'user-space' };
        if (used.total >= settings.maxTotalBytes) return { refused: 'server-space' };
        const stamp = new Date(app.clock.now()).toISOString().slice(0, 10);
        const ext = req.deviceIds.length > 1 ? 'zip' : req.format;
        const base = safeFileName((fileName ?? '').replace(/\.(csv|pdf|zip)$/i, ''), `kilowatch-${stamp}`);
        const now = app.clock.now();
        const { rows: created } = await app.sql.query<JobRow>(
          `insert into export_jobs (user_id, status, progress, request, file_name, format, created_at, updated_at)
           values ($1, 'queued', 0, $2, $3, $4, $5, $5) returning ${COLUMNS}`,
          [userId, JSON.stringify(req), `${base}.${ext}`, req.format, now],
        );
        kick();
        return toJob(created[0]!);
      },
      async list(userId) {
        const { rows } = await app.sql.query<JobRow>(
          `select ${COLUMNS} from export_jobs where user_id = $1 order by id desc limit 100`,
          [userId],
        );
        return rows.map(toJob);
      },
      async get(userId, id) {
        const { rows } = await app.sql.query<JobRow>(
          `select ${COLUMNS} from export_jobs where user_id = $1 and id = $2`,
          [userId, id],
        );
        return rows[0] ? toJob(rows[0]) : null;
      },
      async file(userId, id) {
        const { rows } = await app.sql.query<JobRow>(
          `select ${COLUMNS} from export_jobs where user_id = $1 and id = $2`,
          [userId, id],
        );
        const r = rows[0];
        if (r?.status !== 'done' || !r.file_path) return null;
        if (r.expires_at !== null && Number(r.expires_at) <= app.clock.now()) return null;
        // The worker that wrote the file may be another API replica: without a shared exports
        // directory the file is not here, which is an answer (404), not a stream that breaks.
        if (!(await stat(r.file_path).catch(() => null))?.isFile()) {
          app.log.warn(
            { exportId: id, dir: settings.dir },
            'export file not found on this replica: every API replica must share the exports directory',
          );
          return null;
        }
        return {
          path: r.file_path,
          fileName: r.file_name,
          format: r.format,
          zip: r.file_name.endsWith('.zip'),
        };
      },
      async remove(userId, id) {
        const { rows } = await app.sql.query<JobRow>(
          `delete from export_jobs where user_id = $1 and id = $2 and status <> 'running' returning ${COLUMNS}`,
          [userId, id],
        );
        const r = rows[0];
        if (!r) {
          const { rows: left } = await app.sql.query<{ id: number }>(
            'select id from export_jobs where user_id = $1 and id = $2',
            [userId, id],
          );
          return left.length > 0 ? 'running' : 'missing';
        }
        if (r.file_path) await rm(r.file_path, { force: true });
        return 'removed';
      },
      async idle() {
        for (let i = 0; i < 100_000 && active.size > 0; i++) await Promise.all([...active]);
      },
      removeExpired,
      failStale,
      removeOrphans,
    });

    /**
     * Files in the exports directory that no finished job names: partial files of jobs killed mid-run
     * (`.part0`, `.partial`) and files of jobs since removed. Only files named `<job id>-…` are touched.
     */
    async function removeOrphans(): Promise<number> {
      const names = await readdir(settings.dir).catch(() => [] as string[]);
      if (names.length === 0) return 0;
      const { rows } = await app.sql.query<{ id: number; status: ExportStatus; file_path: string | null }>(
        `select id, status, file_path from export_jobs where file_path is not null or status = 'running'`,
      );
      const kept = new Set(rows.flatMap((r) => (r.file_path ? [path.resolve(r.file_path)] : [])));
      // Another process sharing the directory may be writing these right now.
      const running = new Set(rows.filter((r) => r.status === 'running').map((r) => Number(r.id)));
      let n = 0;
      for (const name of names) {
        const m = /^(\d+)-/.exec(name);
        if (!m || running.has(Number(m[1]))) continue;
        const file = path.resolve(settings.dir, name);
        if (kept.has(file)) continue;
        await rm(file, { force: true });
        n++;
      }
      return n;
    }

    // Jobs queued before a restart run once the app is ready; what a killed run left behind goes first.
    app.addHook('onReady', async () => {
      await failStale().catch((err) => app.log.warn({ err }, 'export stale check failed'));
      await removeOrphans().catch((err) => app.log.warn({ err }, 'export orphan cleanup failed'));
      kick();
    });

    // Shutdown waits `shutdownMs` for running jobs, then stops them at their next page and queues them
    // again (they run from the start after the restart); it never waits for a year-long export.
    app.addHook('onClose', async () => {
      closing = true;
      clearInterval(timer);
      stopListening();
      let timeout: NodeJS.Timeout | undefined;
      const finished = Promise.all([...active]).then(() => true);
      const late = new Promise<boolean>((r) => {
        timeout = setTimeout(() => r(false), settings.shutdownMs);
      });
      const inTime = await Promise.race([finished, late]);
      clearTimeout(timeout);
      if (!inTime) {
        abandon = true;
        await Promise.race([finished, new Promise((r) => setTimeout(r, 2_000))]);
      }
    });
  },
  { name: 'exports', dependencies: ['hub', 'telemetry', 'repositories'] },
);
