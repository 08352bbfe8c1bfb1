import { type ImportJob, ImportJobSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import * as v from 'valibot';
import { request } from '../client.ts';

/** How often a running import is polled while the screen shows it (ms). */
export const IMPORT_POLL_MS = 700;

const ImportListSchema = v.array(ImportJobSchema);

/** The device's imports, newest first (at most 100). */
export function getDeviceImports(deviceId: number, signal?: AbortSignal): Promise<ImportJob[]> {
  return request('GET', `/devices/${deviceId}/imports`, { schema: ImportListSchema, signal });
}

export const deviceImportsQueryOptions = (deviceId: number) =>
  queryOptions({
    queryKey: ['imports', 'device', deviceId],
    queryFn: ({ signal }) => getDeviceImports(deviceId, signal),
  });

/** Polled while `watching` (an upload in flight) or while one of them runs or is being undone. */
export function useDeviceImports(deviceId: number, watching: boolean) {
  return useQuery({
    ...deviceImportsQueryOptions(deviceId),
    refetchInterval: (q) =>
      watching || q.state.data?.some((j) => j.state === 'running' || j.state === 'undoing')
        ? IMPORT_POLL_MS
        : false,
  });
}

export function getImport(id: number, signal?: AbortSignal): Promise<ImportJob> {
  return request('GET', `/imports/${id}`, { schema: ImportJobSchema, signal, notFoundPage: false });
}

/** One import, polled until it has finished (the POST answers before the rollups are refreshed). */
export function useImportJob(id: number | null) {
  return useQuery({
    queryKey: ['imports', id],
    queryFn: ({ signal }) => getImport(id ?? 0, signal),
    enabled: id !== null,
    refetchInterval: (q) =>
      q.state.data?.state === 'running' || q.state.data?.state === 'undoing' ? IMPORT_POLL_MS : false,
  });
}
