/** The comparison form's rules (docs/spec.md §5, §9: name 3–30 characters, at least one parameter) and chart data. */
import { COMPARISON_MEMBERS_MAX, type SeriesBlock } from '@kilowatch/core';
import type { MessageId } from '../../i18n/i18n.ts';

export interface MemberDraft {
  /** Row key (stable while rows are added and removed). */
  key: number;
  deviceId: number | null;
  param: string | null;
}

export interface ComparisonDraft {
  name: string;
  members: MemberDraft[];
  grouped: boolean;
}

export interface DraftErrors {
  name?: MessageId;
  members?: MessageId;
}

export const NAME_MIN = 3;
export const NAME_MAX = 30;

/** Complete device → parameter pairs, duplicates dropped. */
export function completeMembers(members: readonly MemberDraft[]): { deviceId: number; param: string }[] {
  const seen = new Set<string>();
  const out: { deviceId: number; param: string }[] = [];
  for (const m of members) {
    if (m.deviceId === null || !m.param) continue;
    const key = `${m.deviceId}:${m.param}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ deviceId: m.deviceId, param: m.param });
  }
  return out;
}

export function validateDraft(d: ComparisonDraft): DraftErrors {
  const errors: DraftErrors = {};
  const name = d.name.trim();
  if (name.length < NAME_MIN || name.length > NAME_MAX) errors.name = 'val.comparisonName';
  const members = completeMembers(d.members);
  if (members.length === 0 || members.length > COMPARISON_MEMBERS_MAX) errors.members = 'val.compareParam';
  return errors;
}

export function toRequest(d: ComparisonDraft) {
  return { name: d.name.trim(), members: completeMembers(d.members), grouped: d.grouped };
}

export interface ComparisonBlock {
  deviceId: number;
  param: string;
  deviceName: string;
  data: SeriesBlock;
}

/** Member key in a merged series (`3:eai`): unique even when two devices share a parameter. */
export const memberKey = (b: { deviceId: number; param: string }) => `${b.deviceId}:${b.param}`;

/**
 * Every member on one time axis: the union of the blocks' timestamps, each member's averages placed at
 * its own times and null elsewhere (a gap, never a made-up value).
 */
export function mergeBlocks(blocks: readonly ComparisonBlock[]): {
  t: number[];
  series: Record<string, { avg: (number | null)[]; min?: (number | null)[]; max?: (number | null)[] }>;
} {
  const times = new Set<number>();
  for (const b of blocks) for (const ts of b.data.t) times.add(ts);
  const t = [...times].sort((a, b) => a - b);
  const at = new Map(t.map((ts, i) => [ts, i]));
  const series: Record<string, { avg: (number | null)[]; min?: (number | null)[]; max?: (number | null)[] }> =
    {};
  const spread = (src: readonly (number | null)[] | undefined, b: ComparisonBlock) => {
    const out = new Array<number | null>(t.length).fill(null);
    b.data.t.forEach((ts, i) => {
      const v = src?.[i];
      out[at.get(ts)!] = v === undefined ? null : v;
    });
    return out;
  };
  for (const b of blocks) {
    const cols = b.data.series[b.param];
    series[memberKey(b)] = {
      avg: spread(cols?.avg ?? [], b),
      ...(cols?.min && cols.max ? { min: spread(cols.min, b), max: spread(cols.max, b) } : {}),
    };
  }
  return { t, series };
}
