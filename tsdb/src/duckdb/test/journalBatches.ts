/** Batches of the journal tests: big ones to reach a checkpoint, and a marked one written during it. */
import type { Reading } from '@kilowatch/core';

export const JOURNAL_DEVICE = 'a0b0c0d0e0f0';
export const JOURNAL_T0 = Date.UTC(2026, 5, 1);
const MIN = 60_000;
const PER_BATCH = 5000;

const base: Record<string, number> = {};
for (const p of ['vave', 'vmin', 'vmax', 'iave', 'imin', 'imax', 'pave', 'pmin', 'pmax'])
  for (const n of [1, 2, 3]) base[`${p}${n}`] = n;

/** 5,000 readings × 27 values (~1.2 MB committed): about 14 of them reach a checkpoint. */
export function bigBatch(b: number): Reading[] {
  return Array.from({ length: PER_BATCH }, (_, i) => ({
    deviceKey: JOURNAL_DEVICE,
    ts: JOURNAL_T0 + (b * PER_BATCH + i) * MIN,
    values: { ...base, pave1: b * PER_BATCH + i },
  }));
}

/** Three readings of a second device, a year later, recognisable by their values. */
export const MARKED_DEVICE = 'f0e0d0c0b0a0';
export const marked: Reading[] = [0, 1, 2].map((i) => ({
  deviceKey: MARKED_DEVICE,
  ts: JOURNAL_T0 + 365 * 86_400_000 + i * MIN,
  values: { vave1: 231 + i, eai1: 10 + i },
}));
