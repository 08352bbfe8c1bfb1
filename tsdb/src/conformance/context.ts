/** What every part of the conformance suite shares: the store under test and small helpers. */
import { randomBytes } from 'node:crypto';
import { HOUR_MS } from '@kilowatch/core';
import { expect } from 'vitest';
import type { RawRow, TelemetryStore } from '../port.ts';

export const DAY = 24 * HOUR_MS;

/** The store under test (opened before the first case) and what the cases build on. */
export interface Conformance {
  /** The store every case shares; set once the suite has opened it. */
  readonly store: TelemetryStore;
  /** Opens another store of the same engine (a case that closes one). */
  readonly open: () => Promise<TelemetryStore>;
  /** A Monday, 00:00 UTC. */
  readonly T0: number;
  /** Refreshes every rollup up to a time after all the cases' readings. */
  readonly refresh: () => Promise<unknown>;
}

export function newKey(): string {
  return randomBytes(6).toString('hex');
}

export function expectClose(
  actual: readonly (number | null)[] | undefined,
  expected: readonly (number | null)[],
): void {
  expect(actual).toBeDefined();
  expect(actual!.length).toBe(expected.length);
  actual!.forEach((v, i) => {
    const e = expected[i];
    if (e === null || e === undefined) expect(v, `bucket ${i}`).toBeNull();
    else {
      expect(v, `bucket ${i}`).not.toBeNull();
      expect(v!, `bucket ${i}`).toBeCloseTo(e, 9);
    }
  });
}

export async function collect(it: AsyncIterable<RawRow[]>): Promise<RawRow[][]> {
  const pages: RawRow[][] = [];
  for await (const p of it) pages.push(p);
  return pages;
}

/** Deterministic pseudo-random numbers (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
