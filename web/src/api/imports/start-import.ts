/**
 * Starts a history import (docs/api.md §History import): the picked file is the raw body. The server
 * answers once the whole file is read and written, so the screen watches the device's list meanwhile.
 */
import { ImportAcceptedSchema, type ImportFormat } from '@kilowatch/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export interface ImportRequest {
  deviceId: number;
  file: Blob;
  format: ImportFormat;
  /** JSON of core's `CsvMapping` or `LineProtocolMapping`. */
  mapping?: string;
  zone?: string;
  sourceDevice?: string;
  precision?: string;
  encoding?: string;
  /** What a reading does at a time already stored with other values (the server keeps by default). */
  onConflict?: 'keep' | 'replace';
}

export function startImport(r: ImportRequest): Promise<{ id: number }> {
  return request('POST', `/devices/${r.deviceId}/imports`, {
    query: {
      format: r.format,
      mapping: r.mapping,
      zone: r.zone,
      sourceDevice: r.sourceDevice,
      precision: r.precision,
      encoding: r.encoding,
      onConflict: r.onConflict,
    },
    text: { body: r.file, contentType: r.format === 'line-protocol' ? 'text/plain' : 'text/csv' },
    schema: ImportAcceptedSchema,
    notFoundPage: false,
  });
}

export function useStartImport() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: startImport,
    onSettled: (_d, _e, r) => void qc.invalidateQueries({ queryKey: ['imports', 'device', r.deviceId] }),
  });
}
