/**
 * Voltage quality (docs/domain.md §Limits, voltage quality): 10-minute means per phase from raw readings,
 * read a week at a time with bounded memory, and the shares inside the user's bands and EN 50160's ±10 %.
 */
import {
  type Limits,
  type PhaseQuality,
  phaseQuality,
  TEN_MINUTES_MS,
  VOLTAGE_QUALITY_MAX_MS,
} from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import { type DeviceContext, type Range, rangeTooLong } from './context.ts';

export interface VoltageQualityAnswer {
  from: number;
  to: number;
  limits: Limits;
  phases: (PhaseQuality & { phase: 1 | 2 | 3 })[];
}

const PHASES = [1, 2, 3] as const;

/** Raw readings read per query. */
const CHUNK_MS = 7 * 86_400_000;

export async function voltageQuality(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
  limits: Limits,
): Promise<VoltageQualityAnswer> {
  // At most 100,000 ten-minute windows per phase (docs/api.md §Conventions): about 694 days, 100 weekly reads.
  if (range.to - range.from > VOLTAGE_QUALITY_MAX_MS) throw rangeTooLong();
  // Running 10-minute windows per phase: only the means are kept, never the raw samples.
  const means: number[][] = [[], [], []];
  const win = [Number.NaN, Number.NaN, Number.NaN];
  const sum = [0, 0, 0];
  const n = [0, 0, 0];
  const close = (p: number) => {
    if (n[p]! > 0) means[p]!.push(sum[p]! / n[p]!);
    sum[p] = 0;
    n[p] = 0;
  };
  // A week at a time, as columns (one query each, no object per reading): memory stays bounded for a
  // year's range and the windows run on across the weeks.
  for (let start = range.from; start < range.to; start += CHUNK_MS) {
    const s = await store.series({
      deviceKey: ctx.deviceKey,
      params: ['vave1', 'vave2', 'vave3'],
      from: start,
      to: Math.min(start + CHUNK_MS, range.to),
      interval: 'raw',
      stats: ['avg'],
      tz: ctx.tz,
    });
    for (let p = 0; p < 3; p++) {
      const col = s.series[`vave${p + 1}`]?.avg ?? [];
      for (let i = 0; i < s.t.length; i++) {
        const v = col[i];
        if (v === null || v === undefined) continue;
        const w = Math.floor(s.t[i]! / TEN_MINUTES_MS);
        if (w !== win[p]) {
          close(p);
          win[p] = w;
        }
        sum[p]! += v;
        n[p]!++;
      }
    }
  }
  for (let p = 0; p < 3; p++) close(p);
  const reported = PHASES.filter((_, i) => means[i]!.length > 0 || ctx.device.phases === 3 || i === 0);
  return {
    from: range.from,
    to: range.to,
    limits,
    phases: reported.map((phase) => ({ phase, ...phaseQuality(means[phase - 1]!, limits) })),
  };
}
