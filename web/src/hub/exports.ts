/** Export progress from the live hub (docs/api.md §Real-time hub: `{type:"export", id, status, progress}`). */
import { useEffect, useRef } from 'react';
import type { HubMessage } from './hub.ts';
import { useHub } from './live.tsx';

export type ExportEvent = Extract<HubMessage, { type: 'export' }>;

/** Calls `listener` with every export event of this user while mounted (a user hears only their own jobs). */
export function useExportEvents(listener: (e: ExportEvent) => void): void {
  const hub = useHub();
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => {
    if (!hub) return;
    return hub.onMessage((m) => {
      if (m.type === 'export') latest.current(m);
    });
  }, [hub]);
}
