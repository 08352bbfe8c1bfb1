/**
 * One export job as the dialog follows it: hub events and polled job answers both feed the same
 * reducer, in whatever order they arrive. Progress never goes backwards, a finished or failed job stays
 * so, and news about other jobs is ignored.
 */
import type { ExportStatus } from '@kilowatch/core';

export interface ExportProgress {
  id: number;
  status: ExportStatus;
  /** 0…1 */
  progress: number;
  fileName?: string;
  error?: string;
}

export interface ExportNews {
  id: number | string;
  status: string;
  progress?: number;
  fileName?: string;
  error?: string;
}

const STATUSES: readonly ExportStatus[] = ['queued', 'running', 'done', 'failed'];
const RANK: Record<ExportStatus, number> = { queued: 0, running: 1, done: 2, failed: 2 };

export function isTerminal(s: ExportStatus): boolean {
  return s === 'done' || s === 'failed';
}

export function scheduled(id: number): ExportProgress {
  return { id, status: 'queued', progress: 0 };
}

export function applyNews(state: ExportProgress, news: ExportNews): ExportProgress {
  if (Number(news.id) !== state.id) return state;
  const status = (STATUSES as readonly string[]).includes(news.status) ? (news.status as ExportStatus) : null;
  if (status === null || isTerminal(state.status)) return state;
  if (RANK[status] < RANK[state.status]) return state;
  const reported = Number.isFinite(news.progress) ? Math.min(1, Math.max(0, news.progress ?? 0)) : 0;
  const progress = status === 'done' ? 1 : Math.max(state.progress, reported);
  const next: ExportProgress = { ...state, status, progress };
  if (news.fileName) next.fileName = news.fileName;
  if (news.error) next.error = news.error;
  return next;
}

/** Whole percent for the progress bar. */
export function percent(state: ExportProgress): number {
  return Math.round(state.progress * 100);
}
