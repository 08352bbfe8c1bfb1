/** Device search of the dashboard (docs/spec.md §5): from 2 characters, cleared when emptied. */
import type { Device } from '@kilowatch/core';

export const SEARCH_MIN_LENGTH = 2;

/** The query that applies: below the minimum length the list is unfiltered. */
export function effectiveQuery(input: string): string {
  const q = input.trim();
  return q.length >= SEARCH_MIN_LENGTH ? q : '';
}

function fold(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{Diacritic}/gu, '')
    .toLowerCase();
}

export function searchDevices(devices: readonly Device[], query: string): Device[] {
  const q = fold(effectiveQuery(query));
  if (!q) return [...devices];
  const terms = q.split(/\s+/);
  return devices.filter((d) => {
    const hay = fold(
      [d.name, d.friendlyName, d.model, d.modelName, d.typeName, d.mac, d.location?.name, d.tariff?.name]
        .filter(Boolean)
        .join(' '),
    );
    return terms.every((t) => hay.includes(t));
  });
}
