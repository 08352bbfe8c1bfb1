import { MAX_POINTS, MIN_POINTS } from '@kilowatch/core';
import { describe, expect, it } from 'vitest';
import { plotPoints } from './plotPoints.ts';

describe('plotPoints', () => {
  it('is the width rounded up to 64 CSS pixels, times the pixel ratio', () => {
    expect(plotPoints(1000, 1)).toBe(1024);
    expect(plotPoints(1024, 1)).toBe(1024);
    expect(plotPoints(1025, 2)).toBe(2176);
    expect(plotPoints(700, 1.5)).toBe(1056);
  });

  it('asks the same while a resize stays within a step', () => {
    const asked = new Set([961, 980, 1000, 1024].map((w) => plotPoints(w, 1)));
    expect([...asked]).toEqual([1024]);
  });

  it('stays within the range the API takes; nothing while the width is unknown', () => {
    expect(plotPoints(3, 1)).toBe(64);
    expect(plotPoints(1, 0.05)).toBe(MIN_POINTS);
    expect(plotPoints(6000, 3)).toBe(MAX_POINTS);
    expect(plotPoints(0, 2)).toBeUndefined();
    expect(plotPoints(800, Number.NaN)).toBe(832);
  });
});
