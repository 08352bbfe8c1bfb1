import { type ExportJob, ExportJobSchema } from '@kilowatch/core';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { request } from '../client.ts';

/** How often a running job is polled when hub events do not arrive (ms). */
export const EXPORT_POLL_MS = 2_000;

export function getExport(id: number, signal?: AbortSignal): Promise<ExportJob> {
  return request('GET', `/exports/${id}`, { schema: ExportJobSchema, signal, notFoundPage: false });
}

export const exportQueryOptions = (id: number) =>
  queryOptions({
    queryKey: ['exports', id],
    queryFn: ({ signal }) => getExport(id, signal),
    refetchInterval: (q) =>
      q.state.data?.status === 'done' || q.state.data?.status === 'failed' ? false : EXPORT_POLL_MS,
  });

/** Polls the job until it is done or failed (the fallback when the hub is not connected). */
export function useExportJob(id: number | null) {
  return useQuery({ ...exportQueryOptions(id ?? 0), enabled: id !== null });
}
