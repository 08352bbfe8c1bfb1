import { describe, expect, it } from 'vitest';
import { selectWidth } from './selectWidth.ts';

describe('selectWidth', () => {
  it.each([
    [['15 min', 'Automatyczny'], 'calc(13ch + 2.75rem)'],
    [['03/01/2026 – 03/31/2026'], 'calc(24ch + 2.75rem)'],
    [['1 h'], 'calc(7ch + 2.75rem)'],
    [[], 'calc(7ch + 2.75rem)'],
    [['Çevrimiçi'], 'calc(10ch + 2.75rem)'],
  ] as const)('%j → %s', (labels, width) => {
    expect(selectWidth(labels)).toBe(width);
  });
});
