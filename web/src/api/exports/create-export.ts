import { ExportAcceptedSchema, type ExportRequest } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export function createExport(body: ExportRequest): Promise<{ id: number; status: 'queued' }> {
  return request('POST', '/exports', { body, schema: ExportAcceptedSchema });
}

export function useCreateExport() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: createExport,
    onSuccess: () => void qc.invalidateQueries({ queryKey: ['exports'], exact: true }),
  });
}
