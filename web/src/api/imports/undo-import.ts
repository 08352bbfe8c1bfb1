import { type ImportJob, ImportJobSchema } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

/** Undoes an import: 200 in state `undone`, or 409 with the server's reason. */
export function undoImport(id: number): Promise<ImportJob> {
  return request('DELETE', `/imports/${id}`, { schema: ImportJobSchema, notFoundPage: false });
}

export function useUndoImport() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: undoImport,
    // The device's list and the shown import's own record both change.
    onSettled: () => void qc.invalidateQueries({ queryKey: ['imports'] }),
  });
}
