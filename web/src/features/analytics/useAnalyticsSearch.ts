import { useNavigate, useSearch } from '@tanstack/react-router';
import { useCallback } from 'react';
import type { AnalyticsSearch } from './search.ts';

/** The page's URL search parameters and a setter that merges changes (replacing the history entry). */
export function useAnalyticsSearch(): [AnalyticsSearch, (patch: Partial<AnalyticsSearch>) => void] {
  const search = useSearch({ strict: false }) as AnalyticsSearch;
  const navigate = useNavigate();
  const set = useCallback(
    (patch: Partial<AnalyticsSearch>) => {
      void navigate({
        to: '/analytics',
        search: ((prev: Record<string, unknown>) => {
          const next: Record<string, unknown> = { ...prev, ...patch };
          for (const k of Object.keys(next)) if (next[k] === undefined || next[k] === '') delete next[k];
          return next;
        }) as never,
        replace: true,
      } as never);
    },
    [navigate],
  );
  return [search, set];
}
