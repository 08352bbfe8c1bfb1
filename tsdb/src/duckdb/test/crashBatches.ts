import type { Reading } from '@kilowatch/core';

export const CRASH_T0 = Date.UTC(2026, 4, 4);
const MIN = 60_000;
export const CRASH_DEVICES = ['c0a5e0000001', 'c0a5e0000002'] as const;
const [a, b] = CRASH_DEVICES;

/**
 * A device's first batch, batches after it (the path that keeps newest values in memory only), a
 * parameter first reported late in the stream, and a late batch before a device's newest reading.
 */
export const crashBatches: Reading[][] = [
  Array.from({ length: 10 }, (_, i) => ({
    deviceKey: a,
    ts: CRASH_T0 + i * MIN,
    values: { vave1: 230 + i, eai1: i },
  })),
  Array.from({ length: 10 }, (_, i) => ({
    deviceKey: a,
    ts: CRASH_T0 + (10 + i) * MIN,
    values: { vave1: 240 + i, eai1: 10 + i },
  })),
  [
    { deviceKey: a, ts: CRASH_T0 + 20 * MIN, values: { vave1: 250, eai1: 20, tempmain: 21.5 } },
    { deviceKey: b, ts: CRASH_T0 + 5 * MIN, values: { vave1: 229 } },
  ],
  [{ deviceKey: b, ts: CRASH_T0 + 6 * MIN, values: { vave1: 228 } }],
  // Late: before device a's newest reading, and not its newest value of anything.
  [{ deviceKey: a, ts: CRASH_T0 + 3 * MIN, values: { vave1: 200 } }],
  [{ deviceKey: a, ts: CRASH_T0 + 21 * MIN, values: { eai1: 21 } }],
];
