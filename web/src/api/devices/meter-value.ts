import { useMutation, useQueryClient } from '@tanstack/react-query';
import { request } from '../client.ts';

export interface MeterValue {
  param: string;
  value: number;
  /** ISO instant at which the meter showed the value. */
  at: string;
}

export async function provideMeterValue(id: string, body: MeterValue): Promise<void> {
  await request('POST', `/devices/${encodeURIComponent(id)}/meter-value`, { body, notFoundPage: false });
}

export function useProvideMeterValue(id: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: MeterValue) => provideMeterValue(id, body),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['devices', id, 'energy'] }),
  });
}
