import { useComputedColorScheme } from '@mantine/core';
import type { ChartTheme } from './palette.ts';

export function useChartTheme(): ChartTheme {
  return useComputedColorScheme('light', { getInitialValueInEffect: false });
}
