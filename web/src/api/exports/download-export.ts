/**
 * Downloads a finished export (docs/api.md §Exports): a POST with a binary answer and a two-hour time-out
 * (docs/spec.md §7, §9), saved through an object URL and a click, named after its Content-Disposition.
 */
import { ErrorBodySchema } from '@kilowatch/core';
import * as v from 'valibot';
import { getSession } from '../../auth/session.ts';
import { fileNameFromDisposition } from '../../shared/export/fileName.ts';
import { ApiError, MESSAGES, renewAfterUnauthorized } from '../client.ts';

export const DOWNLOAD_TIMEOUT_MS = 7_200_000;

export interface DownloadedFile {
  blob: Blob;
  fileName: string;
}

async function post(id: number, token: string | null, signal: AbortSignal): Promise<Response> {
  try {
    return await fetch(`/api/exports/${id}/download`, {
      method: 'POST',
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      credentials: 'include',
      signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(MESSAGES.network, 0);
  }
}

export async function downloadExport(id: number, fallbackName: string): Promise<DownloadedFile> {
  const signal = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  const sentWith = getSession().token;
  let res = await post(id, sentWith, signal);
  if (res.status === 401 && (await renewAfterUnauthorized(sentWith))) {
    res = await post(id, getSession().token, signal);
  }
  if (!res.ok) {
    let message: string = res.status >= 500 ? MESSAGES.internal : `${res.status} ${res.statusText}`;
    try {
      const body = v.safeParse(ErrorBodySchema, await res.json());
      if (body.success && body.output.message) message = body.output.message;
    } catch {
      // Not JSON: the status line says enough.
    }
    throw new ApiError(message, res.status);
  }
  const blob = await res.blob();
  return { blob, fileName: fileNameFromDisposition(res.headers.get('Content-Disposition'), fallbackName) };
}

/** Hands the file to the browser: an object URL, a click on a temporary link, then the URL is released. */
export function saveFile({ blob, fileName }: DownloadedFile): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
