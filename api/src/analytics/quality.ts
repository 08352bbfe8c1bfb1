/**
 * Voltage quality (DOMAIN.md §Limits, voltage quality): 10-minute means per phase from raw readings,
 * streamed with bounded memory, and the shares inside the user's bands and EN 50160's ±10 %.
 */
import { type Limits, type PhaseQuality, phaseQuality, TEN_MINUTES_MS } from '@kilowatch/core';
import type { TelemetryStore } from '@kilowatch/tsdb';
import type { DeviceContext, Range } from './context.ts';

export interface VoltageQualityAnswer {
  from: number;
  to: number;
  limits: Limits;
  phases: (PhaseQuality & { phase: 1 | 2 | 3 })[];
}

const PHASES = [1, 2, 3] as const;

export async function voltageQuality(
  store: TelemetryStore,
  ctx: DeviceContext,
  range: Range,
  limits: Limits,
): Promise<VoltageQualityAnswer> {
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
  for await (const page of store.streamRaw({
    deviceKey: ctx.deviceKey,
    from: range.from,
    to: range.to,
    params: ['vave1', 'vave2', 'vave3'],
    pageSize: 5_000,
  })) {
    for (const row of page) {
      const w = Math.floor(row.ts / TEN_MINUTES_MS);
      for (let p = 0; p < 3; p++) {
        const v = row.values[`vave${p + 1}`];
        if (v === undefined) continue;
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
