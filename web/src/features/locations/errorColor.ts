import { useComputedColorScheme } from '@mantine/core';
import type { CSSProperties } from 'react';

/** Field-error text with AA contrast on the card background in both schemes (Mantine's red is lighter). */
export function useErrorColor(): CSSProperties {
  const scheme = useComputedColorScheme('light', { getInitialValueInEffect: false });
  return {
    '--mantine-color-error': scheme === 'dark' ? 'var(--mantine-color-red-4)' : 'var(--mantine-color-red-9)',
  } as CSSProperties;
}
