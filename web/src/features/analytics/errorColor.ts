import { useComputedColorScheme } from '@mantine/core';

/**
 * Validation text in a red that keeps 4.5:1 contrast on the theme's background (Mantine's default error
 * red is lighter), and the typed value in the normal text colour.
 */
export function useErrorStyles() {
  const scheme = useComputedColorScheme('light', { getInitialValueInEffect: false });
  const color = scheme === 'dark' ? 'var(--mantine-color-red-4)' : 'var(--mantine-color-red-9)';
  return { color, styles: { error: { color }, input: { color: 'var(--mantine-color-text)' } } };
}
