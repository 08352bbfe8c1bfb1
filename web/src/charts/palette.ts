/** Colours chosen to read on both the light and the dark background. */
export type ChartTheme = 'light' | 'dark';

export const PHASE_COLORS = ['#f76707', '#1c7ed6', '#2f9e44'] as const;
export const SERIES_COLORS = ['#f76707', '#1c7ed6', '#2f9e44', '#ae3ec9', '#e8590c', '#0c8599'] as const;
export const ENERGY_COLORS = { import: '#f76707', export: '#2f9e44', balance: '#1c7ed6' } as const;
export const LIMIT_COLORS = { warning: '#f59f00', critical: '#e03131' } as const;

export const AXIS_COLORS: Record<ChartTheme, { stroke: string; grid: string }> = {
  light: { stroke: '#495057', grid: 'rgba(0, 0, 0, 0.08)' },
  dark: { stroke: '#c1c2c5', grid: 'rgba(255, 255, 255, 0.09)' },
};

/** `#rrggbb` with an alpha, for band fills. */
export function withAlpha(hex: string, alpha: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${alpha})`;
}
