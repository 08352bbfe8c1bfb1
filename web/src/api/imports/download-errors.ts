/** Downloads an import's row errors (`GET /api/imports/:id/errors.csv`) with the session's token. */
import { ErrorBodySchema } from '@kilowatch/core';
import * as v from 'valibot';
import { getSession } from '../../auth/session.ts';
import { fileNameFromDisposition } from '../../shared/export/fileName.ts';
import { ApiError, MESSAGES, renewAfterUnauthorized } from '../client.ts';
import type { DownloadedFile } from '../exports/download-export.ts';

async function get(id: number, token: string | null): Promise<Response> {
  try {
    return await fetch(`/api/imports/${id}/errors.csv`, {
      headers: token ? { Authorization: `Bearer ${token}` } : {},
      credentials: 'include',
    });
  } catch {
    throw new ApiError(MESSAGES.network, 0);
  }
}

export async function downloadImportErrors(id: number): Promise<DownloadedFile> {
  const sentWith = getSession().token;
  let res = await get(id, sentWith);
  if (res.status === 401 && (await renewAfterUnauthorized(sentWith))) res = await get(id, getSession().token);
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
  const fallback = `import-${id}-errors.csv`;
  return { blob, fileName: fileNameFromDisposition(res.headers.get('Content-Disposition'), fallback) };
}
